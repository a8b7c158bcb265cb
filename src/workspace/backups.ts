// Backups (docs/api.md, "Durable writes and backups"): the old content of a file before it is overwritten, edited, replaced or deleted,
// kept under <state>/backups/<file key>/ with bounded retention (count per file, total bytes).
//
// A backup is one file whose name carries its record: `<id>.<operation>.<mode>.<sha256|->.<actor|->.<k|r>.kept`
// (the actor in base64url, `r` for a change that removed the file). The file's path and project are the same for
// every backup of one file key and are written once, in the directory's `origin`. Its data is the old file's
// inode itself, linked into the backups just before the new content is renamed over the file, where that can be
// done (same mount, the name its only link); a copy otherwise. Backups of older versions (`<id>.bak` with its
// `<id>.json` meta) are still listed, restored and pruned.
import { closeSync, constants as fsConstants, existsSync, lstatSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { E } from '../errors.js';
import { dropCheckpointsNeeding, neededBackupIds } from './checkpoints.js';
import { linkInPool, openForWrite, unlinkInPool, writeAll } from './sync-first-io.js';
import { randomHex } from './random-hex.js';
import { PartKind } from './runtime.js';
import type { Workspace } from './workspace.js';
import { sha256Hex } from './versions.js';

export interface BackupMeta {
  backup_id: string;
  /**
   * The file's project (null in single-project mode) and its real path relative to that project's root: what a
   * restore acts on, never parsed as a tool path (a local directory may be called `[B]`). Absent in old metas.
   */
  project?: string | null;
  path: string;
  operation: string;
  created_at: string;
  size_bytes: number;
  sha256: string | null;
  mode: number;
  /** Who made the change that took this backup (token id; null without auth); absent in old metas. Lets undo_edit find the caller's own last change. */
  actor?: string | null;
  /** The change removed the file (a delete, a patch's delete or move away): undo_edit puts it back from here (returnRemovedFile). */
  removed?: boolean;
}

const ID_RE = /^([0-9a-f]{16})-([0-9a-z]{8,})-([0-9a-f]{6})$/;
/** A backup's file name (see the top of this file). */
const KEPT_RE = /^([0-9a-f]{16}-[0-9a-z]{8,}-[0-9a-f]{6})\.([a-z][a-z0-9_:]*)\.([0-7]{1,6})\.([0-9a-f]{64}|-)\.([A-Za-z0-9_-]{2,}|-)\.([kr])\.kept$/;
const OPERATION_RE = /^[a-z][a-z0-9_:]*$/;
/** The path and project of a file key's backups, written once in its directory. */
const ORIGIN = 'origin';

/**
 * Sizes of backup data files by path. A backup's data never changes once it is named (a link or a rename makes
 * it whole), so a size seen once is kept until the backup is gone: a scan then lists directories and stats only
 * the backups it has not seen before. Process-wide: a cache of facts that never change, whichever service learnt them.
 */
const knownSizes = new Map<string, number>();
/** Origins by backup directory, read or written once per process: a file key's path never changes. */
const origins = new Map<string, Origin>();

interface Origin {
  project: string | null;
  path: string;
}

function fileKey(rel: string): string {
  return sha256Hex(rel).slice(0, 16);
}
function backupsRoot(ws: Workspace): string {
  return path.join(ws.stateDir, 'backups');
}
function newId(rel: string): string {
  return `${fileKey(rel)}-${Date.now().toString(36).padStart(9, '0')}-${randomHex(3)}`;
}
function dirOf(ws: Workspace, id: string): string {
  const m = ID_RE.exec(id);
  if (!m) throw E.backupIdInvalid(id);
  return path.join(backupsRoot(ws), m[1] as string);
}

/** One backup in a directory: its data file, and the meta file of the older kind (null for one named with its record). */
interface Entry {
  id: string;
  data: string;
  metaFile: string | null;
  /** Parsed from the name (the newer kind). */
  name: RegExpExecArray | null;
}

/** The backups among one directory's names, newest first. */
function entriesOf(dir: string, names: readonly string[]): Entry[] {
  const entries: Entry[] = [];
  for (const n of names) {
    const m = KEPT_RE.exec(n);
    if (m) entries.push({ id: m[1] as string, data: path.join(dir, n), metaFile: null, name: m });
    else if (n.endsWith('.json') && ID_RE.test(n.slice(0, -5))) {
      const id = n.slice(0, -5);
      entries.push({ id, data: path.join(dir, `${id}.bak`), metaFile: path.join(dir, n), name: null });
    }
  }
  return entries.sort((a, b) => (a.id < b.id ? 1 : -1));
}

function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Each backup directory's entries as this process last listed them, kept up to date with the backups it makes
 * and removes, so that a change's prune (every write) lists its directory once a second, not every time. Another
 * replica's backups are seen at the next listing: until then a file may keep a few more than backupKeep, and a
 * backup it removed is removed again without harm (unlinkIfPresent). Process-wide, as knownSizes.
 */
const listings = new Map<string, { entries: Entry[]; listedAt: number }>();
const LISTING_FRESH_MS = 1000;

/** A directory's entries, newest first, for prune: the kept listing while fresh. */
function listedEntries(dir: string): Entry[] {
  const now = Date.now();
  const kept = listings.get(dir);
  if (kept && now - kept.listedAt < LISTING_FRESH_MS) return kept.entries;
  const entries = entriesOf(dir, namesIn(dir));
  listings.set(dir, { entries, listedAt: now });
  return entries;
}

/** A backup this process made, added to its directory's kept listing (newest first). */
function listMade(dir: string, file: string): void {
  const kept = listings.get(dir);
  if (!kept) return;
  const [entry] = entriesOf(dir, [path.basename(file)]);
  if (!entry) return;
  const at = kept.entries.findIndex((e) => e.id < entry.id);
  kept.entries.splice(at < 0 ? kept.entries.length : at, 0, entry);
}

/** A backup this process removed, out of its directory's kept listing. */
function listGone(e: Entry): void {
  const kept = listings.get(path.dirname(e.data));
  if (!kept) return;
  const at = kept.entries.findIndex((x) => x.data === e.data);
  if (at >= 0) kept.entries.splice(at, 1);
}

/** The backup with this id, or null. */
function findEntry(ws: Workspace, id: string): Entry | null {
  const dir = dirOf(ws, id);
  const prefix = `${id}.`;
  return entriesOf(dir, namesIn(dir).filter((n) => n.startsWith(prefix))).find((e) => e.id === id) ?? null;
}

function encodeActor(actor: string | null): string {
  return actor === null ? '-' : Buffer.from(actor, 'utf8').toString('base64url');
}

function nameOf(id: string, input: BackupInput, removed: boolean): string {
  // Operations are tool names, constants of the code: a name that could not be parsed back is a bug.
  if (!OPERATION_RE.test(input.operation)) throw new Error(`backup operation not a tool name: ${input.operation}`);
  return `${id}.${input.operation}.${input.mode.toString(8)}.${input.sha256 ?? '-'}.${encodeActor(input.actor)}.${removed ? 'r' : 'k'}.kept`;
}

/** The origin of a directory's backups: its `origin` file, or for a directory of older backups one of their metas. */
function originOf(dir: string, entries: readonly Entry[]): Origin | null {
  const known = origins.get(dir);
  if (known) return known;
  try {
    const o = JSON.parse(readFileSync(path.join(dir, ORIGIN), 'utf8')) as Origin;
    origins.set(dir, o);
    return o;
  } catch {
    for (const e of entries) {
      const meta = e.metaFile && readOldMeta(e.metaFile);
      if (meta) return { project: meta.project ?? null, path: meta.path };
    }
    return null;
  }
}

function readOldMeta(file: string): BackupMeta | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as BackupMeta;
  } catch {
    return null; // a half-written meta of a concurrent backup or a crash, or one pruned meanwhile
  }
}

