// A command's view of the project is an overlay (docs/run-command.md, "What a command changes"): the project is
// the lower layer, read-only to it, and everything it writes lands in an upper layer in the state directory.
// After it exits, the upper layer is read through descriptors (any depth, any name, any count up to a bound,
// or nothing lands) and its changes are moved into the project: set-ID bits never survive, special files never
// land, and a path changed by someone else while the command ran is a CONFLICT that lands nothing.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { VersionStamp } from '../envelope.js';
import { moveToBackup } from '../workspace/backups.js';
import { versionOf } from '../workspace/versions.js';
import type { Workspace } from '../workspace/workspace.js';
import { ownerStateOf, writeOwnerRecord } from '../workspace/process-owner.js';
import { TEMP_MARKER, toPosixRel } from '../workspace/sandbox.js';
import { isInside } from '../workspace/workspace.js';
import { childPath, kindOfStat, listDir, lstatChild, nameText, openChildDir, openDir, shownName, TreeTooLarge, walkTree, type TreeKind, type TreeVisit } from './fd-walk.js';
import { SANDBOX_PATH } from './network.js';

/** Entries one run may leave in its upper layer; past it nothing lands (the quota poll stops the run early). */
export const MAX_LAYER_ENTRIES = 200_000;
/** Directory depth walked below a root (each level holds one descriptor); deeper is not trusted. */
export const MAX_TREE_DEPTH = 1024;
/** Paths listed in an answer's files_changed. */
export const MAX_CHANGES_LISTED = 1000;

/** A run's directory in the state directory: the layers, the overlay's mount point and bwrap's arguments. */
export interface RunDir {
  dir: string;
  upper: string;
  merged: string;
  /** bwrap's arguments, NUL-separated bytes (names of any bytes can be masked). */
  args: string;
  /** Where what the landing replaces or removes is moved (same volume), removed with the run. */
  trash: string;
}

