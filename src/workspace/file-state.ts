// The state of a file that is deleted or moved rather than rewritten: its version (hashed as a stream, so
// no size limit applies).
import { createHash } from 'node:crypto';
import { closeSync, type Stats } from 'node:fs';
import type { VersionStamp } from '../envelope.js';
import { openRegular, type ResolvedPath } from './sandbox.js';
import { readAt } from './sync-first-io.js';
import { versionOf } from './versions.js';

const CHUNK = 1024 * 1024;

export interface FileState {
  stat: Stats;
  version: VersionStamp;
}

/**
 * Version of the regular file at a resolved path, read freshly (call it under the file's lock); null when
 * it does not exist. Refuses a leaf that turned into a symlink, a directory or a special file.
 */
export async function fileState(p: ResolvedPath, signal?: AbortSignal): Promise<FileState | null> {
  const file = openRegular(p);
  if (!file) return null;
  try {
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, file.stat.size)));
    let pos = 0;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const bytesRead = await readAt(file.fd, buf, buf.length, pos);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
    return { stat: file.stat, version: versionOf(file.stat, hash.digest('hex')) };
  } finally {
    closeSync(file.fd);
  }
}
