// The workspace sandbox (SPEC §2): every tool path is checked lexically, then walked segment by segment
// on the real file system, so no symlink, `..` or swap can lead a tool outside the workspace root.
import { closeSync, fstatSync, lstatSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';
import { ToolError } from '../envelope.js';
import { openNoFollow } from './small-io.js';
import { isInside, type Workspace } from './workspace.js';

export const MAX_PATH_BYTES = 4096;
export const MAX_SEGMENT_BYTES = 255;
const MAX_SYMLINK_HOPS = 40;
/** Temp files of atomic writes carry this marker; tools never see them. */
export const TEMP_MARKER = '.toolgate-tmp-';

export interface ResolveOptions {
  /** The path may be the workspace root itself ('.'). */
  allowRoot?: boolean;
}

export interface ResolvedPath {
  ws: Workspace;
  /** Normalized relative POSIX path as the caller named it ('.' for the root). */
  rel: string;
  /** Real absolute path the operation acts on (symlinks inside the workspace followed). */
  real: string;
  /** Relative POSIX path of `real` from the root. */
  realRel: string;
  /** lstat of `real` when it exists (never a symlink), otherwise null. */
  stat: Stats | null;
  /** The name the caller gave was a symlink (inside the workspace). */
  viaSymlink: boolean;
}

const outside = () => new ToolError('ACCESS_DENIED', 'Path must be within project root.');
const reserved = () => new ToolError('ACCESS_DENIED', 'Path is reserved for the service and cannot be accessed.');

/** Lexical checks and normalization; returns the segments of a relative path ([] = root). */
export function normalizeToolPath(ws: Workspace, input: string): string[] {
  if (typeof input !== 'string') throw new ToolError('INVALID_PARAM', 'Path must be a string.');
  if (input.length === 0) throw new ToolError('INVALID_PARAM', 'Path must not be empty; use "." for the workspace root.');
  if (input.includes('\0')) throw new ToolError('INVALID_PARAM', 'Path must not contain NUL bytes.');
  if (input.includes('\\')) throw new ToolError('INVALID_PARAM', 'Path must use forward slashes (/); backslashes are not allowed.');
  if (Buffer.byteLength(input) > MAX_PATH_BYTES) throw new ToolError('INVALID_PARAM', `Path is longer than ${MAX_PATH_BYTES} bytes.`);
  let rest = input;
  if (input.startsWith('/')) {
    if (!ws.allowAbsolute) throw new ToolError('INVALID_PARAM', 'Absolute path not allowed. Use relative path.');
    const abs = path.posix.normalize(input);
    const base = ws.root;
    if (!isInside(base, abs)) throw outside();
    rest = abs === base ? '.' : abs.slice(base.length + 1);
  }
  const segments: string[] = [];
  for (const seg of rest.split('/')) {
    if (Buffer.byteLength(seg) > MAX_SEGMENT_BYTES) throw new ToolError('INVALID_PARAM', `A path segment is longer than ${MAX_SEGMENT_BYTES} bytes.`);
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (segments.length === 0) throw outside();
      segments.pop();
      continue;
    }
    segments.push(seg);
  }
  return segments;
}

export function relOf(segments: string[]): string {
  return segments.length === 0 ? '.' : segments.join('/');
}

/** True when a relative path names the state directory, something inside it, or a temp file. */
function isReservedReal(ws: Workspace, real: string): boolean {
  if (isInside(ws.stateDir, real)) return true;
  return path.basename(real).includes(TEMP_MARKER);
}

/**
 * Resolves a tool path inside the workspace. Follows symlinks one segment at a time
 * (like realpath), refusing any that end outside the root; a path that does not exist
 * resolves to its deepest existing real ancestor plus the missing segments.
 */