function sizeOf(data: string): number | null {
  let size = knownSizes.get(data);
  if (size === undefined) {
    try {
      size = lstatSync(data).size;
    } catch {
      return null;
    }
    knownSizes.set(data, size);
  }
  return size;
}

/** An entry's record, or null when it cannot be read (pruned meanwhile, half written, no origin). */
function metaOf(e: Entry, origin: Origin | null): BackupMeta | null {
  if (e.metaFile !== null) return readOldMeta(e.metaFile);
  const m = e.name as RegExpExecArray;
  const size = sizeOf(e.data);
  if (origin === null || size === null) return null;
  const actor = m[5] as string;
  return {
    backup_id: e.id,
    project: origin.project,
    path: origin.path,
    operation: m[2] as string,
    created_at: new Date(parseInt(e.id.slice(17, e.id.lastIndexOf('-')), 36)).toISOString(),
    size_bytes: size,
    sha256: m[4] === '-' ? null : (m[4] as string),
    mode: parseInt(m[3] as string, 8),
    actor: actor === '-' ? null : Buffer.from(actor, 'base64url').toString('utf8'),
    ...(m[6] === 'r' && { removed: true }),
  };
}

export interface BackupInput {
  rel: string;
  operation: string;
  mode: number;
  sha256: string | null;
  /** Who made the change (token id; null without auth): undo_edit takes back a caller's own last change. Required, so that no change goes unattributed. */
  actor: string | null;
  /** Told the id of the backup once it is kept: the call's checkpoint record names it as the content before. */
  kept?: ((id: string) => void) | undefined;
  /**
   * Where the old content still is (a handle name, ResolvedPath.at) and the inode that was read there: the backup
   * is then that inode, linked, when the change renames a new file over it (see linkOld). Absent: a copy.
   */
  from?: { at: string; dev: number; ino: number } | undefined;
}

