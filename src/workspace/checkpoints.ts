// The record of what every change did, grouped into checkpoints (docs/api.md, "Turns, checkpoints and rewind"):
// one JSON line per mutating call, appended (O_APPEND, one write) to this process's segment file under
// <state>/checkpoints/log/, so replicas on one volume read the same records and a restart keeps them. A record
// names what changed and the backups that hold the content before (its pre-images); it never copies a file.
// Retention never rewrites a segment: a watermark in pruned.json marks the checkpoints that went, and a segment
// whose records all went is removed.
import fsCallbacks, { closeSync, fstatSync, mkdirSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomHex } from './random-hex.js';
import { openForWrite, readAll, readAt, renameFile, syncInFlight, writeAll } from './sync-first-io.js';
import { PartKind, type ServiceRuntime } from './runtime.js';
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
/** A process starts a new segment past this size or age, so that an old one stops growing and can go. */
const SEGMENT_MAX_BYTES = 1024 * 1024;
const SEGMENT_MAX_AGE_MS = 5 * 60 * 1000;
/** A segment whose records all went is removed once unchanged this long: its writer has moved to a new one. */
const SEGMENT_IDLE_MS = 2 * SEGMENT_MAX_AGE_MS;
/** Turns of pruned checkpoints remembered, so that a turn's later records never bring it back. */
const DEAD_TURNS_KEPT = 10_000;

function checkpointsDir(ws: Workspace): string {
  return path.join(ws.stateDir, 'checkpoints');
}
function logDir(ws: Workspace): string {
  return path.join(checkpointsDir(ws), 'log');
}
function prunedFile(ws: Workspace): string {
  return path.join(checkpointsDir(ws), 'pruned.json');
}

// A process-wide clock on purpose: the ids of two services sharing a state directory still sort as made.
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
  return `${lastMs.toString(36).padStart(9, '0')}-${seq.toString(36).padStart(4, '0')}-${randomHex(3)}`;
}

/** The time in a record id, ms. */
export function timeOfRecordId(id: string): number {
  return parseInt(id.slice(0, 9), 36);
}

export function isRecordId(id: string): boolean {
  return RECORD_ID.test(id);
}

interface Segment {
  /** Bytes read so far, up to the last complete line. */
  offset: number;
  ids: Set<string>;
}

interface Store {
  /** Every record read or written, dead ones (past the watermark) included. */
  records: Map<string, CheckpointRecord>;
  segments: Map<string, Segment>;
  loaded: boolean;
  /** When the directory was last listed (ms): the other replicas' records are seen from then on. */
  listedAt: number;
  appends: number;
  /** This service's segment. */
  writer: Writer | null;
  pruned: PrunedNote;
  deadTurns: Set<string>;
  /** Every turn in the cache (a record of one joins its checkpoint). */
  turns: Set<string>;
  /** The live checkpoints in the cache, their oldest record's time, and the backups they hold. */
  count: number;
  oldestMs: number;
  needed: Set<string>;
  /** A retention pass a write started: the writes that find the limit passed meanwhile do not start another. */
  retention: Promise<unknown> | null;
  /** The last of the passes that prune, run one after the other (serially). */
  passes?: Promise<unknown>;
}
/** One service's view of the records (its ServiceRuntime holds it); other services' segments it reads as a replica's. */
class RecordCaches {
  /** Records by state directory: a record never changes once written, so each line is read once per service. */
  readonly stores = new Map<string, Store>();
  /** Appends being written in the thread pool by this service: its own reads wait for them, a shutdown too. */
  readonly pending = new Set<Promise<void>>();
}

const RECORD_CACHES = new PartKind(() => new RecordCaches());

function storeOf(ws: Workspace, caches = ws.runtime.part(RECORD_CACHES)): Store {
  const { stores } = caches;
  let store = stores.get(ws.stateDir);
  if (!store) {
    store = { records: new Map(), segments: new Map(), loaded: false, listedAt: 0, appends: 0, writer: null, pruned: { count: 0, before: null, through: null, turns: [] }, deadTurns: new Set(), turns: new Set(), count: 0, oldestMs: Infinity, needed: new Set(), retention: null };
    stores.set(ws.stateDir, store);
  }
  return store;
}

