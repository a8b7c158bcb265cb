// Reading a file's current state under its lock, the version rules (docs/api.md, "Versions"), and creating
// a new file's missing parents: the file-access steps several tools share.
import { closeSync, readSync, type Stats } from 'node:fs';
import path from 'node:path';
import { ToolError, type VersionStamp } from '../envelope.js';
import { E } from '../errors.js';
import { createMissingParents, openRegular, type ResolvedPath } from '../workspace/sandbox.js';
import { readAll } from '../workspace/sync-first-io.js';
import { checkExpectations, hasVersion, sha256Hex, versionOf, type Expectations } from '../workspace/versions.js';
import { findBackupBySha256 } from '../workspace/backups.js';
import { looksBinary } from '../workspace/encoding.js';
import { diffWhole } from '../edit/diff.js';
import type { ToolContext } from './define.js';

/** Current state of a file read under its lock: content, stat and version; null when it does not exist. */
export interface CurrentFile {
  content: Buffer;
  stat: Stats;
  version: VersionStamp;
}

/** A file's content and stat, before its version is computed. */
export type CurrentBytes = Omit<CurrentFile, 'version'>;

/** Reads the file at a resolved path freshly (under the caller's lock), refusing swaps to symlinks and non-regular files. */
export async function readCurrent(p: ResolvedPath, maxBytes: number, limitName = 'TOOLGATE_MAX_EDIT_BYTES'): Promise<CurrentFile | null> {
  const file = await readCurrentBytes(p, maxBytes, { limitName });
  return file && { ...file, version: versionOf(file.stat, sha256Hex(file.content)) };
}

export interface ReadBytesOptions {
  /** The setting named in FILE_TOO_LARGE. */
  limitName?: string;
  /** Sees every piece of the content in order while the next is being read (to hash it meanwhile). */
  onChunk?: (chunk: Buffer) => void;
  /** Where the content's buffer comes from (a pool the caller gives it back to). */
  alloc?: (size: number) => Buffer;
}

/**
 * readCurrent without the version: for callers that hash the content themselves, as it is read (edit_file
 * also shares work between the old and the new hash).
 */
export async function readCurrentBytes(p: ResolvedPath, maxBytes: number, opts: ReadBytesOptions = {}): Promise<CurrentBytes | null> {
  const limitName = opts.limitName ?? 'TOOLGATE_MAX_EDIT_BYTES';
  const file = openRegular(p);
  if (!file) return null;
  try {
    if (file.stat.size > maxBytes) {
      throw E.fileOverLimit(p.rel, file.stat.size, limitName, maxBytes);
    }
    return { content: await readAll(file.fd, file.stat.size, opts.onChunk, opts.alloc), stat: file.stat };
  } finally {
    closeSync(file.fd);
  }
}

/** The first `maxBytes` bytes of a file (what a delete shows of the content that goes) and its size; null when absent. */
export function readHead(p: ResolvedPath, maxBytes: number): { head: Buffer; size: number } | null {
  const file = openRegular(p);
  if (!file) return null;
  try {
    const buf = Buffer.alloc(Math.min(maxBytes, file.stat.size));
    let n = 0;
    while (n < buf.length) {
      const got = readSync(file.fd, buf, n, buf.length - n, n);
      if (got === 0) break;
      n += got;
    }
    return { head: buf.subarray(0, n), size: file.stat.size };
  } finally {
    closeSync(file.fd);
  }
}

/** Expectations of a call: its expected_* arguments plus the transport's If-Match. */
export function expectationsOf(ctx: ToolContext, input: Expectations): Expectations {
  return {
    expected_mtime_ms: input.expected_mtime_ms,
    expected_size_bytes: input.expected_size_bytes,
    expected_sha256: input.expected_sha256,
    version_match: ctx.expectedVersion,
  };
}

/**
 * The version rules (docs/api.md, "Versions"), checked under the lock: every given expectation must hold, and
 * TOOLGATE_REQUIRE_VERSION decides whether changing an existing file needs one at all.
 */
export function enforceVersion(ctx: ToolContext, p: ResolvedPath, current: CurrentFile | null, input: Expectations, kind: 'overwrite' | 'mutation'): void {
  const e = expectationsOf(ctx, input);
  try {
    checkExpectations(p.rel, current?.version ?? null, e);
  } catch (err) {
    throw withDiffSinceYourVersion(err, p, current, e);
  }
  if (!current || hasVersion(e)) return;
  const mode = ctx.ws.requireVersion;
  if (mode === 'always' || (mode === 'overwrite' && kind === 'overwrite')) {
    throw E.versionRequired(p.rel, current.version);
  }
}

/**
 * A CONFLICT over a sha256 the backups still hold gets the diff from that version to the current one
 * (`details.diff_since_your_version`, cut like every diff preview): the caller sees what changed instead of
 * retrying blindly with the new sha256.
 */
function withDiffSinceYourVersion(err: unknown, p: ResolvedPath, current: CurrentFile | null, e: Expectations): unknown {
  if (!(err instanceof ToolError) || err.code !== 'CONFLICT' || !current) return err;
  // Only callers that read the whole content (delete and move pass a version without it).
  if (current.content.length !== current.version.size_bytes) return err;
  const expected = e.expected_sha256?.toLowerCase() ?? e.version_match?.tags[0];
  if (!expected || expected === current.version.sha256) return err;
  const old = findBackupBySha256(p.ws, p.realRel, expected, p.ws.limits.maxEditBytes);
  if (!old || looksBinary(old.content) || looksBinary(current.content)) return err;
  const diff = diffWhole(p.rel, old.content.toString('utf8'), current.content.toString('utf8'));
  return E.conflictWithDiff(err.message, err.details, diff.diff_preview, diff.diff_truncated);
}

/**
 * Creates the missing parent directories of a resolved path through the verified parent's handle (or, on a
 * dry run, only checks they could be); returns the first one created (relative, with '/'), or null.
 */
export function ensureParent(ctx: ToolContext, p: ResolvedPath, createDirs: boolean, dryRun = false): string | null {
  if (p.missing.length === 0) return null;
  const relParent = path.posix.dirname(p.realRel);
  if (!createDirs) throw E.parentNotFound(relParent);
  if (dryRun) return null;
  return createMissingParents(p, ctx.handles);
}
