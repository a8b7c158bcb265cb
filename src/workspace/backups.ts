// Backups (docs/api.md, "Durable writes and backups"): the old content of a file before it is overwritten, edited, replaced or deleted,
// kept under <state>/backups/<file key>/ with bounded retention (count per file, total bytes).
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants as fsConstants, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { E } from '../errors.js';
import { dropCheckpointsNeeding, neededBackupIds } from './checkpoints.js';
import { openForWrite, writeAll } from './sync-first-io.js';
import { PartKind } from './runtime.js';
import type { Workspace } from './workspace.js';

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

/**
 * Sizes of backup data files by path. A backup's data never changes once its meta exists (createBackup writes
 * the data first; moveToBackup renames it in whole), so a size seen once is kept until the backup is gone:
 * a scan then lists directories and stats only the backups it has not seen before. Process-wide: a cache of
 * facts that never change, whichever service learnt them.
 */
const knownSizes = new Map<string, number>();

function fileKey(rel: string): string {
  return createHash('sha256').update(rel).digest('hex').slice(0, 16);
}
function backupsRoot(ws: Workspace): string {
  return path.join(ws.stateDir, 'backups');
}
function newId(rel: string): string {
  return `${fileKey(rel)}-${Date.now().toString(36).padStart(9, '0')}-${randomBytes(3).toString('hex')}`;
}
function locate(ws: Workspace, id: string): { dir: string; data: string; meta: string } {
  const m = ID_RE.exec(id);
  if (!m) throw E.backupIdInvalid(id);
  const dir = path.join(backupsRoot(ws), m[1] as string);
  return { dir, data: path.join(dir, `${id}.bak`), meta: path.join(dir, `${id}.json`) };
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
}

/** Keeps `content` as a backup of `rel`; returns the backup id, or null when backups are disabled. */
export async function createBackup(ws: Workspace, input: BackupInput, content: Buffer): Promise<string | null> {
  if (ws.limits.backupKeep === 0) return null;
  const id = newId(input.rel);
  const loc = locate(ws, id);
  mkdirSync(loc.dir, { recursive: true, mode: 0o700 });
  // Backups are an undo aid written before the change, not made durable (the file itself is). They are
  // copies: the service never creates hard links (docs/api.md, "Sandbox"), which would also tie a backup to a user's inode.
  await writeNew(loc.data, content);
  knownSizes.set(loc.data, content.length);
  await writeMeta(loc.meta, id, ws.id, input, content.length);
  input.kept?.(id);
  await prune(ws, loc.dir, content.length, id);
  return id;
}

/** Creates a backup file (see openForWrite); a large one is written in one call in the thread pool (fs.writeFile would make a round trip per 512 KiB). */
async function writeNew(file: string, content: Buffer): Promise<void> {
  const opened = openForWrite(file, 'w', 0o600);
  const fd = typeof opened === 'number' ? opened : await opened;
  try {
    await writeAll(fd, content);
  } finally {
    closeSync(fd);
  }
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
  const loc = locate(ws, id);
  await fs.mkdir(loc.dir, { recursive: true, mode: 0o700 });
  await writeMeta(loc.meta, id, ws.id, input, size, removed);
  try {
    await fs.rename(at, loc.data);
    const moved = await fs.lstat(loc.data);
    if (moved.dev !== expected.dev || moved.ino !== expected.ino) {
      await fs.rename(loc.data, at);
      throw E.replacedWhileDeleting(input.rel);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') {
      await fs.rm(loc.meta, { force: true });
      throw err;
    }
    // Copied under another name and renamed, so the backup's data appears complete or not at all (scanSizes
    // remembers the size it sees). The copy is read from a descriptor checked to be the expected file.
    const part = `${loc.data}.part`;
    const src = await fs.open(at, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
    try {
      const st = await src.stat();
      if (st.dev !== expected.dev || st.ino !== expected.ino) throw E.replacedWhileDeleting(input.rel);
      await fs.writeFile(part, await src.readFile());
    } finally {
      await src.close();
    }
    await fs.rename(part, loc.data);
    await fs.unlink(at);
  }
  input.kept?.(id);
  await prune(ws, loc.dir, size, id);
  return id;
}

async function writeMeta(file: string, id: string, project: string | null, input: BackupInput, size: number, removed = false): Promise<void> {
  const meta: BackupMeta = {
    backup_id: id,
    project,
    path: input.rel,
    operation: input.operation,
    created_at: new Date().toISOString(),
    size_bytes: size,
    sha256: input.sha256,
    mode: input.mode,
    ...(input.actor !== undefined && { actor: input.actor }),
    ...(removed && { removed }),
  };
  await writeNew(file, Buffer.from(JSON.stringify(meta)));
}

async function readMetas(dir: string): Promise<BackupMeta[]> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const metas: BackupMeta[] = [];
  for (const n of names) {
    if (!n.endsWith('.json')) continue;
    try {
      metas.push(JSON.parse(await fs.readFile(path.join(dir, n), 'utf8')) as BackupMeta);
    } catch {
      // A half-written meta of a concurrent backup or a crash: ignore it.
    }
  }
  return metas.sort((a, b) => (a.backup_id < b.backup_id ? 1 : -1));
}

/**
 * Removes one backup; returns the bytes it held. In the thread pool: unlinking a large file frees its blocks,
 * which takes a while, and a caller that started the backup early goes on working meanwhile.
 */