/** Makes a file key's directory and its origin when this process has not seen them yet. */
async function ensureDir(ws: Workspace, dir: string, rel: string): Promise<void> {
  if (origins.has(dir)) return;
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, ORIGIN);
  const origin: Origin = { project: ws.id, path: rel };
  if (!existsSync(file)) {
    // Complete or absent: written aside and renamed (another replica may write the same one meanwhile).
    const part = `${file}.${randomHex(4)}.part`;
    await fs.writeFile(part, JSON.stringify(origin), { mode: 0o600 });
    await fs.rename(part, file);
  }
  origins.set(dir, origin);
}

/**
 * Keeps `content` as a backup of `rel`; returns the backup id, or null when backups are disabled. With
 * `input.from`, the caller renames the new content over that file once this returns, and the backup is the old
 * inode linked (no copy, one call in the thread pool); a copy where the link cannot be made or kept.
 */
export async function createBackup(ws: Workspace, input: BackupInput, content: Buffer): Promise<string | null> {
  if (ws.limits.backupKeep === 0) return null;
  const id = newId(input.rel);
  const dir = dirOf(ws, id);
  await ensureDir(ws, dir, input.rel);
  const file = path.join(dir, nameOf(id, input, false));
  if (!(input.from && (await linkOld(input.from, file)))) {
    const part = path.join(dir, `${id}.part`);
    try {
      await writeCopy(part, file, content);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || existsSync(dir)) throw err;
      // The directory went since this process made it (removed by hand): made again, once.
      origins.delete(dir);
      await ensureDir(ws, dir, input.rel);
      await writeCopy(part, file, content);
    }
  }
  knownSizes.set(file, content.length);
  listMade(dir, file);
  input.kept?.(id);
  await prune(ws, dir, content.length, id);
  return id;
}

/**
 * Links the old file's inode in as the backup; false (nothing left) where it cannot be kept that way: another
 * mount (EXDEV), no permission, or the name was swapped since it was read (another inode), or the inode has
 * other links (a later write through one of them would change the backup). The link does not follow a symlink.
 */
async function linkOld(from: { at: string; dev: number; ino: number }, file: string): Promise<boolean> {
  try {
    await linkInPool(from.at, file);
  } catch {
    return false;
  }
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (st && st.dev === from.dev && st.ino === from.ino && st.nlink === 2) return true;
  await unlinkIfPresent(file);
  return false;
}