/**
 * Keeps the record: in this service's view at once, and as one line appended to its segment. One
 * write to an open file, no file made or renamed per call (each record as a file of its own made write_file
 * 0.7x as fast at 32 callers, its creation waiting behind the writes' fsyncs). On the event loop unless an fsync
 * runs (src/workspace/sync-first-io.ts). No fsync, like a backup. The promise settles when the line is written.
 */
export function writeRecord(ws: Workspace, record: CheckpointRecord): Promise<void> {
  const caches = ws.runtime.part(RECORD_CACHES);
  const store = storeOf(ws, caches);
  const first = !store.loaded;
  store.records.set(record.id, record);
  count(store, record);
  let written: Promise<void>;
  try {
    const line = Buffer.from(`${JSON.stringify(record)}\n`);
    const w = writerOf(ws, store, line.length);
    store.segments.get(w.name)?.ids.add(record.id);
    written = syncInFlight() || w.appender.busy() ? w.appender.append(line) : (appendSync(w.fd, line), Promise.resolve());
  } catch (err) {
    written = Promise.reject(err as Error);
  }
  const { pending } = caches;
  pending.add(written);
  void written.catch(() => undefined).finally(() => pending.delete(written));
  // The cache holds this process's view: past a limit there (by a tenth, so that pruning goes in batches and not
  // at every write), or now and then for the other replicas' records, the directory decides. In the
  // background: a checkpoint kept a little longer only holds its backups a little longer; list_checkpoints and
  // rewind apply the limits themselves first.
  if ((first || ++store.appends % RETENTION_EVERY === 0 || overLimits(ws, store)) && !store.retention) {
    store.retention = applyRetention(ws)
      .catch(() => undefined)
      .finally(() => (store.retention = null));
  }
  return written;
}

function appendSync(fd: number, line: Buffer): void {
  // O_APPEND: a regular file takes the whole buffer in one write, placed after every other writer's.
  writeSync(fd, line);
}

/**
 * Appends to one segment in the thread pool, one write at a time: the lines that come while one is being written
 * go out together in the next, so that 32 callers' records cost a few round trips through the pool, not one each.
 * Each line's promise settles when its group is written.
 */
class Appender {
  /** The write in the thread pool, settled either way (null when none). */
  private writing: Promise<void> | null = null;
  /** The lines that wait for it, written together next. */
  private waiting: { lines: Buffer[]; written: Promise<void> } | null = null;

  constructor(private readonly fd: number) {}

  /** A write is in the pool or lines wait: a line written synchronously now would go before theirs. */
  busy(): boolean {
    return this.writing !== null;
  }

  append(line: Buffer): Promise<void> {
    if (this.waiting) {
      this.waiting.lines.push(line);
      return this.waiting.written;
    }
    if (!this.writing) return this.start([line]);
    const lines = [line];
    const written = this.writing.then(() => {
      this.waiting = null;
      return this.start(lines);
    });
    this.waiting = { lines, written };
    return written;
  }

  private start(lines: Buffer[]): Promise<void> {
    const data = lines.length === 1 ? (lines[0] as Buffer) : Buffer.concat(lines);
    // O_APPEND: the group is one write, placed whole after every other writer's (see appendSync).
    const written = new Promise<void>((resolve, reject) => fsCallbacks.write(this.fd, data, (err) => (err ? reject(err) : resolve())));
    const settled: Promise<void> = written.then(
      () => this.finished(settled),
      () => this.finished(settled),
    );
    this.writing = settled;
    return written;
  }

  private finished(settled: Promise<void>): void {
    if (this.writing === settled && !this.waiting) this.writing = null;
  }
}

interface Writer {
  name: string;
  fd: number;
  bytes: number;
  openedMs: number;
  appender: Appender;
}