export async function resolveInWorkspace(ws: Workspace, input: string, opts: ResolveOptions = {}): Promise<ResolvedPath> {
  const segments = normalizeToolPath(ws, input);
  const rel = relOf(segments);
  if (segments.length === 0 && !opts.allowRoot) throw new ToolError('INVALID_PARAM', 'Path must name a file inside the workspace, not the root itself.');

  let cur = ws.root;
  const pending = [...segments];
  let hops = 0;
  let stat: Stats | null = null;
  let viaSymlink = false;
  let missing: string[] | null = null;
  if (segments.length === 0) stat = lstatSync(cur);
  while (pending.length > 0) {
    const seg = pending.shift() as string;
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      cur = path.dirname(cur);
      stat = null; // the stat of the directory left behind; looked up again below
      continue;
    }
    const next = path.join(cur, seg);
    let st: Stats;
    try {
      st = lstatSync(next);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        // The kernel fails `missing/..` with ENOENT, but resolving the rest lexically would skip the
        // missing segment and could end on a symlink below an existing directory (a symlink target
        // like 'ghost/../linkdir/x' where linkdir leads outside): refuse instead of guessing.
        if (pending.includes('..')) throw new ToolError('NOT_FOUND', `File not found: ${rel} (a symbolic link on the way names a missing directory).`);
        missing = [seg, ...pending];
        cur = next;
        break;
      }
      if (code === 'ENOTDIR') throw new ToolError('NOT_A_DIRECTORY', `A parent of '${rel}' is not a directory.`);
      if (code === 'EACCES' || code === 'EPERM') throw new ToolError('PERMISSION_DENIED', `Permission denied: ${rel}`);
      if (code === 'ENAMETOOLONG') throw new ToolError('INVALID_PARAM', 'Path is too long.');
      throw err;
    }
    if (st.isSymbolicLink()) {
      if (++hops > MAX_SYMLINK_HOPS) throw new ToolError('ACCESS_DENIED', 'Too many levels of symbolic links.');
      viaSymlink = true;
      const target = readlinkSync(next);
      if (path.isAbsolute(target)) cur = path.parse(target).root;
      pending.unshift(...target.split('/'));
      continue;
    }
    if (pending.some((p) => p !== '' && p !== '.') && !st.isDirectory()) {
      // A later segment would need this one to be a directory; '..' after a file is also refused.
      throw new ToolError('NOT_A_DIRECTORY', `A parent of '${rel}' is not a directory.`);
    }
    cur = next;
    stat = st;
  }
  // Intermediate '..' from symlink targets may have walked anywhere; only the end result counts,
  // and it must be inside the real root on whole segments.
  const real = missing ? path.resolve(cur, ...missing.slice(1)) : cur;
  if (!isInside(ws.root, real)) throw outside();
  if (isReservedReal(ws, real) || (segments.length > 0 && isReservedName(ws, segments))) throw reserved();
  if (missing) stat = null;
  // A symlink ending in '.' or '..' (e.g. one to the root) leaves no stat of the final directory: take it now.
  else if (stat === null) stat = lstatSync(real);
  return { ws, rel, real, realRel: toPosixRel(ws.root, real), stat, viaSymlink };
}

function isReservedName(ws: Workspace, segments: string[]): boolean {
  const lexical = path.join(ws.root, ...segments);
  return isInside(ws.stateDir, lexical) || segments.some((s) => s.includes(TEMP_MARKER));
}

export function toPosixRel(root: string, abs: string): string {
  const r = path.relative(root, abs);
  return r === '' ? '.' : r.split(path.sep).join('/');
}

/** Kind of a non-regular object, for NOT_REGULAR_FILE messages. */
export function describeKind(st: Stats): string {
  if (st.isDirectory()) return 'directory';
  if (st.isFIFO()) return 'FIFO';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'device';
  if (st.isSymbolicLink()) return 'symbolic link';
  return 'file';
}

/** Requires an existing regular file: NOT_FOUND, IS_DIRECTORY or NOT_REGULAR_FILE otherwise. */
export function requireFile(p: ResolvedPath): Stats {
  if (!p.stat) throw new ToolError('NOT_FOUND', `File not found: ${p.rel}`);
  if (p.stat.isDirectory()) throw new ToolError('IS_DIRECTORY', `Path is a directory: ${p.rel}`);
  if (!p.stat.isFile()) throw new ToolError('NOT_REGULAR_FILE', `Not a regular file (${describeKind(p.stat)}): ${p.rel}`);
  return p.stat;
}

export function requireDirectory(p: ResolvedPath): Stats {
  if (!p.stat) throw new ToolError('NOT_FOUND', `Directory not found: ${p.rel}`);
  if (!p.stat.isDirectory()) throw new ToolError('NOT_A_DIRECTORY', `Not a directory: ${p.rel}`);
  return p.stat;
}

/** An open file descriptor and its fstat, checked to be the file the sandbox resolved. */
export interface VerifiedFile {
  fd: number;
  stat: Stats;
}

/**
 * Opens a resolved regular file for reading without following a symlink at the leaf and without
 * blocking on a FIFO, then checks that the opened object is the one the sandbox checked (device/inode).
 * The caller closes `fd` (closeSync).
 */
export function openVerified(p: ResolvedPath): VerifiedFile {
  const expected = requireFile(p);
  let fd: number;
  try {
    fd = openNoFollow(p.real);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new ToolError('ACCESS_DENIED', 'Path changed to a symbolic link while it was being opened; retry.');
    if (code === 'ENOENT') throw new ToolError('NOT_FOUND', `File not found: ${p.rel}`);
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (st.dev !== expected.dev || st.ino !== expected.ino) {
      throw new ToolError('CONFLICT', `File '${p.rel}' was replaced while it was being opened; read it again.`);
    }
    if (!st.isFile()) throw new ToolError('NOT_REGULAR_FILE', `Not a regular file (${describeKind(st)}): ${p.rel}`);
    return { fd, stat: st };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * openVerified, resolving again when an atomic write renamed a new file over the path between the check
 * and the open (the new file is checked in turn): a reader racing the service's own writes sees the old or
 * the new content, never a CONFLICT.
 */
export async function openVerifiedRetrying(first: ResolvedPath, resolveAgain: () => Promise<ResolvedPath>): Promise<{ p: ResolvedPath } & VerifiedFile> {
  let p = first;
  for (let attempt = 1; ; attempt++) {
    try {
      return { p, ...openVerified(p) };
    } catch (err) {
      if (!(err instanceof ToolError && err.code === 'CONFLICT') || attempt >= 5) throw err;
    }
    p = await resolveAgain();
  }
}
