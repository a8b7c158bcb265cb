// The record of what every change did, grouped into checkpoints (docs/api.md, "Turns, checkpoints and rewind"):
// one small JSON file per mutating call under <state>/checkpoints/records/, written whole and renamed into
// place, so replicas on one volume see the same records and a restart keeps them. A record names what changed
// and the backups that hold the content before (its pre-images); it never copies a file.
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Workspace } from './workspace.js';

export const CHECKPOINT_OPS = ['create', 'update', 'delete', 'move'] as const;
export type CheckpointOp = (typeof CHECKPOINT_OPS)[number];
export type CheckpointKind = 'file' | 'directory' | 'symlink' | 'other';

/** One path a call changed. */
export interface RecordedChange {
  /** The path as the call named it (relative to the project root); a move's source. */
  path: string;
  op: CheckpointOp;
  kind: CheckpointKind;
  /** A move's destination. */
  to?: string;
  /** sha256 of the file before (null: none, or a directory). */
  sha256_before: string | null;
  /** sha256 of the file the change left (null: removed, a directory, or not known). */
  sha256_after: string | null;
  /** The backup that holds the content before (null: none known; a rewind then looks one up by sha256). */
  backup_id: string | null;
  lines_added: number;
  lines_removed: number;
}

/** What one mutating call changed, and under which turn. */
export interface CheckpointRecord {
  id: string;
  turn: string | null;
  at: string;
  actor: string | null;
  tool: string;
  request_id: string;
  changes: RecordedChange[];
  /** A rewind's own record: the checkpoint it rewound to. */
  rewound_to?: string;
}

/** A checkpoint: every record of one turn (or the one record of a call without a turn), oldest first. */
export interface Checkpoint {
  id: string;
  turn: string | null;
  records: CheckpointRecord[];
}

const RECORD_ID = /^[0-9a-z]{9}-[0-9a-z]{4}-[0-9a-f]{6}$/;
export const DEFAULT_CHECKPOINT_MAX_TURNS = 100;
export const DEFAULT_CHECKPOINT_MAX_AGE_MS = 30 * 24 * 3600 * 1000;
/** Appends between two retention checks of one process (a check lists the records). */
const RETENTION_EVERY = 256;

function checkpointsDir(ws: Workspace): string {
  return path.join(ws.stateDir, 'checkpoints');
}
function recordsDir(ws: Workspace): string {
  return path.join(checkpointsDir(ws), 'records');
}
function prunedFile(ws: Workspace): string {
  return path.join(checkpointsDir(ws), 'pruned.json');
}

let lastMs = 0;
let seq = 0;

/**
 * A record id that sorts in the order the changes were made: the time, then a sequence within this process's
 * millisecond. Taken when a call announces its change, under the file's lock, so two changes of one file sort
 * as they happened even when their records are written in the other order.
 */
export function newRecordId(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    seq = 0;
  } else seq++;
  return `${lastMs.toString(36).padStart(9, '0')}-${seq.toString(36).padStart(4, '0')}-${randomBytes(3).toString('hex')}`;
}

/** The time in a record id, ms. */
export function timeOfRecordId(id: string): number {
  return parseInt(id.slice(0, 9), 36);
}

export function isRecordId(id: string): boolean {
  return RECORD_ID.test(id);
}

interface Store {
  records: Map<string, CheckpointRecord>;
  loaded: boolean;
  /** When the directory was last listed (ms): the other replicas' records are seen from then on. */
  listedAt: number;
  appends: number;
  /** Checkpoints among the cached records (turns seen, plus records without a turn), the oldest record's time, and the backups they hold. */
  turns: Set<string>;
  count: number;
  oldestMs: number;
  needed: Set<string>;
  /** A retention pass a write started: the writes that find the limit passed meanwhile do not start another. */
  retention: Promise<unknown> | null;
  /** The last of the passes that prune, run one after the other (serially). */
  passes?: Promise<unknown>;
}
/** Records by state directory: a record never changes once written, so each file is read once per process. */
const stores = new Map<string, Store>();

function storeOf(ws: Workspace): Store {
  let store = stores.get(ws.stateDir);
  if (!store) stores.set(ws.stateDir, (store = { records: new Map(), loaded: false, listedAt: 0, appends: 0, turns: new Set(), count: 0, oldestMs: Infinity, needed: new Set(), retention: null }));
  return store;
}

/**
 * Writes the record whole under a hidden name and renames it into place: a reader sees all of it or nothing.
 * Synchronous: a few hundred bytes to the page cache (no fsync, like a backup), where the thread pool would
 * queue it behind the writes' fsyncs (docs/api.md, "Turns, checkpoints and rewind").
 */