/** This service's open segment, a new one past its size or age. */
function writerOf(ws: Workspace, store: Store, adding: number): Writer {
  const now = Date.now();
  let w = store.writer;
  if (w && (w.bytes + adding > SEGMENT_MAX_BYTES || now - w.openedMs > SEGMENT_MAX_AGE_MS)) {
    const old = w.fd;
    // Closed once the appends already handed to the thread pool are written.
    void Promise.allSettled([...ws.runtime.part(RECORD_CACHES).pending]).then(() => closeSync(old));
    w = store.writer = null;
  }
  if (!w) {
    const dir = logDir(ws);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const name = `${now.toString(36).padStart(9, '0')}-${ws.instanceId}-${randomHex(3)}.jsonl`;
    const fd = openSync(path.join(dir, name), 'a', 0o600);
    w = store.writer = { name, fd, bytes: 0, openedMs: now, appender: new Appender(fd) };
    store.segments.set(name, { offset: 0, ids: new Set() });
  }
  w.bytes += adding;
  return w;
}

/** Waits for the appends this service is writing (before a listing of the directory, and at shutdown). */
export async function settleRecords(runtime: ServiceRuntime): Promise<void> {
  await Promise.allSettled([...runtime.part(RECORD_CACHES).pending]);
}

/** At shutdown: the appends written, and the segments of these workspaces closed (a volume can then be unmounted). */
export async function closeRecords(runtime: ServiceRuntime, workspaces: readonly Workspace[]): Promise<void> {
  await settleRecords(runtime);
  for (const ws of workspaces) {
    const store = runtime.part(RECORD_CACHES).stores.get(ws.stateDir);
    if (!store?.writer) continue;
    closeSync(store.writer.fd);
    store.writer = null;
  }
}

function dead(store: Store, cp: Checkpoint): boolean {
  const { through } = store.pruned;
  return (through !== null && cp.id <= through) || (cp.turn !== null && store.deadTurns.has(cp.turn));
}