/** Writes a copy aside and renames it to its name, so that a backup appears whole or not at all. */
async function writeCopy(part: string, file: string, content: Buffer): Promise<void> {
  const opened = openForWrite(part, 'w', 0o600);
  const fd = typeof opened === 'number' ? opened : await opened;
  try {
    await writeAll(fd, content);
  } finally {
    closeSync(fd);
  }
  await fs.rename(part, file);
}

/**
 * Moves a file into the backups (delete_file; a command's change replacing it, with `removed` false): a rename
 * on the same volume, a copy otherwise. `at` is the
 * file's handle name (ResolvedPath.at) and `expected` the inode that was checked: anything swapped in under
 * the name meanwhile is put back and refused, so no other object (a symlink's target) ends up in a backup.
 */
export async function moveToBackup(ws: Workspace, at: string, input: BackupInput, size: number, expected: { dev: number; ino: number }, removed = true): Promise<string | null> {
  if (ws.limits.backupKeep === 0) return null;
  const id = newId(input.rel);
  const dir = dirOf(ws, id);
  await ensureDir(ws, dir, input.rel);
  const file = path.join(dir, nameOf(id, input, removed));
  try {
    await fs.rename(at, file);
    const moved = await fs.lstat(file);
    if (moved.dev !== expected.dev || moved.ino !== expected.ino) {
      await fs.rename(file, at);
      throw E.replacedWhileDeleting(input.rel);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    // Copied under another name and renamed, so the backup appears complete or not at all. The copy is read
    // from a descriptor checked to be the expected file.
    const part = path.join(dir, `${id}.part`);
    const src = await fs.open(at, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
    try {
      const st = await src.stat();
      if (st.dev !== expected.dev || st.ino !== expected.ino) throw E.replacedWhileDeleting(input.rel);
      await fs.writeFile(part, await src.readFile(), { mode: 0o600 });
    } finally {
      await src.close();
    }
    await fs.rename(part, file);
    await fs.unlink(at);
  }
  knownSizes.set(file, size);
  listMade(dir, file);
  input.kept?.(id);
  await prune(ws, dir, size, id);
  return id;
}

/** The records of one directory's backups, newest first. */
function readMetas(dir: string): BackupMeta[] {
  const entries = entriesOf(dir, namesIn(dir));
  if (entries.length === 0) return [];
  const origin = originOf(dir, entries);
  const metas: BackupMeta[] = [];
  for (const e of entries) {
    const meta = metaOf(e, origin);
    if (meta) metas.push(meta);
  }
  return metas;
}

/**
 * Removes one backup; returns the bytes it held. In the thread pool: unlinking a large file frees its blocks,
 * which takes a while, and a caller that started the backup early goes on working meanwhile.
 */
async function removeBackup(e: Entry): Promise<number> {
  let size = knownSizes.get(e.data) ?? 0;
  knownSizes.delete(e.data);
  listGone(e);
  if (size === 0) {
    try {
      size = statSync(e.data).size;
    } catch {
      // Already gone (another replica pruned it).
    }
  }
  await Promise.all([unlinkIfPresent(e.data), e.metaFile && unlinkIfPresent(e.metaFile)]);
  return size;
}

/** fs.rm without its lstat and option checks: a backup is one regular file, and another replica may have removed it. */
async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await unlinkInPool(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Over TOOLGATE_BACKUP_MAX_BYTES, the oldest backups go until the total is this share of it: the scan that
 * finds them (every backup of the workspace) then runs once per tenth of the limit, not on every change.
 */
const PRUNE_TO = 0.9;

/** Running total of backup bytes per state directory, for each service: scanned once, then kept up to date. */
const BACKUP_TOTALS = new PartKind(() => new Map<string, number>());

/** Keeps `backupKeep` per file and at most `backupMaxBytes` in all, dropping the oldest first. */
async function prune(ws: Workspace, dir: string, added: number, made: string): Promise<void> {
  // Ids sort by creation time, so names alone tell which are the oldest: no record is read.
  const entries = listedEntries(dir);
  let removed = 0;
  // Read only when something would go: the backups a kept checkpoint needs stay (docs/api.md, "Turns, checkpoints and rewind").
  let needed: ReadonlySet<string> | null = null;
  const over = entries.slice(ws.limits.backupKeep);
  if (over.length > 0) {
    needed = await neededBackupIds(ws);
    const held = needed;
    for (const size of await Promise.all(over.filter((e) => !held.has(e.id)).map(removeBackup))) removed += size;
  }
  const totals = ws.runtime.part(BACKUP_TOTALS);
  let total = totals.get(ws.stateDir);
  total = total === undefined ? scanSizes(ws).reduce((n, b) => n + b.size, 0) : total + added - removed;
  if (total > ws.limits.backupMaxBytes) {
    // Exact again (other replicas add and prune too), then oldest first.
    const all = scanSizes(ws);
    needed ??= await neededBackupIds(ws);
    // The backup just made belongs to a change whose record is not written yet: it is as needed as any.
    const held = new Set(needed).add(made);
    total = all.reduce((n, b) => n + b.size, 0);
    const target = Math.floor(ws.limits.backupMaxBytes * PRUNE_TO);
    const oldest: Array<Promise<number>> = [];
    const heldGone: string[] = [];
    // Backups no checkpoint needs go first; the bytes bound is a bound on the disk, so past them the needed
    // ones go too, and with them the checkpoints that needed them (dropCheckpointsNeeding).
    for (const pass of [false, true]) {
      for (let i = 0; i < all.length && total > target; i++) {
        const b = all[i] as { entry: Entry; size: number };
        if (held.has(b.entry.id) !== pass) continue;
        oldest.push(removeBackup(b.entry));
        if (pass) heldGone.push(b.entry.id);
        total -= b.size;
      }
    }
    await Promise.all(oldest);
    if (heldGone.length > 0) await dropCheckpointsNeeding(ws, heldGone);
  }
  totals.set(ws.stateDir, total);
}

/** Every backup of the workspace with its size, oldest first, from directory listings and stats (no record is read). */
function scanSizes(ws: Workspace): Array<{ entry: Entry; size: number }> {
  const root = backupsRoot(ws);
  let dirs: string[];
  try {
    dirs = readdirSync(root);
  } catch {
    return [];
  }
  const all: Array<{ entry: Entry; size: number }> = [];
  const seen = new Set<string>();
  for (const d of dirs) {
    const dir = path.join(root, d);
    const names = namesIn(dir);
    removeOrphans(dir, names);
    for (const entry of entriesOf(dir, names)) {
      // A backup of the older kind being created (its meta is written first) or removed counts as empty, for now.
      const size = sizeOf(entry.data) ?? 0;
      seen.add(entry.data);
      all.push({ entry, size });
    }
  }
  for (const data of knownSizes.keys()) if (data.startsWith(root + path.sep) && !seen.has(data)) knownSizes.delete(data);
  // The part after the file key is the creation time (base 36, fixed width) and a random tail.
  return all.sort((a, b) => (a.entry.id.slice(17) < b.entry.id.slice(17) ? -1 : 1));
}

/**
 * A backup half made by a process killed with -9 is never listed nor pruned by count: a copy still under its
 * `.part` name, an origin's `.part`, and of the older kind data without its meta or a meta without data. They go
 * once older than this, so that one a live writer is making stays.
 */
const ORPHAN_GRACE_MS = 10 * 60 * 1000;

/** Removes the orphans among one file key's backup directory entries (see ORPHAN_GRACE_MS). */
function removeOrphans(dir: string, names: string[]): void {
  const present = new Set(names);
  const now = Date.now();
  for (const n of names) {
    const orphan = n.endsWith('.part') || (n.endsWith('.bak') ? !present.has(`${n.slice(0, -4)}.json`) : n.endsWith('.json') && !present.has(`${n.slice(0, -5)}.bak`));
    if (!orphan) continue;
    const file = path.join(dir, n);
    try {
      if (now - statSync(file).mtimeMs < ORPHAN_GRACE_MS) continue;
      unlinkSync(file);
      knownSizes.delete(file);
    } catch {
      // Gone meanwhile (completed or removed by another replica).
    }
  }
}

/** All backups (newest first), or those of one relative path. */
export async function listBackups(ws: Workspace, rel?: string): Promise<BackupMeta[]> {
  if (rel !== undefined) return readMetas(path.join(backupsRoot(ws), fileKey(rel)));
  const dirs = await fs.readdir(backupsRoot(ws)).catch(() => [] as string[]);
  const all = dirs.flatMap((d) => readMetas(path.join(backupsRoot(ws), d)));
  return all.sort((a, b) => (a.backup_id.slice(17) < b.backup_id.slice(17) ? 1 : -1));
}

export async function readBackup(ws: Workspace, id: string): Promise<{ meta: BackupMeta; content: Buffer }> {
  const e = findEntry(ws, id);
  const meta = e && metaOf(e, originOf(path.dirname(e.data), [e]));
  if (!e || !meta) throw E.backupNotFound(id);
  try {
    return { meta, content: await fs.readFile(e.data) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw E.backupNotFound(id);
    throw err;
  }
}

/**
 * Puts a file that moveToBackup took back at `at` (undo_edit after a delete; the caller holds the file's lock and
 * found nothing there): the backup's data is renamed back, so the file returns with its content, mode and times,
 * that is its version, and the backup goes, since the change it kept is taken back. False when the backups lie
 * on another volume (the data was copied there): nothing was done, and the caller writes the content itself
 * and then drops the backup (dropBackup).
 */
export async function returnRemovedFile(ws: Workspace, meta: BackupMeta, at: string): Promise<boolean> {
  const e = findEntry(ws, meta.backup_id);
  if (!e) throw E.backupNotFound(meta.backup_id);
  try {
    await fs.rename(e.data, at);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EXDEV') return false;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw E.backupNotFound(meta.backup_id);
    throw err;
  }
  await forget(ws, e, meta.size_bytes);
  return true;
}

/** Removes a backup whose change was taken back (its content is the file again). */
export async function dropBackup(ws: Workspace, meta: BackupMeta): Promise<void> {
  const e = findEntry(ws, meta.backup_id);
  if (!e) return;
  await unlinkIfPresent(e.data);
  await forget(ws, e, meta.size_bytes);
}

/**
 * Removes a backup made for a change that was then refused before its rename (stopped, or its commit failed):
 * linked, it would still share the inode of the file it was taken from, which keeps its content anyway.
 */
export async function discardBackup(ws: Workspace, id: string): Promise<void> {
  const e = findEntry(ws, id);
  if (!e) return;
  const size = knownSizes.get(e.data) ?? 0;
  await unlinkIfPresent(e.data);
  await forget(ws, e, size);
}

/** The meta of a backup whose data is gone (older kind), and its bytes off the running total. */
async function forget(ws: Workspace, e: Entry, size: number): Promise<void> {
  knownSizes.delete(e.data);
  listGone(e);
  if (e.metaFile !== null) await unlinkIfPresent(e.metaFile);
  const totals = ws.runtime.part(BACKUP_TOTALS);
  const total = totals.get(ws.stateDir);
  if (total !== undefined) totals.set(ws.stateDir, Math.max(0, total - size));
}

/**
 * The newest backup of `rel` whose content had this sha256, up to `maxBytes`, or null. Synchronous: it runs only
 * on a version conflict, under the file's lock, over the few backups one file keeps.
 */
export function findBackupBySha256(ws: Workspace, rel: string, sha256: string, maxBytes: number): { meta: BackupMeta; content: Buffer } | null {
  const dir = path.join(backupsRoot(ws), fileKey(rel));
  const entries = entriesOf(dir, namesIn(dir));
  if (entries.length === 0) return null;
  const origin = originOf(dir, entries);
  for (const e of entries) {
    // The newer kind names its sha256: only the match is read.
    if (e.name && e.name[4] !== sha256) continue;
    const meta = metaOf(e, origin);
    if (!meta || meta.sha256 !== sha256 || meta.path !== rel || meta.size_bytes > maxBytes) continue;
    try {
      return { meta, content: readFileSync(e.data) };
    } catch {
      // Pruned meanwhile: look further.
    }
  }
  return null;
}
