// Bounded breadth-first walks of a directory tree (list, search, sizes): symlinks are reported but never
// followed, the state directory and temp files are never shown, and a walk stops at an entry count or a
// deadline. Directories are read a few at a time ahead of the one being processed, so the walk is not
// one file-system round trip per directory.
import { constants as C, type Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { asLocalToolPath } from './path-syntax.js';
import { TEMP_MARKER } from './sandbox.js';
import { isInside, type Workspace } from './workspace.js';

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
}

/** Directories that tree walks list but never enter (SPEC §2, seed 004). */
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
  listing?: Promise<Dirent[] | null>;
}

const PREFETCH = 8;
const GITIGNORE_MAX_BYTES = 1024 * 1024;

function kindOf(d: Dirent): EntryKind {
  if (d.isSymbolicLink()) return 'symlink';
  if (d.isDirectory()) return 'directory';
  if (d.isFile()) return 'file';
  return 'other';
}

/** Entries a directory holds, or null when it cannot be read (vanished, permissions): walks skip it. */
async function listDir(abs: string): Promise<Dirent[] | null> {
  try {
    const entries = await fs.readdir(abs, { withFileTypes: true });
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return null;
  }
}

async function readGitignore(dir: string): Promise<IgnoreRules | null> {
  let fh: fs.FileHandle | undefined;
  try {
    fh = await fs.open(path.join(dir, '.gitignore'), C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
    const st = await fh.stat();
    if (!st.isFile() || st.size > GITIGNORE_MAX_BYTES) return null;
    const text = await fh.readFile('utf8');
    return { base: dir, ig: ignore({ allowRelativePaths: true }).add(text) };
  } catch {
    return null;
  } finally {
    await fh?.close();
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
 * Walks the directory `startAbs` (a real path checked by the sandbox) breadth-first. Only the start is
 * trusted; below it nothing is followed: a symlink is an entry of kind 'symlink', never a directory.
 */
export async function walkTree(ws: Workspace, startAbs: string, opts: WalkOptions): Promise<WalkResult> {
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
    rootRules = (await Promise.all(ancestors.map(readGitignore))).filter((r): r is IgnoreRules => r !== null);
  }
  const queue: PendingDir[] = [{ abs: startAbs, relFromStart: '', depth: 0, rules: rootRules }];
  let head = 0;
  let visited = 0;
  const result = (truncated: boolean, reason: WalkResult['reason']): WalkResult => ({ visited, truncated, reason });

  while (head < queue.length) {
    for (let i = head; i < Math.min(queue.length, head + PREFETCH); i++) {
      const q = queue[i] as PendingDir;
      q.listing ??= listDir(q.abs);
    }
    const held = opts.pace?.();
    if (held) await held;
    const dir = queue[head] as PendingDir;
    queue[head++] = undefined as unknown as PendingDir; // let finished directories be collected
    const entries = await (dir.listing as Promise<Dirent[] | null>);
    if (!entries) continue;
    if (opts.signal?.aborted) return result(true, 'time');
    if (opts.deadline !== undefined && Date.now() > opts.deadline) return result(true, 'time');

    let rules = dir.rules;
    if (opts.respectGitignore && dir.depth > 0 && entries.some((e) => e.name === '.gitignore' && e.isFile())) {
      const own = await readGitignore(dir.abs);
      if (own) rules = [...rules, own];
    }
    const depth = dir.depth + 1;
    // A directory entry name holds no separator, so concatenation is enough (no path.join per entry).
    const prefix = dir.abs.endsWith(path.sep) ? dir.abs : dir.abs + path.sep;
    for (const d of entries) {
      const name = d.name;
      if (isHiddenFromTools(name)) continue;
      if (!includeHidden && name.startsWith('.')) continue;
      const abs = prefix + name;
      const kind = kindOf(d);
      if (kind === 'directory' && isInside(ws.stateDir, abs)) continue;
      const skipped = kind === 'directory' && skipDirs.has(name);
      if (skipped && !opts.reportSkipped) continue;
      if (rules.length > 0 && ignoredBy(rules, abs, kind === 'directory')) continue;
      if (visited >= opts.maxEntries) return result(true, 'entries');
      visited++;
      const relFromStart = dir.relFromStart === '' ? name : `${dir.relFromStart}/${name}`;
      if (opts.onEntry({ name, relFromStart, abs, depth, kind }) === false) return result(true, 'stopped');
      if (kind === 'directory' && !skipped && depth < opts.maxDepth) queue.push({ abs, relFromStart, depth, rules });
    }
  }
  return result(false, null);
}

/** Joins a tool-relative directory ('.' or '[project]/.' for a root) and a path below it. */
export function joinRel(dirRel: string, below: string): string {
  if (dirRel === '.') return asLocalToolPath(below);
  if (dirRel.endsWith('/.')) return `${dirRel.slice(0, -1)}${below}`;
  return `${dirRel}/${below}`;
}
