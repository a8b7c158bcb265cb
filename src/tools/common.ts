// Schemas and steps shared by several tools: path and version arguments, reading the current
// state of a file under its lock, and the version rules of SPEC §4.
import { closeSync, fstatSync, lstatSync, type Stats } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolError, type VersionStamp } from '../envelope.js';
import { commitTempFile, discardTempFile, writeTempFile, type AtomicWriteOptions, type FileContent } from '../workspace/atomic.js';
import { createMissingParents, describeKind, type ResolvedPath } from '../workspace/sandbox.js';
import { openNoFollow, readAll } from '../workspace/small-io.js';
import { checkExpectations, hasVersion, sha256Hex, versionOf, type Expectations } from '../workspace/versions.js';
import type { Workspace } from '../workspace/workspace.js';
import type { ToolContext } from './define.js';

export const PathArg = z.string().describe('Path relative to the workspace root (POSIX, e.g. "src/main.py").');
export const OptionalDirArg = z.string().default('.').describe('Directory relative to the workspace root; "." is the root.');
export const DryRunArg = z.boolean().default(false).describe('Compute everything and return the diff, but write nothing.');

export const VersionArgs = {
  expected_mtime_ms: z.number().nonnegative().optional().describe('mtime_ms of the version you read; CONFLICT when the file changed. A version only together with expected_size_bytes.'),
  expected_size_bytes: z.number().int().nonnegative().optional().describe('size_bytes of the version you read. A version only together with expected_mtime_ms.'),
  expected_sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be a sha256 hex digest').optional().describe('sha256 of the version you read.'),
};

export const VersionSchema = z
  .object({
    mtime_ms: z.number(),
    size_bytes: z.number().int(),
    sha256: z.string().nullable().describe('null only for files read by line range above the whole-read limit'),
  })
  .describe('Version of the file: pass it back as expected_* (or If-Match: "<sha256>") to guard a change.')
  .meta({ id: 'Version' });

export const DiffFields = {
  diff_preview: z.string().describe('Unified diff, cut at 100 lines or 10 KiB.'),
  diff_truncated: z.boolean(),
  lines_added: z.number().int().describe('Lines added by the whole change (exact even when the preview is cut).'),
  lines_removed: z.number().int(),
};

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
  // A missing parent means no file (and its name through the missing segments must not be looked up).
  if (p.missing.length > 0) return null;
  let st: Stats;
  try {
    st = lstatSync(p.at);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (st.isSymbolicLink()) throw new ToolError('ACCESS_DENIED', `Path '${p.rel}' changed to a symbolic link; resolve it again.`);
  if (st.isDirectory()) throw new ToolError('IS_DIRECTORY', `Path is a directory: ${p.rel}`);
  if (!st.isFile()) throw new ToolError('NOT_REGULAR_FILE', `Not a regular file (${describeKind(st)}): ${p.rel}`);
  if (st.size > maxBytes) {
    throw new ToolError('FILE_TOO_LARGE', `File '${p.rel}' is ${st.size} bytes, over ${limitName} (${maxBytes}); change it with a smaller tool call or raise the limit.`);
  }
  let fd: number;
  try {
    fd = openNoFollow(p.at);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new ToolError('ACCESS_DENIED', `Path '${p.rel}' changed to a symbolic link; resolve it again.`);
    throw err;
  }
  try {
    const fst = fstatSync(fd);
    if (!fst.isFile()) throw new ToolError('NOT_REGULAR_FILE', `Not a regular file (${describeKind(fst)}): ${p.rel}`);
    return { content: await readAll(fd, fst.size, opts.onChunk, opts.alloc), stat: fst };
  } finally {
    closeSync(fd);
  }
}

/** Expectations of a call: its expected_* arguments plus the transport's If-Match. */
export function expectationsOf(ctx: ToolContext, input: Expectations): Expectations {
  return {
    expected_mtime_ms: input.expected_mtime_ms,
    expected_size_bytes: input.expected_size_bytes,
    expected_sha256: input.expected_sha256,
    if_match: ctx.ifMatch,
  };
}

/**
 * The version rules (SPEC §4), checked under the lock: every given expectation must hold, and
 * TOOLGATE_REQUIRE_VERSION decides whether changing an existing file needs one at all.
 */
export function enforceVersion(ctx: ToolContext, p: ResolvedPath, current: CurrentFile | null, input: Expectations, kind: 'overwrite' | 'mutation'): void {
  const e = expectationsOf(ctx, input);
  checkExpectations(p.rel, current?.version ?? null, e);
  if (!current || hasVersion(e)) return;
  const mode = ctx.ws.requireVersion;
  if (mode === 'always' || (mode === 'overwrite' && kind === 'overwrite')) {
    throw new ToolError(
      'VERSION_REQUIRED',
      `File '${p.rel}' already exists: read it first and pass its version, either expected_sha256 (or If-Match: "<sha256>") or expected_mtime_ms and expected_size_bytes together; a size or mtime alone, or If-Match: *, is not a version.`,
      {
        current: current.version,
      },
    );
  }
}

/**
 * writeFileAtomic for a tool call: the rename over the target happens only if the call was not stopped
 * (time limit, client gone) while the temp file was written, so a call answered TIMEOUT changed nothing.
 */
export async function writeUnlessStopped(ctx: ToolContext, ws: Workspace, target: string, data: FileContent, opts: AtomicWriteOptions = {}): Promise<Stats> {
  const temp = await writeTempFile(ws, data, opts);
  if (ctx.signal.aborted) {
    discardTempFile(temp);
    ctx.signal.throwIfAborted();
  }
  return commitTempFile(temp, target);
}

/**
 * Creates the missing parent directories of a resolved path through the verified parent's handle (or, on a
 * dry run, only checks they could be); returns the first one created (relative, with '/'), or null.
 */
export function ensureParent(ctx: ToolContext, p: ResolvedPath, createDirs: boolean, dryRun = false): string | null {
  if (p.missing.length === 0) return null;
  const relParent = path.posix.dirname(p.realRel);
  if (!createDirs) throw new ToolError('PARENT_NOT_FOUND', `Parent directory does not exist: ${relParent}`);
  if (dryRun) return null;
  return createMissingParents(p, ctx.handles);
}