async function removeBackup(ws: Workspace, id: string): Promise<number> {
  const loc = locate(ws, id);
  let size = knownSizes.get(loc.data) ?? 0;
  knownSizes.delete(loc.data);
  if (size === 0) {
    try {
      size = statSync(loc.data).size;
    } catch {
      // Already gone (another replica pruned it).
    }
  }
  await Promise.all([unlinkIfPresent(loc.data), unlinkIfPresent(loc.meta)]);
  return size;
}

/** fs.rm without its lstat and option checks: a backup is one regular file, and another replica may have removed it. */
async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await fs.unlink(file);
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
  // Ids sort by creation time, so names alone tell which are the oldest: no meta file is read.
  const ids = readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .map((n) => n.slice(0, -5))
    .sort()
    .reverse();
  let removed = 0;
  // Read only when something would go: the backups a kept checkpoint needs stay (docs/api.md, "Turns, checkpoints and rewind").
  let needed: ReadonlySet<string> | null = null;
  const over = ids.slice(ws.limits.backupKeep);
  if (over.length > 0) {
    needed = await neededBackupIds(ws);
    const held = needed;
    for (const size of await Promise.all(over.filter((id) => !held.has(id)).map((old) => removeBackup(ws, old)))) removed += size;
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
        const b = all[i] as { id: string; size: number };
        if (held.has(b.id) !== pass) continue;
        oldest.push(removeBackup(ws, b.id));
        if (pass) heldGone.push(b.id);
        total -= b.size;
      }
    }
    await Promise.all(oldest);
    if (heldGone.length > 0) await dropCheckpointsNeeding(ws, heldGone);
  }
  totals.set(ws.stateDir, total);
}

/** Every backup of the workspace with its size, oldest first, from directory listings and stats (no meta file is read). */
function scanSizes(ws: Workspace): Array<{ id: string; size: number }> {
  const root = backupsRoot(ws);
  let dirs: string[];
  try {
    dirs = readdirSync(root);
  } catch {
    return [];
  }
  const all: Array<{ id: string; size: number }> = [];
  const seen = new Set<string>();
  for (const d of dirs) {
    let names: string[];
    try {
      names = readdirSync(path.join(root, d));
    } catch {
      continue;
    }
    removeOrphans(path.join(root, d), names);
    for (const n of names) {
      if (!n.endsWith('.json')) continue;
      const id = n.slice(0, -5);
      if (!ID_RE.test(id)) continue;
      const data = path.join(root, d, `${id}.bak`);
      let size = knownSizes.get(data);
      if (size === undefined) {
        try {
          size = statSync(data).size;
          knownSizes.set(data, size);
        } catch {
          // A backup being created (moveToBackup writes its meta first) or removed: counts as empty, for now.
          size = 0;
        }
      }
      seen.add(data);
      all.push({ id, size });
    }
  }
  for (const data of knownSizes.keys()) if (data.startsWith(root + path.sep) && !seen.has(data)) knownSizes.delete(data);
  // The part after the file key is the creation time (base 36, fixed width) and a random tail.
  return all.sort((a, b) => (a.id.slice(17) < b.id.slice(17) ? -1 : 1));
}

/**
 * A backup half made by a process killed with -9 is never listed nor pruned by count (both go by the meta):
 * data without its meta (createBackup writes the data first), a meta without data (moveToBackup writes the
 * meta first), a `.part` copy. They go once older than this, so that one a live writer is making stays.
 */
const ORPHAN_GRACE_MS = 10 * 60 * 1000;

/** Removes the orphans among one file key's backup directory entries (see ORPHAN_GRACE_MS). */
function removeOrphans(dir: string, names: string[]): void {
  const present = new Set(names);
  const now = Date.now();
  for (const n of names) {
    const orphan = n.endsWith('.bak') ? !present.has(`${n.slice(0, -4)}.json`) : n.endsWith('.json') ? !present.has(`${n.slice(0, -5)}.bak`) : n.endsWith('.bak.part');
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
  const all = (await Promise.all(dirs.map((d) => readMetas(path.join(backupsRoot(ws), d))))).flat();
  return all.sort((a, b) => (a.backup_id.slice(17) < b.backup_id.slice(17) ? 1 : -1));
}

export async function readBackup(ws: Workspace, id: string): Promise<{ meta: BackupMeta; content: Buffer }> {
  const loc = locate(ws, id);
  try {
    const meta = JSON.parse(await fs.readFile(loc.meta, 'utf8')) as BackupMeta;
    return { meta, content: await fs.readFile(loc.data) };
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
  const loc = locate(ws, meta.backup_id);
  try {
    await fs.rename(loc.data, at);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EXDEV') return false;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw E.backupNotFound(meta.backup_id);
    throw err;
  }
  await forget(ws, loc, meta.size_bytes);
  return true;
}

/** Removes a backup whose change was taken back (its content is the file again). */
export async function dropBackup(ws: Workspace, meta: BackupMeta): Promise<void> {
  const loc = locate(ws, meta.backup_id);
  await unlinkIfPresent(loc.data);
  await forget(ws, loc, meta.size_bytes);
}

/** The meta of a backup whose data is gone, and its bytes off the running total. */
async function forget(ws: Workspace, loc: { data: string; meta: string }, size: number): Promise<void> {
  knownSizes.delete(loc.data);
  await unlinkIfPresent(loc.meta);
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
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort().reverse();
  } catch {
    return null;
  }
  for (const n of names) {
    try {
      const meta = JSON.parse(readFileSync(path.join(dir, n), 'utf8')) as BackupMeta;
      if (meta.sha256 !== sha256 || meta.path !== rel || meta.size_bytes > maxBytes) continue;
      return { meta, content: readFileSync(locate(ws, meta.backup_id).data) };
    } catch {
      // Half-written or pruned meanwhile: look further.
    }
  }
  return null;
}
