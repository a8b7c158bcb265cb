// Bounded breadth-first walks of a directory tree (list, search, sizes): symlinks are reported but never
// followed, the state directory and temp files are never shown, and a walk stops at an entry count or a
// deadline. Directories are read a few at a time ahead of the one being processed, so the walk is not
// one file-system round trip per directory.
import { closeSync, constants as C, fstatSync, lstatSync, openSync, readFileSync, readlinkSync, type Dirent, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { asLocalToolPath } from '../workspace/path-syntax.js';
import { entryOf, TEMP_MARKER, toPosixRel } from '../workspace/sandbox.js';
import { isInside, type Workspace } from '../workspace/workspace.js';
import { E } from '../errors.js';

export type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

export interface WalkEntry {
  name: string;
  /** Path relative to the start directory (POSIX, no leading './'). */
  relFromStart: string;
  /** Absolute host path; never shown to callers. */
  abs: string;
  /** 1 for the start directory's children. */
  depth: number;
  kind: EntryKind;
  /** lstat of the entry, taken through its directory's checked descriptor (with `stats`); null when it vanished. */
  stat?: Stats | null;
}

/** Directories that tree walks list but never enter (docs/api.md, "Sandbox"). */
export const DEFAULT_SKIP_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

export interface WalkOptions {
  /** Deepest entry depth reported; directories at this depth are not entered. */
  maxDepth: number;
  /** Entries visited before the walk stops (`truncated`, reason `entries`). */
  maxEntries: number;
  /** Date.now() after which the walk stops (`truncated`, reason `time`). */
  deadline?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Show names starting with '.' (default true). */
  includeHidden?: boolean;
  /** Directory names never entered (default .git and node_modules). */
  skipDirs?: ReadonlySet<string>;
  /** Report the skipped directories themselves as entries (default false: they are invisible). */
  reportSkipped?: boolean;
  /** lstat every reported entry through its directory's descriptor (list, sizes): never by path string. */
  stats?: boolean;
  /** Honour .gitignore files from the workspace root down (default false). */
  respectGitignore?: boolean;
  /** Called for every entry, breadth-first, sorted by name within a directory; return false to stop. */
  onEntry(entry: WalkEntry): boolean | void;
  /**
   * Called before each directory's entries are reported; a promise returned holds the walk until it settles
   * (a consumer that is behind lets the walk wait instead of queueing the whole tree in memory).
   */
  pace?: () => Promise<void> | undefined;
}

export interface WalkResult {
  visited: number;
  truncated: boolean;
  reason: 'entries' | 'time' | 'stopped' | null;
}

interface IgnoreRules {
  /** Absolute directory the rules are relative to. */
  base: string;
  ig: Ignore;
}

interface PendingDir {
  abs: string;
  relFromStart: string;
  depth: number;
  rules: IgnoreRules[];
  listing?: Promise<Listing | null>;
}

interface Listing {
  entries: Dirent[];
  stats: Array<Stats | null> | null;
}

/** The start of a walk: a directory the sandbox resolved (its handle name and real path). */
export interface WalkStart {
  at: string;
  real: string;
  /** Set by the policy: whether an entry (real path relative to the root) may be shown; others are skipped, directories not entered. */
  allowsEntry?: ((realRel: string, isDir: boolean) => boolean) | undefined;
}

const PREFETCH = 8;
const GITIGNORE_MAX_BYTES = 1024 * 1024;

function kindOf(d: Dirent): EntryKind {
  if (d.isSymbolicLink()) return 'symlink';
  if (d.isDirectory()) return 'directory';
  if (d.isFile()) return 'file';
  return 'other';
}

const DIR_READ = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW | C.O_NONBLOCK;

/**
 * Opens a directory below the walk's start by its path and checks, through the descriptor, that it is where
 * that path says: a directory on the way swapped for a symlink leads elsewhere, and is then skipped. Null
 * when it cannot be opened (vanished, a link now, unreadable) or is not where it should be.
 */
export function openCheckedAt(fdDir: string | null, abs: string, flags: number): number | null {
  let fd: number;
  try {
    fd = openSync(abs, flags);
  } catch {
    return null;
  }
  if (!isWhereExpected(fdDir, fd, abs)) {
    closeSync(fd);
    return null;
  }
  return fd;
}

/**
 * True when the open descriptor `fd` really is the object at `abs`, as `fdDir` (the service's, null in the
 * weaker mode) names it: always true where no directory names descriptors.
 */
export function isWhereExpected(fdDir: string | null, fd: number, abs: string): boolean {
  if (fdDir === null) return true;
  try {
    return readlinkSync(`${fdDir}/${fd}`) === abs;
  } catch {
    return false;
  }
}

/** Entries (and their lstat, with `withStats`) a directory holds through the descriptor `fd`, which it closes. */
async function listFd(fdDir: string | null, fd: number, real: string, withStats: boolean): Promise<Listing> {
  try {
    const handle = { fd, real, fdDir };
    const entries = await fs.readdir(entryOf(handle, '.'), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const stats = withStats ? entries.map((e) => lstatOrNull(entryOf(handle, e.name))) : null;
    return { entries, stats };
  } finally {
    closeSync(fd);
  }
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/** Entries of a directory below the start, or null when it cannot be read or was swapped: walks skip it. */
async function listDir(fdDir: string | null, abs: string, withStats: boolean): Promise<Listing | null> {
  const fd = openCheckedAt(fdDir, abs, DIR_READ);
  if (fd === null) return null;
  try {
    return await listFd(fdDir, fd, abs, withStats);
  } catch {
    return null;
  }
}

async function readGitignore(fdDir: string | null, dir: string): Promise<IgnoreRules | null> {
  const fd = openCheckedAt(fdDir, path.join(dir, '.gitignore'), C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  if (fd === null) return null;
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > GITIGNORE_MAX_BYTES) return null;
    return { base: dir, ig: ignore({ allowRelativePaths: true }).add(readFileSync(fd, 'utf8')) };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function ignoredBy(rules: IgnoreRules[], abs: string, isDir: boolean): boolean {
  for (const r of rules) {
    const rel = abs.slice(r.base.length + 1);
    if (rel.length > 0 && r.ig.ignores(isDir ? `${rel}/` : rel)) return true;
  }
  return false;
}

/** True for names tools never show: temp files of atomic writes. */
export function isHiddenFromTools(name: string): boolean {
  return name.includes(TEMP_MARKER);
}

/**
 * Walks the directory `start` (resolved by the sandbox) breadth-first. Only the start is trusted; below it
 * nothing is followed: a symlink is an entry of kind 'symlink', never a directory, and each directory is
 * checked through its descriptor to be where its path says before its entries are read.
 */
export async function walkTree(ws: Workspace, start: WalkStart, opts: WalkOptions): Promise<WalkResult> {
  const startAbs = start.real;
  const withStats = opts.stats ?? false;
  let startFd: number;
  try {
    startFd = openSync(start.at, DIR_READ);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') throw E.directoryUnreadable(toPosixRel(ws.root, startAbs));
    if (code === 'ELOOP' || code === 'ENOTDIR') throw E.directoryReplaced(toPosixRel(ws.root, startAbs));
    throw err;
  }
  const { fdDir } = ws.runtime;
  const startListing = listFd(fdDir, startFd, startAbs, withStats);
  const skipDirs = opts.skipDirs ?? DEFAULT_SKIP_DIRS;
  const includeHidden = opts.includeHidden ?? true;
  let rootRules: IgnoreRules[] = [];
  if (opts.respectGitignore) {
    // Rules of the start directory's ancestors inside the workspace apply too (as in git).
    const ancestors: string[] = [];
    for (let d = startAbs; isInside(ws.root, d); d = path.dirname(d)) {
      ancestors.unshift(d);
      if (d === ws.root) break;
    }
    rootRules = (await Promise.all(ancestors.map((d) => readGitignore(fdDir, d)))).filter((r): r is IgnoreRules => r !== null);
  }
  const queue: PendingDir[] = [{ abs: startAbs, relFromStart: '', depth: 0, rules: rootRules, listing: startListing }];
  let head = 0;
  let visited = 0;
  const result = (truncated: boolean, reason: WalkResult['reason']): WalkResult => ({ visited, truncated, reason });

  while (head < queue.length) {
    for (let i = head; i < Math.min(queue.length, head + PREFETCH); i++) {
      const q = queue[i] as PendingDir;
      q.listing ??= listDir(fdDir, q.abs, withStats);
    }
    const held = opts.pace?.();
    if (held) await held;
    const dir = queue[head] as PendingDir;
    queue[head++] = undefined as unknown as PendingDir; // let finished directories be collected
    const listing = await (dir.listing as Promise<Listing | null>);
    if (!listing) continue;
    const entries = listing.entries;
    if (opts.signal?.aborted) return result(true, 'time');
    if (opts.deadline !== undefined && Date.now() > opts.deadline) return result(true, 'time');

    let rules = dir.rules;
    if (opts.respectGitignore && dir.depth > 0 && entries.some((e) => e.name === '.gitignore' && e.isFile())) {
      const own = await readGitignore(fdDir, dir.abs);
      if (own) rules = [...rules, own];
    }
    const depth = dir.depth + 1;
    // A directory entry name holds no separator, so concatenation is enough (no path.join per entry).
    const prefix = dir.abs.endsWith(path.sep) ? dir.abs : dir.abs + path.sep;
    for (let i = 0; i < entries.length; i++) {
      const d = entries[i] as Dirent;
      const name = d.name;
      if (isHiddenFromTools(name)) continue;
      if (!includeHidden && name.startsWith('.')) continue;
      const abs = prefix + name;
      const kind = kindOf(d);
      if (kind === 'directory' && isInside(ws.stateDir, abs)) continue;
      const skipped = kind === 'directory' && skipDirs.has(name);
      if (skipped && !opts.reportSkipped) continue;
      if (rules.length > 0 && ignoredBy(rules, abs, kind === 'directory')) continue;
      if (start.allowsEntry && !start.allowsEntry(toPosixRel(ws.root, abs), kind === 'directory')) continue;
      if (visited >= opts.maxEntries) return result(true, 'entries');
      visited++;
      const relFromStart = dir.relFromStart === '' ? name : `${dir.relFromStart}/${name}`;
      const entry: WalkEntry = { name, relFromStart, abs, depth, kind };
      if (listing.stats) entry.stat = listing.stats[i] ?? null;
      if (opts.onEntry(entry) === false) return result(true, 'stopped');
      if (kind === 'directory' && !skipped && depth < opts.maxDepth) queue.push({ abs, relFromStart, depth, rules });
    }
  }
  return result(false, null);
}

/** Size tools look everywhere (also .git and node_modules), except the state directory. */
const SKIP_NOTHING: ReadonlySet<string> = new Set();

/**
 * Every entry below a directory with its lstat, .git and node_modules included (disk_usage, find_large_files),
 * within the workspace's entry and time limits.
 */
export function walkSizes(ws: Workspace, start: WalkStart, signal: AbortSignal, onEntry: (e: WalkEntry) => void): Promise<WalkResult> {
  return walkTree(ws, start, {
    maxDepth: 64,
    stats: true,
    maxEntries: ws.limits.searchMaxFiles,
    deadline: Date.now() + ws.limits.searchTimeoutMs,
    signal,
    skipDirs: SKIP_NOTHING,
    onEntry,
  });
}

/** Joins a tool-relative directory ('.' or '[project]/.' for a root) and a path below it. */
export function joinRel(dirRel: string, below: string): string {
  if (dirRel === '.') return asLocalToolPath(below);
  if (dirRel.endsWith('/.')) return `${dirRel.slice(0, -1)}${below}`;
  return `${dirRel}/${below}`;
}
