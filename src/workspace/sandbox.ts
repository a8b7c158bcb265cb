// The workspace sandbox (docs/api.md, "Sandbox"): every tool path is checked lexically, then walked segment by segment
// on the real file system, so no symlink, `..` or swap can lead a tool outside the workspace root.
import { closeSync, fstatSync, lstatSync, mkdirSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';
import { E, ToolError } from '../errors.js';
import { openDirHandle, openNoFollow } from './sync-first-io.js';
import { isInside, type Workspace } from './workspace.js';

export const MAX_PATH_BYTES = 4096;
export const MAX_SEGMENT_BYTES = 255;
const MAX_SYMLINK_HOPS = 40;
/** Temp files of atomic writes carry this marker; tools never see them. */
export const TEMP_MARKER = '.toolgate-tmp-';

const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/|^file:\//i;

/** Lexical checks and normalization; returns the segments of a relative path ([] = root). */
export function normalizeToolPath(ws: Workspace, input: string): string[] {
  if (typeof input !== 'string') throw E.pathNotString();
  if (input.length === 0) throw E.pathEmpty();
  if (input.includes('\0')) throw E.pathHasNul();
  if (input.includes('\\')) throw E.pathHasBackslash();
  // A URL is not a path: 'file:///etc/passwd' would otherwise create 'file:/etc/passwd' inside the workspace.
  if (URL_LIKE.test(input)) throw E.pathLooksLikeUrl(input.slice(0, 100));
  const inputBytes = Buffer.byteLength(input);
  if (inputBytes > MAX_PATH_BYTES) throw E.pathOverLimit(MAX_PATH_BYTES);
  let rest = input;
  if (input.startsWith('/')) {
    if (!ws.allowAbsolute) throw E.absolutePathRefused();
    const abs = path.posix.normalize(input);
    const base = ws.root;
    if (!isInside(base, abs)) throw E.outsideRoot();
    rest = abs === base ? '.' : abs.slice(base.length + 1);
  }
  const segments: string[] = [];
  for (const seg of rest.split('/')) {
    // No segment is longer than the whole path: most paths need no count per segment.
    if (inputBytes > MAX_SEGMENT_BYTES && Buffer.byteLength(seg) > MAX_SEGMENT_BYTES) throw E.pathSegmentTooLong(MAX_SEGMENT_BYTES);
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (segments.length === 0) throw E.outsideRoot();
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

/** True when a real path is the state directory, something inside it, or a temp file. */
function isReservedReal(ws: Workspace, real: string): boolean {
  if (isInside(ws.stateDir, real)) return true;
  return path.basename(real).includes(TEMP_MARKER);
}

export interface ResolveOptions {
  /** The path may be the workspace root itself ('.'). */
  allowRoot?: boolean;
  /** A symlink as the last segment is the result itself (delete_file, move_file act on the name, not the target). */
  noFollowLeaf?: boolean;
  /**
   * Not read by the sandbox: the path receives what is at `receives` (a move's destination), so the policy
   * decides every path that would appear under it (docs/policy.md, "Moves").
   */
  receives?: ResolvedPath | undefined;
  /**
   * Not read by the sandbox either: a directory has just arrived here (a move), and the policy decides every
   * path in it again where it now is, since a file written into it during the move was never checked.
   */
  arrived?: boolean | undefined;
}

/**
 * Descriptors opened while resolving the paths of one call. They are closed only when the call has settled
 * (even after its answer went out on a timeout): a descriptor number reused while a late operation still
 * names it through /proc would point that operation at another directory.
 */
export class HandleScope {
  private fds: number[] = [];
  track(fd: number): number {
    this.fds.push(fd);
    return fd;
  }
  close(): void {
    for (const fd of this.fds) {
      try {
        closeSync(fd);
      } catch {
        // Already closed: nothing to release.
      }
    }
    this.fds = [];
  }
}

export interface ResolvedPath {
  ws: Workspace;
  /** Normalized relative POSIX path as the caller named it ('.' for the root). */
  rel: string;
  /** Real absolute path the operation acts on; for messages, lock keys and prefix checks, never for an operation. */
  real: string;
  /** Relative POSIX path of `real` from the root. */
  realRel: string;
  /** lstat of the object when it exists (a symlink only with noFollowLeaf), otherwise null. */
  stat: Stats | null;
  /** The name the caller gave was a symlink (inside the workspace). */
  viaSymlink: boolean;
  /** The last segment is itself a symlink (only set with noFollowLeaf). */
  leafIsLink: boolean;
  /** Verified directory the object lies in (or, for a directory reached as '.', the directory itself). */
  dir: DirHandle;
  /** Name of the object in `dir` ('.' when the object is `dir` itself). */
  name: string;
  /** Segments between `dir` and `name` that do not exist yet (a new file's missing parents). */
  missing: string[];
  /** The object named through `dir`'s handle: every operation of a call uses this, never `real`. */
  at: string;
  /** Set by the policy on a path a walk starts from: which entries below it the walk may show. */
  allowsEntry?: ((realRel: string, isDir: boolean) => boolean) | undefined;
  /** Set by the policy on the root a command runs on: how its changes are decided (docs/run-command.md). */
  commandReview?: CommandReview | undefined;
}

/** How the policy decides what a command changed (docs/run-command.md, "Path rules" and "Changes that ask"). */
export interface CommandReview {
  /** A change the command made (real path relative to the root): a change like a write, a removal like a delete. */
  decide(realRel: string, op: 'write' | 'delete'): { decision: 'allow' | 'ask' | 'deny'; message: string; rule: string | number | undefined };
  /** The call itself asks and nobody approved it yet: it runs on its overlay first, and a person decides on its effects. */
  readonly runFirst: boolean;
  /** The policy has rules (deny or ask) on writes or deletes: a direct-mode command, whose changes land unseen, is refused. */
  readonly changesRuled: boolean;
  /** An approval of this call is of a held run (it asked and ran first): without that run nothing may run. */
  readonly approvalHolds: boolean;
  /**
   * The repeat of a request: spends the approval it names (checked against the project as it is now) and
   * answers its id; null when the call names none. Throws when the approval cannot be used.
   */
  claim(): Promise<string | null>;
}

/** A directory held open (O_PATH) after it was checked, with the real path it had then. */
export interface DirHandle {
  fd: number;
  real: string;
  /** Where the kernel names descriptors (its service's, ServiceRuntime.fdDir); null in the weaker mode. */
  fdDir: string | null;
}

/** Swaps seen while one path is resolved before the call gives up (each retry re-reads a changed entry). */
const MAX_RACE_RETRIES = 16;

/** True when `dir` names open descriptors the way Linux's /proc/self/fd does (an entry of a directory held open). */
export function probeFdDir(dir = '/proc/self/fd'): boolean {
  let fd: number | undefined;
  try {
    fd = openDirHandle('/');
    return readlinkSync(`${dir}/${fd}`) === '/' && lstatSync(`${dir}/${fd}/.`).isDirectory();
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * This process's descriptors named by its own pid, as the /proc mounted here numbers it: /proc/<pid>/fd skips
 * the `self` link that every name through /proc/self/fd resolves (read_file at 32 callers: 1.04×, bench/README.md
 * "Decisions"). /proc/self names the caller in that mount's own pid namespace, so /proc/<that pid> is this process
 * wherever the namespaces differ. Falls back to /proc/self/fd when /proc/self cannot be read.
 */
export function ownFdDir(): string {
  try {
    const pid = readlinkSync('/proc/self');
    if (/^[1-9][0-9]*$/.test(pid)) return `/proc/${pid}/fd`;
  } catch {
    // No /proc (or no `self` in it): the probe of /proc/self/fd decides.
  }
  return '/proc/self/fd';
}

/**
 * The name of `name` inside a held directory: resolved by the kernel through the handle, not by path string;
 * in the weaker mode (no directory names descriptors) by its real path string.
 */
export function entryOf(dir: DirHandle, name: string): string {
  return dir.fdDir === null ? `${dir.real}/${name}` : `${dir.fdDir}/${dir.fd}/${name}`;
}

/** Where a held directory really is now (it may have been renamed since it was opened). */
function whereNow(dir: DirHandle, ws: Workspace): string {
  // The root cannot be moved from inside the workspace, and asking costs a /proc lookup per call.
  if (dir.fdDir === null || dir.fd === ws.rootFd) return dir.real;
  const now = readlinkSync(`${dir.fdDir}/${dir.fd}`);
  return now.endsWith(' (deleted)') ? `${dir.real}\0gone` : now;
}

/** Opens a verified subdirectory of `dir`, refusing anything but a real directory (no symlink is followed). */
export function openSubdir(scope: HandleScope, dir: DirHandle, name: string): DirHandle {
  return { fd: scope.track(openDirHandle(entryOf(dir, name))), real: `${dir.real === '/' ? '' : dir.real}/${name}`, fdDir: dir.fdDir };
}

/**
 * Resolves a tool path inside the workspace from the root's open handle, one segment at a time: every
 * directory is opened without following links, and an in-workspace symlink is followed by resolving its
 * target again from the directory it lies in (or the root). The result names the object through the last
 * verified directory's handle, so a later swap of any directory on the way cannot redirect the call.
 * A path that does not exist resolves to its deepest existing directory plus the missing segments.
 */
export async function resolveInWorkspace(ws: Workspace, input: string, opts: ResolveOptions = {}, scope: HandleScope): Promise<ResolvedPath> {
  const segments = normalizeToolPath(ws, input);
  const rel = relOf(segments);
  if (segments.length === 0 && !opts.allowRoot) throw E.pathIsRoot();
  if (segments.length > 0 && isReservedName(ws, rel, segments)) throw E.pathReserved();
  const walk = new SegmentWalk({ fd: ws.rootFd, real: ws.root, fdDir: ws.runtime.fdDir }, segments);
  walkSegments(ws, rel, opts, scope, walk);
  return resolvedAt(ws, rel, walk);
}

/**
 * One resolution's walk: the directories held so far (the root first), the segments still to walk (a
 * symlink's target is put in front of them), and what the walk found. Plain fields, so that the phases
 * below are plain functions: nothing is allocated per call beyond this object.
 */
class SegmentWalk {
  readonly root: DirHandle;
  stack: DirHandle[];
  pending: string[];
  hops = 0;
  retries = 0;
  viaSymlink = false;
  leafIsLink = false;
  stat: Stats | null = null;
  /** Name of the result in the top directory ('.' for the directory itself). */
  name = '.';
  /** Segments between the top directory and `name` that do not exist. */
  missing: string[] = [];

  constructor(root: DirHandle, segments: string[]) {
    this.root = root;
    this.stack = [root];
    this.pending = [...segments];
  }

  top(): DirHandle {
    return this.stack[this.stack.length - 1] as DirHandle;
  }
}

const isNoOpSegment = (p: string) => p === '' || p === '.';

/** Walks the pending segments: through directories by handle, following in-workspace links, to the leaf. */
function walkSegments(ws: Workspace, rel: string, opts: ResolveOptions, scope: HandleScope, w: SegmentWalk): void {
  while (w.pending.length > 0) {
    const seg = w.pending.shift() as string;
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      // Only a symlink's target brings '..' here (the caller's own were resolved lexically); it may not leave the root.
      if (w.stack.length === 1) throw E.outsideRoot();
      w.stack = w.stack.slice(0, -1);
      w.stat = null;
      continue;
    }
    if (Buffer.byteLength(seg) > MAX_SEGMENT_BYTES) throw E.pathTooLong();
    if (!w.pending.every(isNoOpSegment)) {
      if (throughDirectory(ws, rel, scope, w, seg)) return;
      continue;
    }
    if (atLeaf(ws, rel, opts, w, seg)) return;
  }
}

/**
 * A segment before the last: opens it as the next directory, follows it when it is a link, or looks again
 * when it changed. True when it does not exist: the rest of the path is then missing, and the walk ends.
 */
function throughDirectory(ws: Workspace, rel: string, scope: HandleScope, w: SegmentWalk, seg: string): boolean {
  try {
    w.stack = [...w.stack, openSubdir(scope, w.top(), seg)];
    w.stat = null;
    return false;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      // The kernel fails `missing/..` with ENOENT; resolving the rest lexically could end on a symlink below
      // an existing directory (a target like 'ghost/../linkdir/x' where linkdir leads outside): refuse.
      if (w.pending.includes('..')) throw E.linkToMissingDirectory(rel);
      const rest = w.pending.filter((p) => p !== '' && p !== '.');
      w.missing = [seg, ...rest.slice(0, -1)];
      w.name = rest[rest.length - 1] as string;
      return true;
    }
    if (code !== 'ENOTDIR' && code !== 'ELOOP') throw mapWalkError(err, rel);
  }
  // Not a directory: a symlink to follow, or a file where a directory was needed.
  const st = lstatOrNull(entryOf(w.top(), seg));
  if (st?.isSymbolicLink()) {
    followLink(ws, rel, w, seg);
    return false;
  }
  if (st === null || st.isDirectory()) {
    // Gone or turned into a directory between the open and the lstat: look again.
    if (++w.retries > MAX_RACE_RETRIES) throw E.pathChangedWhileResolving(rel);
    w.pending.unshift(seg);
    return false;
  }
  throw E.parentNotADirectory(rel);
}

/** The last segment: the result, unless it is a link to follow. True when the walk has its result. */
function atLeaf(ws: Workspace, rel: string, opts: ResolveOptions, w: SegmentWalk, seg: string): boolean {
  let st: Stats | null;
  try {
    st = lstatOrNull(entryOf(w.top(), seg));
  } catch (err) {
    throw mapWalkError(err, rel);
  }
  if (st?.isSymbolicLink() && !opts.noFollowLeaf) {
    followLink(ws, rel, w, seg);
    return false;
  }
  if (st?.isSymbolicLink()) w.leafIsLink = true;
  w.name = seg;
  w.stat = st;
  return true;
}

/** Follows the symlink `seg` of the top directory: its target's segments replace it. */
function followLink(ws: Workspace, rel: string, w: SegmentWalk, seg: string): void {
  if (++w.hops > MAX_SYMLINK_HOPS) throw E.tooManyLinks();
  let target: string;
  try {
    target = readlinkSync(entryOf(w.top(), seg));
  } catch (err) {
    // Swapped for something else since the lstat (EINVAL: no longer a link): look at the entry again.
    const code = (err as NodeJS.ErrnoException).code;
    if ((code === 'EINVAL' || code === 'ENOENT') && ++w.retries <= MAX_RACE_RETRIES) {
      w.pending.unshift(seg);
      return;
    }
    if (code === 'EINVAL' || code === 'ENOENT') throw E.pathChangedWhileResolving(rel);
    throw err;
  }
  w.viaSymlink = true;
  if (path.isAbsolute(target)) {
    const abs = path.posix.normalize(target);
    if (!isInside(ws.root, abs)) throw E.outsideRoot();
    w.stack = [w.root];
    w.pending.unshift(...abs.slice(ws.root.length).split('/'));
  } else {
    w.pending.unshift(...target.split('/'));
  }
}

/** The walk's result checked where its directory is now (inside, not reserved, not too long) and named through its handle. */
function resolvedAt(ws: Workspace, rel: string, w: SegmentWalk): ResolvedPath {
  const { name, missing } = w;
  let stat = w.stat;
  const dir = w.top();
  let dirReal: string;
  try {
    dirReal = whereNow(dir, ws);
  } catch (err) {
    throw mapWalkError(err, rel);
  }
  // The directory may have been moved since it was opened: only where it is now counts.
  if (!isInside(ws.root, dirReal)) throw E.outsideRoot();
  const real = name === '.' ? dirReal : missing.length === 0 ? childPath(dirReal, name) : path.join(dirReal, ...missing, name);
  if (!isInside(ws.root, real)) throw E.outsideRoot();
  if (isReservedReal(ws, real)) throw E.pathReserved();
  // Handles would let the service make paths longer than the system's limit, which nothing else could then reach.
  if (Buffer.byteLength(real) >= MAX_PATH_BYTES) throw E.pathTooLong();
  // A symlink ending in '.' or '..' (e.g. one to the root) leaves the directory itself as the result.
  if (name === '.' && stat === null) stat = lstatSync(entryOf(dir, '.'));
  const at = missing.length > 0 ? entryOf(dir, [...missing, name].join('/')) : entryOf(dir, name);
  // `real` is normalized and inside the root (checked above): its part after the root, without path.relative's resolving.
  const realRel = real === ws.root ? '.' : real.slice(ws.root.endsWith('/') ? ws.root.length : ws.root.length + 1);
  return { ws, rel, real, realRel, stat, viaSymlink: w.viaSymlink, leafIsLink: w.leafIsLink, dir: { fd: dir.fd, real: dirReal, fdDir: dir.fdDir }, name, missing, at };
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function mapWalkError(err: unknown, rel: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTDIR') return E.parentNotADirectory(rel);
  if (code === 'EACCES' || code === 'EPERM') return E.permissionDenied(rel);
  if (code === 'ENAMETOOLONG') return E.pathTooLong();
  if (code === 'ELOOP') return E.pathBecameLink();
  return err;
}

/**
 * Creates the missing directories of a resolved path one at a time through the verified parent's handle,
 * each checked to be a real directory after it was made; afterwards the path names its object through the
 * new parent's handle. Returns the first directory created (relative, with '/'), or null.
 */
export function createMissingParents(p: ResolvedPath, scope: HandleScope): string | null {
  let dir = p.dir;
  let first: string | null = null;
  for (const seg of p.missing) {
    try {
      mkdirSync(entryOf(dir, seg));
      first ??= `${toPosixRel(p.ws.root, path.join(dir.real, seg))}/`;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw mapWalkError(err, p.rel);
    }
    try {
      dir = openSubdir(scope, dir, seg);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR' || code === 'ELOOP') throw E.parentReplacedWhileCreating(p.rel);
      throw mapWalkError(err, p.rel);
    }
  }
  p.dir = dir;
  p.missing = [];
  p.at = entryOf(dir, p.name);
  return first;
}

function isReservedName(ws: Workspace, rel: string, segments: string[]): boolean {
  // The segments are normalized (no '', '.' or '..'): the lexical path is the root and them, as path.join would make it.
  return isInside(ws.stateDir, childPath(ws.root, rel)) || segments.some((s) => s.includes(TEMP_MARKER));
}

/** `parent` and a normalized relative path below it, as path.join writes them (the root may be '/'). */
function childPath(parent: string, rel: string): string {
  return parent.endsWith('/') ? parent + rel : `${parent}/${rel}`;
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
  return requireFileStat(p.stat, p.rel);
}

function requireFileStat(st: Stats | null, rel: string): Stats {
  if (!st) throw E.fileNotFound(rel);
  if (st.isDirectory()) throw E.isDirectory(rel);
  if (!st.isFile()) throw E.notRegularFile(describeKind(st), rel);
  return st;
}

export function requireDirectory(p: ResolvedPath): Stats {
  if (!p.stat) throw E.directoryNotFound(p.rel);
  if (!p.stat.isDirectory()) throw E.notADirectory(p.rel);
  return p.stat;
}

/** An open file descriptor and its fstat, checked to be the file the sandbox resolved. */
export interface VerifiedFile {
  fd: number;
  stat: Stats;
}

/**
 * Opens the regular file a resolved path names, as it is now (call it under the file's lock): never through
 * a symlink, never blocking on a FIFO; a special file is refused before it is opened (a device open may act),
 * unless `checked` says the resolution's lstat just did that. Null when there is no file. The caller closes `fd`.
 */
export function openRegular(p: ResolvedPath, checked = false): VerifiedFile | null {
  if (p.missing.length > 0) return null; // its name through the missing segments must not be looked up
  if (!checked) {
    const pre = lstatOrNull(p.at);
    if (!pre) return null;
    if (pre.isSymbolicLink()) throw E.pathBecameLinkWhileOpening(p.rel);
    requireFileStat(pre, p.rel);
  }
  let fd: number;
  try {
    fd = openNoFollow(p.at);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw E.pathBecameLinkWhileOpening(p.rel);
    if (code === 'ENXIO') throw E.notRegularAtOpen(p.rel);
    throw err;
  }
  try {
    const st = fstatSync(fd);
    requireFileStat(st, p.rel);
    return { fd, stat: st };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * Opens a resolved regular file for reading (openRegular) and checks that the opened object is the one the
 * sandbox checked (device/inode). The caller closes `fd` (closeSync).
 */
export function openVerified(p: ResolvedPath): VerifiedFile {
  const expected = requireFile(p);
  const opened = openRegular(p, true);
  if (!opened) throw E.fileNotFound(p.rel);
  if (opened.stat.dev !== expected.dev || opened.stat.ino !== expected.ino) {
    closeSync(opened.fd);
    throw E.fileReplacedWhileOpening(p.rel);
  }
  return opened;
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
      const { fd, stat } = openVerified(p);
      return { p, fd, stat };
    } catch (err) {
      if (!(err instanceof ToolError && err.code === 'CONFLICT') || attempt >= 5) throw err;
    }
    p = await resolveAgain();
  }
}