export function writeRecord(ws: Workspace, record: CheckpointRecord): void {
  const dir = recordsDir(ws);
  const file = path.join(dir, `${record.id}.json`);
  const temp = path.join(dir, `.${record.id}.${randomBytes(3).toString('hex')}`);
  const text = JSON.stringify(record);
  try {
    writeFileSync(temp, text, { mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(temp, text, { mode: 0o600 });
  }
  renameSync(temp, file);
  const store = storeOf(ws);
  const first = !store.loaded;
  store.records.set(record.id, record);
  count(store, record);
  // The cache holds this process's view: past a limit there (by a tenth, so that pruning goes in batches and not
  // at every write), or now and then for the other replicas' records, the directory decides. In the
  // background: a checkpoint kept a little longer only holds its backups a little longer; list_checkpoints and
  // rewind apply the limits themselves first.
  if ((first || ++store.appends % RETENTION_EVERY === 0 || overLimits(ws, store)) && !store.retention) {
    store.retention = applyRetention(ws)
      .catch(() => undefined)
      .finally(() => (store.retention = null));
  }
}

function count(store: Store, r: CheckpointRecord): void {
  if (r.turn === null || !store.turns.has(r.turn)) store.count++;
  if (r.turn !== null) store.turns.add(r.turn);
  store.oldestMs = Math.min(store.oldestMs, timeOfRecordId(r.id));
  for (const c of r.changes) if (c.backup_id) store.needed.add(c.backup_id);
}

/** The counts again from the cached records (after some went). */
function recount(store: Store): CheckpointRecord[] {
  const all = [...store.records.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  store.turns = new Set();
  store.count = 0;
  store.oldestMs = Infinity;
  store.needed = new Set();
  for (const r of all) count(store, r);
  return all;
}

function overLimits(ws: Workspace, store: Store): boolean {
  const maxTurns = ws.limits.checkpointMaxTurns ?? DEFAULT_CHECKPOINT_MAX_TURNS;
  const maxAge = ws.limits.checkpointMaxAgeMs ?? DEFAULT_CHECKPOINT_MAX_AGE_MS;
  return store.count > maxTurns + Math.max(1, Math.floor(maxTurns / 10)) || Date.now() - store.oldestMs > maxAge;
}

/** Whether the record with this id exists (a rewind's recovery writes its record once). */
export async function hasRecord(ws: Workspace, id: string): Promise<boolean> {
  try {
    await fs.access(path.join(recordsDir(ws), `${id}.json`));
    return true;
  } catch {
    return false;
  }
}

/** Every record of the project, oldest first (other replicas' included: the directory is listed each time). */
export async function readRecords(ws: Workspace): Promise<CheckpointRecord[]> {
  const store = storeOf(ws);
  const names = await fs.readdir(recordsDir(ws)).catch(() => [] as string[]);
  const present = new Set<string>();
  const fresh: string[] = [];
  for (const n of names) {
    if (!n.endsWith('.json')) continue;
    const id = n.slice(0, -5);
    if (!RECORD_ID.test(id)) continue;
    present.add(id);
    if (!store.records.has(id)) fresh.push(id);
  }
  await Promise.all(
    fresh.map(async (id) => {
      try {
        const rec = JSON.parse(await fs.readFile(path.join(recordsDir(ws), `${id}.json`), 'utf8')) as CheckpointRecord;
        if (rec && rec.id === id && Array.isArray(rec.changes)) store.records.set(id, rec);
      } catch {
        // Pruned meanwhile by another replica, or not a record: skip it.
      }
    }),
  );
  for (const id of store.records.keys()) if (!present.has(id)) store.records.delete(id);
  store.loaded = true;
  store.listedAt = Date.now();
  return recount(store);
}

/** The records grouped into checkpoints (one per turn, one per call without a turn), oldest first. */
export function groupCheckpoints(records: readonly CheckpointRecord[]): Checkpoint[] {
  const byTurn = new Map<string, Checkpoint>();
  const all: Checkpoint[] = [];
  for (const r of records) {
    if (r.turn === null) {
      all.push({ id: r.id, turn: null, records: [r] });
      continue;
    }
    let cp = byTurn.get(r.turn);
    if (!cp) {
      cp = { id: r.id, turn: r.turn, records: [] };
      byTurn.set(r.turn, cp);
      all.push(cp);
    }
    cp.records.push(r);
  }
  return all;
}

export interface PrunedNote {
  /** Checkpoints pruned by retention so far (as this volume counted them). */
  count: number;
  /** The newest pruned checkpoint's time: nothing before it can be rewound. */
  before: string | null;
}

export async function readPruned(ws: Workspace): Promise<PrunedNote> {
  try {
    const note = JSON.parse(await fs.readFile(prunedFile(ws), 'utf8')) as PrunedNote;
    return { count: Number(note.count) || 0, before: typeof note.before === 'string' ? note.before : null };
  } catch {
    return { count: 0, before: null };
  }
}

/**
 * Drops the checkpoints past TOOLGATE_CHECKPOINT_MAX_TURNS (the oldest) or older than the age limit: their record
 * files go, and with them the hold on their backups (neededBackupIds). The note says how many went and up to when.
 */
export function applyRetention(ws: Workspace, now = Date.now()): Promise<number> {
  return serially(ws, () => retentionPass(ws, now));
}

/** Retention passes of one project run one after the other in a process, so none counts what another removed. */
function serially<T>(ws: Workspace, pass: () => Promise<T>): Promise<T> {
  const store = storeOf(ws);
  const run = (store.passes ?? Promise.resolve()).then(pass);
  store.passes = run.catch(() => undefined);
  return run;
}

async function retentionPass(ws: Workspace, now: number): Promise<number> {
  const maxTurns = ws.limits.checkpointMaxTurns ?? DEFAULT_CHECKPOINT_MAX_TURNS;
  const maxAge = ws.limits.checkpointMaxAgeMs ?? DEFAULT_CHECKPOINT_MAX_AGE_MS;
  const checkpoints = groupCheckpoints(await readRecords(ws));
  const cut = Math.max(0, checkpoints.length - maxTurns);
  const gone = checkpoints.filter((cp, i) => i < cut || now - timeOfRecordId(cp.id) > maxAge);
  return pruneCheckpoints(ws, gone);
}

/**
 * Backups that the bytes bound (TOOLGATE_BACKUP_MAX_BYTES) removed although checkpoints needed them: every
 * checkpoint whose rewind would need one goes too (the one holding it and all older ones, whose rewinds pass
 * through it), so that no listed checkpoint is one a rewind must refuse.
 */
export function dropCheckpointsNeeding(ws: Workspace, backupIds: readonly string[]): Promise<number> {
  return serially(ws, () => dropPass(ws, backupIds));
}

async function dropPass(ws: Workspace, backupIds: readonly string[]): Promise<number> {
  const ids = new Set(backupIds);
  const checkpoints = groupCheckpoints(await readRecords(ws));
  let last = -1;
  checkpoints.forEach((cp, i) => {
    if (cp.records.some((r) => r.changes.some((c) => c.backup_id !== null && ids.has(c.backup_id)))) last = i;
  });
  return pruneCheckpoints(ws, checkpoints.slice(0, last + 1));
}

async function pruneCheckpoints(ws: Workspace, gone: readonly Checkpoint[]): Promise<number> {
  if (gone.length === 0) return 0;
  const store = storeOf(ws);
  // A checkpoint counts as pruned here when this process removed one of its records (another replica may prune too).
  const removed = await Promise.all(
    gone.map(async (cp) => {
      const mine = await Promise.all(
        cp.records.map(async (r) => {
          store.records.delete(r.id);
          return fs.unlink(path.join(recordsDir(ws), `${r.id}.json`)).then(
            () => true,
            () => false,
          );
        }),
      );
      return mine.some(Boolean) ? cp : null;
    }),
  );
  recount(store);
  const counted = removed.filter((cp): cp is Checkpoint => cp !== null);
  if (counted.length === 0) return 0;
  const note = await readPruned(ws);
  const newest = counted[counted.length - 1] as Checkpoint;
  const last = newest.records[newest.records.length - 1] as CheckpointRecord;
  const before = note.before !== null && note.before > last.at ? note.before : last.at;
  const temp = `${prunedFile(ws)}.${randomBytes(3).toString('hex')}`;
  await fs.writeFile(temp, JSON.stringify({ count: note.count + counted.length, before }), { mode: 0o600 });
  await fs.rename(temp, prunedFile(ws));
  return counted.length;
}

/** How long this process trusts its view of the records when backups are pruned (other replicas add theirs). */
const NEEDED_FRESH_MS = 1000;

/** The backups kept checkpoints hold: backup pruning leaves them (src/workspace/backups.ts). */
export async function neededBackupIds(ws: Workspace): Promise<ReadonlySet<string>> {
  const store = storeOf(ws);
  if (!store.loaded || Date.now() - store.listedAt > NEEDED_FRESH_MS) await readRecords(ws);
  return store.needed;
}