/** The live checkpoints' counts again from the cached records. */
function recount(store: Store): CheckpointRecord[] {
  const all = [...store.records.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const groups = groupAll(all);
  // Pruned ones leave memory (their segment's offset is past them, so they are not read again).
  for (const cp of groups) {
    if (!dead(store, cp)) continue;
    for (const r of cp.records) {
      store.records.delete(r.id);
      for (const seg of store.segments.values()) seg.ids.delete(r.id);
    }
  }
  const live = groups.filter((cp) => !dead(store, cp));
  store.count = live.length;
  store.turns = new Set(all.flatMap((r) => (r.turn === null ? [] : [r.turn])));
  store.oldestMs = Infinity;
  store.needed = new Set();
  const out: CheckpointRecord[] = [];
  for (const cp of live) {
    store.oldestMs = Math.min(store.oldestMs, timeOfRecordId(cp.id));
    for (const r of cp.records) {
      out.push(r);
      for (const c of r.changes) if (c.backup_id) store.needed.add(c.backup_id);
    }
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

function count(store: Store, r: CheckpointRecord): void {
  // A record of a turn already seen joins its checkpoint.
  if (r.turn === null || !store.turns.has(r.turn)) store.count++;
  if (r.turn !== null) store.turns.add(r.turn);
  store.oldestMs = Math.min(store.oldestMs, timeOfRecordId(r.id));
  for (const c of r.changes) if (c.backup_id) store.needed.add(c.backup_id);
}

function overLimits(ws: Workspace, store: Store): boolean {
  const maxTurns = ws.limits.checkpointMaxTurns ?? DEFAULT_CHECKPOINT_MAX_TURNS;
  const maxAge = ws.limits.checkpointMaxAgeMs ?? DEFAULT_CHECKPOINT_MAX_AGE_MS;
  return store.count > maxTurns + Math.max(1, Math.floor(maxTurns / 10)) || Date.now() - store.oldestMs > maxAge;
}

function setPruned(store: Store, note: PrunedNote): void {
  store.pruned = note;
  store.deadTurns = new Set(note.turns);
}

/** Whether the record with this id is there (a rewind's recovery writes its record once). */
export async function hasRecord(ws: Workspace, id: string): Promise<boolean> {
  await readRecords(ws);
  return storeOf(ws).records.has(id);
}

/** Reads what was appended to each segment since the last look: complete lines only. */
async function readSegment(ws: Workspace, store: Store, name: string): Promise<void> {
  let seg = store.segments.get(name);
  if (!seg) store.segments.set(name, (seg = { offset: 0, ids: new Set() }));
  // Opened and read as sync-first-io.ts reads (the new lines of a segment are a few KiB): a retention pass
  // every tenth of the turn limit made four round trips through the thread pool per segment.
  let fd: number;
  try {
    fd = openSync(path.join(logDir(ws), name), 'r');
  } catch {
    return;
  }
  try {
    const { size } = fstatSync(fd);
    if (size <= seg.offset) return;
    const buf = Buffer.alloc(size - seg.offset);
    const bytesRead = await readAt(fd, buf, buf.length, seg.offset);
    const text = buf.subarray(0, bytesRead);
    const end = text.lastIndexOf(0x0a);
    if (end < 0) return;
    for (const line of text.subarray(0, end).toString('utf8').split('\n')) {
      try {
        const rec = JSON.parse(line) as CheckpointRecord;
        if (rec && typeof rec.id === 'string' && RECORD_ID.test(rec.id) && Array.isArray(rec.changes)) {
          store.records.set(rec.id, rec);
          seg.ids.add(rec.id);
        }
      } catch {
        // A line torn by a crash of the machine: skip it.
      }
    }
    seg.offset += end + 1;
  } finally {
    closeSync(fd);
  }
}

/** Every live record of the project, oldest first (other replicas' included: the directory is listed each time). */
export async function readRecords(ws: Workspace): Promise<CheckpointRecord[]> {
  await settleRecords(ws.runtime);
  const store = storeOf(ws);
  const names = segmentNames(ws);
  await Promise.all(names.map((n) => readSegment(ws, store, n)));
  for (const [name, seg] of store.segments) {
    if (names.includes(name) || name === store.writer?.name) continue;
    for (const id of seg.ids) store.records.delete(id);
    store.segments.delete(name);
  }
  setPruned(store, await readPruned(ws));
  store.loaded = true;
  store.listedAt = Date.now();
  return recount(store);
}

function groupAll(records: readonly CheckpointRecord[]): Checkpoint[] {
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

/** The records grouped into checkpoints (one per turn, one per call without a turn), oldest first. */
export function groupCheckpoints(records: readonly CheckpointRecord[]): Checkpoint[] {
  return groupAll(records);
}

export interface PrunedNote {
  /** Checkpoints pruned by retention so far (as this volume counted them). */
  count: number;
  /** The newest pruned checkpoint's time: nothing before it can be rewound. */
  before: string | null;
  /** The watermark: every checkpoint whose id sorts at or before it went. */
  through: string | null;
  /** The turns of pruned checkpoints (the newest DEAD_TURNS_KEPT). */
  turns: string[];
}

/** The segment files in the log directory (a few: each process's current one, and those not yet removed). */
function segmentNames(ws: Workspace): string[] {
  try {
    return readdirSync(logDir(ws)).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
}

export async function readPruned(ws: Workspace): Promise<PrunedNote> {
  try {
    const note = JSON.parse((await readSmallFirst(prunedFile(ws))).toString('utf8')) as Partial<PrunedNote>;
    return {
      count: Number(note.count) || 0,
      before: typeof note.before === 'string' ? note.before : null,
      through: typeof note.through === 'string' ? note.through : null,
      turns: Array.isArray(note.turns) ? note.turns.filter((t): t is string => typeof t === 'string') : [],
    };
  } catch {
    return { count: 0, before: null, through: null, turns: [] };
  }
}

/**
 * Drops the checkpoints past TOOLGATE_CHECKPOINT_MAX_TURNS (the oldest) or older than the age limit, and with them
 * the hold on their backups (neededBackupIds). The note says how many went and up to when.
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
  let last = -1;
  checkpoints.forEach((cp, i) => {
    if (i < cut || now - timeOfRecordId(cp.id) > maxAge) last = i;
  });
  return pruneThrough(ws, checkpoints.slice(0, last + 1), now);
}

/**
 * Backups that the bytes bound (TOOLGATE_BACKUP_MAX_BYTES) removed although checkpoints needed them: every
 * checkpoint whose rewind would need one goes too (the one holding it and all older ones, whose rewinds pass
 * through it), so that no listed checkpoint is one a rewind must refuse.
 */
export function dropCheckpointsNeeding(ws: Workspace, backupIds: readonly string[]): Promise<number> {
  return serially(ws, async () => {
    const ids = new Set(backupIds);
    const checkpoints = groupCheckpoints(await readRecords(ws));
    let last = -1;
    checkpoints.forEach((cp, i) => {
      if (cp.records.some((r) => r.changes.some((c) => c.backup_id !== null && ids.has(c.backup_id)))) last = i;
    });
    return pruneThrough(ws, checkpoints.slice(0, last + 1), Date.now());
  });
}

/** Moves the watermark past `gone` (the oldest live checkpoints), then removes the segments left with no live record. */
async function pruneThrough(ws: Workspace, gone: readonly Checkpoint[], now: number): Promise<number> {
  const store = storeOf(ws);
  let fresh: readonly Checkpoint[] = [];
  if (gone.length > 0) {
    const note = await readPruned(ws);
    const known = new Set(note.turns);
    fresh = gone.filter((cp) => !(note.through !== null && cp.id <= note.through) && !(cp.turn !== null && known.has(cp.turn)));
    const newest = gone[gone.length - 1] as Checkpoint;
    const lastRecord = newest.records[newest.records.length - 1] as CheckpointRecord;
    const through = note.through !== null && note.through > newest.id ? note.through : newest.id;
    const before = note.before !== null && note.before > lastRecord.at ? note.before : lastRecord.at;
    const turns = [...note.turns, ...gone.flatMap((cp) => (cp.turn === null || known.has(cp.turn) ? [] : [cp.turn]))].slice(-DEAD_TURNS_KEPT);
    setPruned(store, { count: note.count + fresh.length, before, through, turns });
    await replacePruned(ws, Buffer.from(JSON.stringify(store.pruned)));
  }
  await removeDeadSegments(ws, store, now);
  return fresh.length;
}

/** A whole file, read as sync-first-io.ts reads (on the event loop when small). */
async function readSmallFirst(file: string): Promise<Buffer> {
  const fd = openSync(file, 'r');
  try {
    return await readAll(fd, fstatSync(fd).size);
  } finally {
    closeSync(fd);
  }
}

/**
 * pruned.json replaced by a rename, its create and rename made as sync-first-io.ts makes them: on the event loop
 * unless an fsync runs. Not fsynced, like the records it marks (writeRecord).
 */
async function replacePruned(ws: Workspace, data: Buffer): Promise<void> {
  const temp = `${prunedFile(ws)}.${randomHex(3)}`;
  const opened = openForWrite(temp, 'w', 0o600);
  const fd = typeof opened === 'number' ? opened : await opened;
  try {
    try {
      await writeAll(fd, data);
    } finally {
      closeSync(fd);
    }
    await renameFile(temp, prunedFile(ws));
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

async function removeDeadSegments(ws: Workspace, store: Store, now: number): Promise<void> {
  // Counted again here, once: the watermark may have moved, and other calls may have read records meanwhile.
  const live = new Set(recount(store).map((r) => r.id));
  for (const [name, seg] of [...store.segments]) {
    if (name === store.writer?.name || [...seg.ids].some((id) => live.has(id))) continue;
    const file = path.join(logDir(ws), name);
    const st = await fs.stat(file).catch(() => null);
    if (st && now - st.mtimeMs < SEGMENT_IDLE_MS) continue;
    await fs.rm(file, { force: true });
    for (const id of seg.ids) store.records.delete(id);
    store.segments.delete(name);
  }
}

/** How long this process trusts its view of the records when backups are pruned (other replicas add theirs). */
const NEEDED_FRESH_MS = 1000;

/** The backups kept checkpoints hold: backup pruning leaves them (src/workspace/backups.ts). */
export async function neededBackupIds(ws: Workspace): Promise<ReadonlySet<string>> {
  const store = storeOf(ws);
  if (!store.loaded || Date.now() - store.listedAt > NEEDED_FRESH_MS) await readRecords(ws);
  return store.needed;
}