export async function makeRunDir(ws: Workspace): Promise<RunDir> {
  const base = path.join(ws.stateDir, 'exec', ws.instanceId);
  await fs.mkdir(base, { recursive: true, mode: 0o700 });
  // The process that made this instance's runs: a later start sweeps them once it is gone (sweepRunDirs).
  try {
    writeOwnerRecord(path.join(base, OWNER));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return layRunDir(path.join(base, makeRunDirName()), ws.root);
}

/** A new run directory's name: unique, and in the order runs were made. */
export function makeRunDirName(): string {
  return `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;
}

/** The parts of the run directory at `dir`. */
export function runDirAt(dir: string): RunDir {
  return { dir, upper: path.join(dir, 'upper'), merged: path.join(dir, 'merged'), args: path.join(dir, 'args'), trash: path.join(dir, 'trash') };
}

/** Makes a run's directory at `dir` over the project at `lower` (the start-up probe lays one over an empty project). */
export async function layRunDir(dir: string, lower: string): Promise<RunDir> {
  for (const d of ['upper', 'work', 'merged', 'trash']) await fs.mkdir(path.join(dir, d), { recursive: true, mode: 0o700 });
  // The overlay is mounted from inside the run's directory by relative names, so its options (shown in the
  // sandbox's /proc/self/mountinfo) name no host path, and no comma or colon of a path can break them.
  await fs.symlink(lower, path.join(dir, 'lower'));
  return runDirAt(dir);
}

/** In each instance's directory of runs: the process that made it. */
const OWNER = '.owner';

/**
 * Removes a run's directory whatever the command left in its layer (any depth, modes that deny reading):
 * chmod and rm walk by descriptor and never follow a symlink.
 */
export function removeRunDir(dir: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', 'chmod -R u+rwx -- "$1" 2>/dev/null; rm -rf --one-file-system -- "$1"', 'sh', dir], { stdio: 'ignore', env: { PATH: SANDBOX_PATH } });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
  });
}

/**
 * Removes what crashed processes left: the run directories of every instance whose owner on this host is gone
 * (an empty record: killed while writing it), and this instance's own from an earlier start with the same id.
 * A live owner's runs, or one on another host, stay.
 */
export async function sweepRunDirs(ws: Workspace): Promise<void> {
  const root = path.join(ws.stateDir, 'exec');
  const instances = await fs.readdir(root).catch(() => [] as string[]);
  await Promise.all(
    instances.map(async (instance) => {
      const base = path.join(root, instance);
      const state = ownerStateOf(path.join(base, OWNER));
      if (state === 'dead') return removeRunDir(base);
      if (instance !== ws.instanceId || state === 'alive') return;
      const names = await fs.readdir(base).catch(() => [] as string[]);
      await Promise.all(names.filter((n) => n !== OWNER).map((n) => removeRunDir(path.join(base, n))));
    }),
  );
}

/** The state directory relative to the root, when it lies inside the project (walks leave it out whole). */
function stateRelOf(ws: Workspace): string | null {
  return isInside(ws.root, ws.stateDir) ? toPosixRel(ws.root, ws.stateDir) : null;
}

export interface Hidden {
  /** Paths below the root (bytes) to hide: directories under an empty read-only tmpfs, files under /dev/null. */
  dirs: Buffer[];
  files: Buffer[];
}

/**
 * The entries of the project the policy keeps from this caller, found by a walk that sees every depth and every
 * name: a name that is not UTF-8 (no rule can be decided on it, no tool can reach it) is hidden too. Throws
 * TreeTooLarge when the project cannot be walked whole within the bounds: the caller then runs nothing.
 */
export async function findHidden(ws: Workspace, allows: (realRel: string, isDir: boolean) => boolean, bounds: { maxEntries: number; deadline: number }): Promise<Hidden> {
  const hidden: Hidden = { dirs: [], files: [] };
  const stateRel = stateRelOf(ws);
  const root = await openDir(ws.root);
  try {
    await walkTree(root.fd, { ...bounds, maxDepth: MAX_TREE_DEPTH }, (v) => {
      const rel = nameText(v.rel);
      if (rel !== null && rel === stateRel) return false; // masked as a whole
      if (v.kind === 'symlink') return; // decided by its own path when followed
      const isDir = v.kind === 'directory';
      if (rel !== null && allows(rel, isDir)) return;
      (isDir ? hidden.dirs : hidden.files).push(v.rel);
      return false;
    });
  } finally {
    await root.close();
  }
  return hidden;
}

/** Bytes of the regular files in a run's upper layer (the quota poll); throws TreeTooLarge past the bounds. */
export async function layerBytes(upper: string): Promise<number> {
  let bytes = 0;
  const fd = await openDir(upper);
  try {
    await walkTree(fd.fd, { maxEntries: MAX_LAYER_ENTRIES, maxDepth: MAX_TREE_DEPTH }, (v) => {
      if (v.kind === 'file') bytes += v.stat.size;
    });
  } finally {
    await fd.close();
  }
  return bytes;
}

export type ChangeKind = 'file' | 'directory' | 'symlink' | 'other';

export interface LayerChange {
  path: string;
  change: 'created' | 'changed' | 'removed';
  kind: ChangeKind;
  size: number | null;
  /** The file as it landed (null: removed, not a file, or under a bulk path). */
  version?: VersionStamp | null;
  /** The backup of what it replaced or removed (null: none kept). */
  backup_id?: string | null;
  /** sha256 of the file it replaced or removed (null: none, or not read). */
  sha256_before?: string | null;
  /** A directory it replaced or removed: each file that was in it, kept as a backup (its checkpoint holds them). */
  removed_files?: RemovedFile[];
}

/** A file of a directory a command replaced or removed, as the landing kept it. */
export interface RemovedFile {
  path: string;
  sha256: string;
  backup_id: string;
}

export interface NotLanded {
  path: string;
  why: string;
}

export interface LandResult {
  changes: LayerChange[];
  notLanded: NotLanded[];
  /** Set-ID bits cleared on the way in. */
  setIdCleared: string[];
}

const SET_ID = 0o7000;
const SAFE_MODE = 0o777;

/** A planned step of the landing, in the order it is made (parents before children, removals first in a directory). */
export type Step =
  | { op: 'remove'; rel: string; dirRel: string; name: Buffer; kind: ChangeKind; ctimeMs: number; change: LayerChange }
  | { op: 'move'; rel: string; dirRel: string; name: Buffer; upperDirRel: string; kind: ChangeKind; replaces: boolean; ctimeMs: number | null; change: LayerChange }
  | { op: 'mkdir'; rel: string; dirRel: string; name: Buffer; mode: number; replaces: boolean; ctimeMs: number | null; change: LayerChange }
  | { op: 'chmod'; rel: string; mode: number; change: LayerChange };

class Conflict extends Error {
  constructor(readonly paths: string[]) {
    super(`changed while the command ran: ${paths.join(', ')}`);
  }
}

export { Conflict as LandingConflict };

interface ScanState {
  steps: Step[];
  changes: LayerChange[];
  notLanded: NotLanded[];
  conflicts: string[];
  setIdCleared: string[];
  seen: number;
  startedMs: number;
  reserved: (rel: string) => boolean;
  bulk: (rel: string) => boolean;
}

function changeKind(k: TreeKind): ChangeKind {
  return k === 'whiteout' ? 'other' : k;
}

function join(dirRel: string, name: string): string {
  return dirRel === '' ? name : `${dirRel}/${name}`;
}

/**
 * Reads what the command changed: its upper layer, paired with the project (lower) and the command's final view
 * (merged, reached through the launcher's mount namespace), all by descriptor. Returns the plan and the changes;
 * throws TreeTooLarge past the bounds and LandingConflict when a path it changes was changed by someone else
 * since the run started (its ctime is newer than the start).
 */
export async function scanLayer(ws: Workspace, run: RunDir, mergedView: string, startedMs: number, reserved: (rel: string) => boolean, bulk: (rel: string) => boolean): Promise<{ steps: Step[]; result: LandResult }> {
  const s: ScanState = { steps: [], changes: [], notLanded: [], conflicts: [], setIdCleared: [], seen: 0, startedMs, reserved, bulk };
  const upper = await openDir(run.upper);
  const lower = await openDir(ws.root);
  const merged = await openDir(mergedView);
  try {
    await scanDir(s, upper.fd, lower.fd, merged.fd, '', 1);
  } finally {
    await Promise.all([upper.close(), lower.close(), merged.close()]);
  }
  if (s.conflicts.length > 0) throw new Conflict(s.conflicts);
  s.changes.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  return { steps: s.steps, result: { changes: s.changes, notLanded: s.notLanded, setIdCleared: s.setIdCleared } };
}

function record(s: ScanState, c: LayerChange): LayerChange {
  s.changes.push(c);
  return c;
}

function changedSince(s: ScanState, st: Stats, rel: string): void {
  // The command saw the project as it was at the start; anything newer was written by someone else meanwhile.
  if (st.ctimeMs >= s.startedMs) s.conflicts.push(rel);
}

/**
 * Reads one directory of the layer (see scanLayer). Returns whether the command's final view of it is the layer's
 * directory exactly (nothing of the project's shows through, nothing in it stays behind): such a directory under
 * a bulk path is swapped whole.
 */
async function scanDir(s: ScanState, upperFd: number, lowerFd: number | null, mergedFd: number | null, dirRel: string, depth: number): Promise<boolean> {
  if (depth > MAX_TREE_DEPTH) throw new TreeTooLarge('depth', dirRel);
  const names = await listDir(upperFd);
  if (names === null) throw new TreeTooLarge('unreadable', dirRel || '.');
  const inUpper = new Set(names.map((n) => n.toString('latin1')));
  const notLandedBefore = s.notLanded.length;
  let whole = true;
  // Entries of the project's directory the command's final view no longer has: removed (whiteouts and
  // opaque directories alike, without reading the overlay's own attributes).
  if (lowerFd !== null && mergedFd !== null) {
    const lowerNames = (await listDir(lowerFd)) ?? [];
    const mergedNames = new Set(((await listDir(mergedFd)) ?? []).map((n) => n.toString('latin1')));
    for (const key of mergedNames) if (!inUpper.has(key)) whole = false;
    for (const name of lowerNames) {
      const key = name.toString('latin1');
      if (mergedNames.has(key) || (inUpper.has(key) && !(await isWhiteout(upperFd, name)))) continue;
      const text = nameText(name);
      const st = await lstatChild(lowerFd, name);
      if (!st || text === null) continue; // a name no rule can decide is hidden from the command; never removed
      const rel = join(dirRel, text);
      if (s.reserved(rel)) continue;
      changedSince(s, st, rel);
      const kind = changeKind(kindOfStat(st));
      const change = record(s, { path: rel, change: 'removed', kind, size: null });
      s.steps.push({ op: 'remove', rel, dirRel, name, kind, ctimeMs: st.ctimeMs, change });
    }
  }
  for (const name of names) {
    if (++s.seen > MAX_LAYER_ENTRIES) throw new TreeTooLarge('entries', dirRel || '.');
    const st = await lstatChild(upperFd, name);
    if (!st) continue;
    const kind = kindOfStat(st);
    if (kind === 'whiteout') continue; // counted above as a removal
    const text = nameText(name);
    const shown = join(dirRel, shownName(name));
    if (text === null) {
      s.notLanded.push({ path: shown, why: 'name is not UTF-8' });
      continue;
    }
    const rel = join(dirRel, text);
    if (s.reserved(rel) || text.includes(TEMP_MARKER)) {
      s.notLanded.push({ path: rel, why: 'reserved path' });
      continue;
    }
    if (kind === 'other') {
      s.notLanded.push({ path: rel, why: 'not a file, directory or symbolic link' });
      continue;
    }
    const low = lowerFd !== null ? await lstatChild(lowerFd, name) : null;
    const lowKind = low ? kindOfStat(low) : null;
    if (kind === 'directory') {
      const mode = st.mode & SAFE_MODE;
      if (lowKind === 'directory' && low) {
        if ((st.mode & 0o7777) !== mode) await chmodChild(upperFd, name, mode);
        const mark = { steps: s.steps.length, notLanded: s.notLanded.length };
        const change = (low.mode & 0o7777) !== mode ? record(s, { path: rel, change: 'changed', kind: 'directory', size: null }) : null;
        if (change) s.steps.push({ op: 'chmod', rel, mode, change });
        const childWhole = await descend(s, upperFd, lowerFd, mergedFd, name, rel, depth);
        if (!childWhole) whole = false;
        // A bulk tree made again (npm ci after rm -rf node_modules): the old one goes aside, the new one moves in.
        if (childWhole && s.notLanded.length === mark.notLanded && s.bulk(rel)) {
          s.steps.length = mark.steps;
          s.steps.push({ op: 'move', rel, dirRel, name, upperDirRel: dirRel, kind: 'directory', replaces: true, ctimeMs: null, change: change ?? { path: rel, change: 'changed', kind: 'directory', size: null } });
        }
      } else {
        if (low) changedSince(s, low, rel);
        const mark = { steps: s.steps.length, notLanded: s.notLanded.length };
        const change = record(s, { path: rel, change: low ? 'changed' : 'created', kind: 'directory', size: null });
        s.steps.push({ op: 'mkdir', rel, dirRel, name, mode, replaces: low !== null, ctimeMs: low?.ctimeMs ?? null, change });
        await descend(s, upperFd, null, null, name, rel, depth);
        // A new tree whose every entry lands (a dependency folder, build output) moves in with one rename.
        if (s.notLanded.length === mark.notLanded) {
          if ((st.mode & 0o7777) !== mode) await chmodChild(upperFd, name, mode);
          s.steps.length = mark.steps;
          s.steps.push({ op: 'move', rel, dirRel, name, upperDirRel: dirRel, kind: 'directory', replaces: low !== null, ctimeMs: low?.ctimeMs ?? null, change });
        }
      }
      continue;
    }
    if (low) changedSince(s, low, rel);
    if (kind === 'file') await makeSafe(s, upperFd, name, st, rel);
    const change = record(s, { path: rel, change: low ? 'changed' : 'created', kind, size: kind === 'file' ? st.size : null });
    s.steps.push({ op: 'move', rel, dirRel, name, upperDirRel: dirRel, kind, replaces: low !== null, ctimeMs: low?.ctimeMs ?? null, change });
  }
  return whole && s.notLanded.length === notLandedBefore;
}

async function descend(s: ScanState, upperFd: number, lowerFd: number | null, mergedFd: number | null, name: Buffer, rel: string, depth: number): Promise<boolean> {
  const up = await openChildDir(upperFd, name);
  if (!up) throw new TreeTooLarge('unreadable', rel);
  const low = lowerFd !== null ? await openChildDir(lowerFd, name) : null;
  const mer = mergedFd !== null && low ? await openChildDir(mergedFd, name) : null;
  if (low && !mer) {
    await Promise.all([up.close(), low.close()]);
    throw new TreeTooLarge('unreadable', rel);
  }
  try {
    return await scanDir(s, up.fd, low?.fd ?? null, mer?.fd ?? null, rel, depth + 1);
  } finally {
    await Promise.all([up.close(), low?.close(), mer?.close()]);
  }
}

/** chmod of a directory of the layer through its descriptor. */
async function chmodChild(dirFd: number, name: Buffer, mode: number): Promise<void> {
  const fh = await openChildDir(dirFd, name);
  if (!fh) return;
  try {
    await fh.chmod(mode);
  } finally {
    await fh.close();
  }
}

async function isWhiteout(dirFd: number, name: Buffer): Promise<boolean> {
  const st = await lstatChild(dirFd, name);
  return st !== null && kindOfStat(st) === 'whiteout';
}

/**
 * Clears set-user/group-ID and sticky bits of a file of the layer through a descriptor (never blocking: the
 * layer is the run's own and quiet now, but a FIFO in its place must not hold the call).
 */
async function makeSafe(s: ScanState, dirFd: number, name: Buffer, st: Stats, rel: string): Promise<void> {
  if ((st.mode & SET_ID) === 0) return;
  const fh = await fs.open(childPath(dirFd, name), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const now = await fh.stat();
    if (!now.isFile()) throw new TreeTooLarge('unreadable', rel);
    await fh.chmod(now.mode & SAFE_MODE);
  } finally {
    await fh.close();
  }
  s.setIdCleared.push(rel);
}

/** File steps of a landing made at once (each is a few calls in the thread pool). */
const LANDING_CONCURRENCY = 16;

/** A step that touches one file only: it may run beside the others of its run. */
function fileStep(step: Step): boolean {
  return (step.op === 'move' && step.kind !== 'directory') || (step.op === 'remove' && step.kind !== 'directory');
}

export interface LandingOptions {
  /** Who ran the command: its backups are that caller's changes (undo_edit takes them back). */
  actor: string | null;
  /** Paths that land without a backup or a hash per file (dependency folders, build output). */
  bulk: (rel: string) => boolean;
}

/** What the landing kept: changes without a backup (bulk paths), for the answer. */
export interface Landed {
  unbackedUp: number;
}

/**
 * Makes the planned steps through the one commit path's records: what a change replaces or removes is moved into
 * the backups (a rename on the volume; undo_edit and restore_backup bring it back), new content is renamed into
 * place out of the layer, and every landed file gets its version (sha256). Under a bulk path what goes is moved
 * aside and removed with the run instead. Each directory is reached by descriptor from the root; the data is
 * flushed once (syncfs of the layer's file system) before the first rename, each touched directory after.
 */
export async function landSteps(ws: Workspace, run: RunDir, steps: Step[], opts: LandingOptions): Promise<Landed> {
  const landed: Landed = { unbackedUp: 0 };
  if (steps.length === 0) return landed;
  await syncFileSystem(run.upper);
  const dirs = new DirCache();
  const trash = { n: 0, dir: run.trash };
  const one = async (step: Step): Promise<void> => {
    if (step.op === 'chmod') {
      const d = await dirs.open(ws.root, step.rel);
      await d.chmod(step.mode);
      return;
    }
    const parent = await dirs.open(ws.root, step.dirRel);
    const bulk = opts.bulk(step.rel);
    const replaced = step.op === 'remove' || step.replaces;
    let newSha: string | null = null;
    if (step.op === 'move' && step.kind === 'file' && !bulk) newSha = (await hashChild((await dirs.open(run.upper, step.upperDirRel)).fd, step.name))?.sha256 ?? null;
    if (replaced) {
      const now = await lstatChild(parent.fd, step.name);
      if (now && step.ctimeMs !== null && now.ctimeMs !== step.ctimeMs) throw new Conflict([step.rel]);
      if (now) {
        const kept = await keepOld(ws, parent.fd, step, now, bulk, opts.actor, trash);
        step.change.backup_id = kept.backupId;
        step.change.sha256_before = kept.sha256;
        if (kept.files) step.change.removed_files = kept.files;
        landed.unbackedUp += kept.unbackedUp;
      }
    }
    const target = childPath(parent.fd, step.name);
    if (step.op === 'mkdir') {
      await fs.mkdir(target, { mode: step.mode });
      await fs.chmod(target, step.mode);
    } else if (step.op === 'move') {
      const from = await dirs.open(run.upper, step.upperDirRel);
      await fs.rename(childPath(from.fd, step.name), target);
      if (step.kind === 'file') {
        const st = await lstatChild(parent.fd, step.name);
        step.change.version = st && newSha !== null ? versionOf(st, newSha) : null;
        if (bulk) landed.unbackedUp++;
      }
    }
    dirs.touched(step.dirRel);
  };
  try {
    // Steps on files (renames, their backups) are independent of each other: a run of them lands LANDING_CONCURRENCY
    // at a time; a directory's steps wait for what came before, so that a parent exists before its children.
    for (let i = 0; i < steps.length; ) {
      let j = i;
      while (j < steps.length && fileStep(steps[j] as Step)) j++;
      if (j === i) await one(steps[i++] as Step);
      else {
        const batch = steps.slice(i, j);
        let next = 0;
        let failed = false;
        const worker = async () => {
          while (next < batch.length && !failed) {
            try {
              await one(batch[next++] as Step);
            } catch (err) {
              failed = true;
              throw err;
            }
          }
        };
        // Every worker settles before an error goes on: none may act after the landing has given up.
        const settled = await Promise.allSettled(Array.from({ length: Math.min(LANDING_CONCURRENCY, batch.length) }, worker));
        const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (rejected) throw rejected.reason;
        i = j;
      }
    }
    await dirs.syncTouched(ws.root);
  } finally {
    await dirs.close();
  }
  return landed;
}

/**
 * What a landing step replaces or removes: a file goes into the backups whole (moved, its sha256 read first), a
 * directory's files each go there before the directory is moved aside; under a bulk path (or a name no backup
 * can record) it is moved aside only, and removed with the run.
 */
async function keepOld(ws: Workspace, parentFd: number, step: Step & { name: Buffer }, st: Stats, bulk: boolean, actor: string | null, trash: { n: number; dir: string }): Promise<{ backupId: string | null; sha256: string | null; unbackedUp: number; files?: RemovedFile[] }> {
  const at = childPath(parentFd, step.name).toString();
  // A file replaced by a file is changed (undo_edit puts the old content back); anything else removed it.
  const removed = !(step.op === 'move' && step.kind === 'file');
  if (!bulk && st.isFile()) {
    const hashed = await hashChild(parentFd, step.name);
    if (hashed && hashed.ino === st.ino) {
      const backupId = await moveToBackup(ws, at, { rel: step.rel, operation: 'run_command', mode: st.mode & 0o7777, sha256: hashed.sha256, actor }, st.size, { dev: st.dev, ino: st.ino }, removed);
      if (backupId !== null) return { backupId, sha256: hashed.sha256, unbackedUp: 0 };
      await fs.rename(at, path.join(trash.dir, String(trash.n++)));
      return { backupId: null, sha256: hashed.sha256, unbackedUp: 0 };
    }
  }
  let unbackedUp = bulk ? 1 : 0;
  const tree = !bulk && st.isDirectory() ? await backUpTree(ws, parentFd, step.name, step.rel, actor) : null;
  if (tree) unbackedUp += tree.missed;
  await fs.rename(at, path.join(trash.dir, String(trash.n++)));
  return { backupId: null, sha256: null, unbackedUp, ...(tree && { files: tree.kept }) };
}

/** Files of a removed tree moved into the backups at once (each is a few small writes and a rename in the thread pool). */
const BACKUP_CONCURRENCY = 16;

/** Moves every regular file of a directory that goes into the backups (removed): those kept, and how many entries could not be. */
async function backUpTree(ws: Workspace, parentFd: number, name: Buffer, rel: string, actor: string | null): Promise<{ kept: RemovedFile[]; missed: number }> {
  const rootAt = childPath(parentFd, name).toString();
  const dir = await openChildDir(parentFd, name);
  const kept: RemovedFile[] = [];
  if (!dir) return { kept, missed: 1 };
  let missed = 0;
  const files: { dirSub: string; name: Buffer; sub: string; st: Stats }[] = [];
  try {
    await walkTree(dir.fd, { maxEntries: MAX_LAYER_ENTRIES, maxDepth: MAX_TREE_DEPTH }, (v) => {
      const sub = nameText(v.rel);
      if (sub === null) {
        missed++;
        return false;
      }
      if (v.kind === 'file') files.push({ dirSub: sub.includes('/') ? sub.slice(0, sub.lastIndexOf('/')) : '', name: v.name, sub, st: v.stat });
    });
  } finally {
    await dir.close();
  }
  const dirs = new DirCache();
  try {
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const f = files[next++] as (typeof files)[number];
        const d = await dirs.open(rootAt, f.dirSub);
        const hashed = await hashChild(d.fd, f.name);
        if (!hashed || hashed.ino !== f.st.ino) continue;
        const backupId = await moveToBackup(ws, childPath(d.fd, f.name).toString(), { rel: `${rel}/${f.sub}`, operation: 'run_command', mode: f.st.mode & 0o7777, sha256: hashed.sha256, actor }, f.st.size, { dev: f.st.dev, ino: f.st.ino }, true);
        if (backupId !== null) kept.push({ path: `${rel}/${f.sub}`, sha256: hashed.sha256, backup_id: backupId });
      }
    };
    await Promise.all(Array.from({ length: Math.min(BACKUP_CONCURRENCY, files.length) }, worker));
  } finally {
    await dirs.close();
  }
  kept.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  return { kept, missed };
}

/**
 * sha256 of a regular file below a directory descriptor (never following a link, never blocking), and its first
 * `keepHead` bytes when asked (a preview's diff reads them in the same pass); null when it is not one.
 */
export async function hashChild(dirFd: number, name: Buffer, keepHead = 0): Promise<{ sha256: string; ino: number; size: number; head: Buffer } | null> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(childPath(dirFd, name), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return null;
    const hash = createHash('sha256');
    const head: Buffer[] = [];
    let kept = 0;
    for await (const chunk of fh.createReadStream({ autoClose: false, highWaterMark: 1024 * 1024 })) {
      hash.update(chunk as Buffer);
      if (kept < keepHead) {
        const piece = (chunk as Buffer).subarray(0, keepHead - kept);
        head.push(piece);
        kept += piece.length;
      }
    }
    return { sha256: hash.digest('hex'), ino: st.ino, size: st.size, head: Buffer.concat(head) };
  } finally {
    await fh.close();
  }
}

/** Directories of the project (or the layer) opened by descriptor from their root, kept for the landing. */
export class DirCache {
  private readonly open_ = new Map<string, Promise<fs.FileHandle>>();
  private readonly touched_ = new Set<string>();

  /** The directory `rel` below `root`, opened once (concurrent callers share the opening). */
  open(root: string, rel: string): Promise<fs.FileHandle> {
    const key = `${root}\0${rel}`;
    let hit = this.open_.get(key);
    if (!hit) {
      hit = this.openNew(root, rel);
      this.open_.set(key, hit);
    }
    return hit;
  }

  private async openNew(root: string, rel: string): Promise<fs.FileHandle> {
    if (rel === '') return openDir(root);
    const slash = rel.lastIndexOf('/');
    const parent = await this.open(root, slash < 0 ? '' : rel.slice(0, slash));
    const child = await openChildDir(parent.fd, Buffer.from(slash < 0 ? rel : rel.slice(slash + 1)));
    if (!child) throw new Conflict([rel]);
    return child;
  }

  touched(rel: string): void {
    this.touched_.add(rel);
  }

  async syncTouched(root: string): Promise<void> {
    for (const rel of this.touched_) await (await this.open(root, rel)).sync();
  }

  async close(): Promise<void> {
    const all = await Promise.allSettled(this.open_.values());
    await Promise.all(all.map((r) => (r.status === 'fulfilled' ? r.value.close().catch(() => undefined) : undefined)));
    this.open_.clear();
  }
}

/** syncfs(2) of the file system holding `p` (coreutils' sync -f): one flush for every file of the layer. */
function syncFileSystem(p: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sync', ['-f', '--', p], { stdio: 'ignore', env: { PATH: SANDBOX_PATH } });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`sync -f exited ${String(code)}`))));
  });
}

/** Entries in a run's upper layer (an answer says how many were discarded); throws TreeTooLarge past the bounds. */
export async function countLayer(upper: string): Promise<number> {
  const fd = await openDir(upper);
  try {
    return await walkTree(fd.fd, { maxEntries: MAX_LAYER_ENTRIES, maxDepth: MAX_TREE_DEPTH }, () => undefined);
  } finally {
    await fd.close();
  }
}

/**
 * What an approval of a command binds to: the project as the person saw it, every entry at any depth (its path,
 * kind, size, mode, inode and times; the state directory left out). Any change since, by any caller or by hand,
 * gives another stamp. Throws TreeTooLarge past the bounds.
 */
export async function projectStamp(ws: Workspace, bounds: { maxEntries: number; deadline: number }): Promise<{ entries: number; sha256: string }> {
  const hash = createHash('sha256');
  const entries = await walkProject(ws, bounds, (v) => {
    hash.update(v.rel);
    hash.update(`\0${entryStamp(v)}\n`);
  });
  return { entries, sha256: hash.digest('hex') };
}

/** Kind, size, mode, inode and times of an entry: any change to it changes this. */
function entryStamp(v: TreeVisit): string {
  const st = v.stat;
  return `${v.kind} ${st.size} ${st.mode} ${st.ino} ${st.mtimeMs} ${st.ctimeMs}`;
}

/** Every entry of the project at any depth by descriptor, the state directory left out; the count visited. */
async function walkProject(ws: Workspace, bounds: { maxEntries: number; deadline: number }, visit: (v: TreeVisit) => void): Promise<number> {
  const stateText = stateRelOf(ws);
  const stateRel = stateText === null ? null : Buffer.from(stateText);
  const root = await openDir(ws.root);
  try {
    return await walkTree(root.fd, { ...bounds, maxDepth: MAX_TREE_DEPTH }, (v) => {
      if (stateRel && v.rel.equals(stateRel)) return false;
      visit(v);
    });
  } finally {
    await root.close();
  }
}

/** One entry of the project as a direct-mode run compares it before and after (docs/run-command.md, "Direct mode"). */
export interface ProjectEntry {
  path: string;
  kind: ChangeKind;
  size: number;
  /** Kind, size, mode, inode and times: any change to the entry changes it. */
  stamp: string;
}

/**
 * Every entry of the project (the state directory left out), keyed by its name's bytes: what a direct-mode run
 * compares before and after the command to tell what it changed. Throws TreeTooLarge past the bounds.
 */
export async function projectEntries(ws: Workspace, bounds: { maxEntries: number; deadline: number }): Promise<Map<string, ProjectEntry>> {
  const out = new Map<string, ProjectEntry>();
  await walkProject(ws, bounds, (v) => {
    out.set(v.rel.toString('latin1'), { path: v.rel.toString('utf8'), kind: changeKind(v.kind), size: v.stat.size, stamp: entryStamp(v) });
  });
  return out;
}

/** What changed between two listings of the project (projectEntries), sorted by path. */
export function entriesChanged(before: ReadonlyMap<string, ProjectEntry>, after: ReadonlyMap<string, ProjectEntry>): LayerChange[] {
  const out: LayerChange[] = [];
  for (const [key, now] of after) {
    const was = before.get(key);
    if (!was) out.push({ path: now.path, change: 'created', kind: now.kind, size: now.kind === 'file' ? now.size : null, version: null, backup_id: null });
    else if (was.stamp !== now.stamp) out.push({ path: now.path, change: 'changed', kind: now.kind, size: now.kind === 'file' ? now.size : null, version: null, backup_id: null });
  }
  for (const [key, was] of before) if (!after.has(key)) out.push({ path: was.path, change: 'removed', kind: was.kind, size: null, version: null, backup_id: null });
  return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}
