// The state of a file that is deleted or moved rather than rewritten: its version (hashed as a stream, so
// no size limit applies).
import { createHash } from 'node:crypto';
import { constants as C, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import { ToolError, type VersionStamp } from '../envelope.js';
import { describeKind, type ResolvedPath } from './sandbox.js';
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
  if (p.missing.length > 0) return null;
  // Special files are refused before any open: a socket cannot be opened (ENXIO), a device open may act.
  const pre = await fs.lstat(p.at).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (!pre) return null;
  if (!pre.isFile() && !pre.isDirectory() && !pre.isSymbolicLink()) throw new ToolError('NOT_REGULAR_FILE', `Not a regular file (${describeKind(pre)}): ${p.rel}`);
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(p.at, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new ToolError('ACCESS_DENIED', `Path '${p.rel}' changed to a symbolic link; resolve it again.`);
    if (code === 'EISDIR') throw new ToolError('IS_DIRECTORY', `Path is a directory: ${p.rel}`);
    if (code === 'ENXIO') throw new ToolError('NOT_REGULAR_FILE', `Not a regular file: ${p.rel}`);
    throw err;
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new ToolError('IS_DIRECTORY', `Path is a directory: ${p.rel}`);
    if (!st.isFile()) throw new ToolError('NOT_REGULAR_FILE', `Not a regular file (${describeKind(st)}): ${p.rel}`);
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, st.size)));
    let pos = 0;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
    return { stat: st, version: versionOf(st, hash.digest('hex')) };
  } finally {
    await fh.close();
  }
}
