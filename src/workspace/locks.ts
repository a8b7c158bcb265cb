// Per-file write locks: an in-process queue first (cheap, fair), then a lock file in the state directory, so
// that other processes and replicas on the same volume are serialized too (docs/api.md, "Durable writes and
// backups"). The lock file is taken, kept fresh and judged stale as proper-lockfile, which earlier versions
// used, does it, so that replicas of both kinds exclude each other during a rolling upgrade.
import fs, { readdirSync, readFileSync, statSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onExit } from 'signal-exit';
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { madeBeforeThisProcess, OWNER_RECORD, ownerState } from './process-owner.js';
import { syncInFlight, unlinkInPool } from './sync-first-io.js';
import type { Stop } from './atomic.js';
import { PartKind, type ServiceRuntime } from './runtime.js';
import type { Workspace } from './workspace.js';
import { sha256Hex } from './versions.js';

/** A lock whose mtime is older than this is stale: its holder stopped refreshing it (gone, or stalled that long). */
const STALE_MS = 10_000;
/** A held lock's mtime is refreshed this often (half the stale time), so that no waiter ever finds it stale. */
const REFRESH_MS = STALE_MS / 2;
/** After a refresh that failed, the next try comes this soon (until the stale time has passed since the last). */
const REFRESH_RETRY_MS = 1000;
/**
 * The lock is a regular file made with O_EXCL whose content is its holder's record and a newline: who holds it,
 * so that a waiter on this host sees a holder killed with -9 at once. One create makes the lock with its record
 * (the few bytes are data) and one unlink frees both at once (docs/api.md, "Durable writes and backups").
 * Without the newline the record is not written yet (or cut short): a lock without a record.
 */
const LOCK_CONTENT = Buffer.from(`${OWNER_RECORD}\n`);

/** A lock this process holds. */
interface HeldLock {
  readonly path: string;
  /** The mtime this process last gave the lock: another one means another process took the lock over as stale. */
  mtimeMs: number;
  /** When this process last made the lock fresh. */
  freshAt: number;
  timer: NodeJS.Timeout | null;
  /** Released, or found taken over: its file is no longer this process's to refresh or remove. */
  done: boolean;
}

/**
 * Every lock this process holds, removed when the process exits (also by a signal nothing else handles). The exit
 * handler is set when this module loads, before the service's own SIGTERM listener: signal-exit re-raises a
 * signal only it listens to, and set later it would make a graceful shutdown die by SIGTERM.
 */
const HELD = new Set<HeldLock>();
onExit(() => {
  for (const h of HELD) {
    try {
      fs.unlinkSync(h.path);
    } catch {
      // Removed meanwhile.
    }
  }
});

const codeOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

function lockedBy(lock: string): Error {
  return Object.assign(new Error(`Lock file is already being held: ${lock}`), { code: 'ELOCKED' });
}

/** Writes the record into the new lock at `fd` and closes it; returns the lock's mtime, from its descriptor. */
function finishLock(lock: string, fd: number): number {
  try {
    try {
      fs.writeSync(fd, LOCK_CONTENT);
      return fs.fstatSync(fd).mtime.getTime();
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    fs.unlinkSync(lock); // no lock without its record
    throw err;
  }
}

/** Creates the lock file on the event loop: its descriptor, or null when the lock exists. */
function createLockNow(lock: string): number | null {
  try {
    return fs.openSync(lock, 'wx', 0o600);
  } catch (err) {
    if (codeOf(err) === 'EEXIST') return null;
    throw err;
  }
}

/**
 * createLockNow while an fsync runs: the create (which waits for the journal) in the thread pool; the few bytes
 * of the record, the fstat and the close of the new file on the event loop, as a temp file's write is
 * (src/workspace/sync-first-io.ts).
 */
function createLockLater(lock: string): Promise<number | null> {
  return new Promise((resolve, reject) =>
    fs.open(lock, 'wx', 0o600, (err, fd) => {
      if (!err) resolve(fd);
      else if (codeOf(err) === 'EEXIST') resolve(null);
      else reject(err);
    }),
  );
}

/**
 * Takes the lock file, or throws ELOCKED while another holds it. On the event loop unless an fsync runs (see
 * openForWrite in src/workspace/sync-first-io.ts), so that a free lock costs one create and no await.
 */
function take(lock: string): HeldLock | Promise<HeldLock> {
  if (syncInFlight()) return takeLater(lock, false);
  const fd = createLockNow(lock);
  return fd === null ? takeLater(lock, true) : hold(lock, finishLock(lock, fd));
}

/**
 * take, where it may wait: a lock that exists is looked at once, and one whose mtime is older than the stale
 * time is removed and made again; one removed meanwhile is made again, once.
 */
async function takeLater(lock: string, exists: boolean): Promise<HeldLock> {
  for (let staleCheck = true; ; staleCheck = false) {
    if (!exists) {
      const fd = syncInFlight() ? await createLockLater(lock) : createLockNow(lock);
      if (fd !== null) return hold(lock, finishLock(lock, fd));
      if (!staleCheck) throw lockedBy(lock);
    }
    exists = false;
    let st: fs.Stats;
    try {
      st = syncInFlight() ? await fsp.stat(lock) : statSync(lock);
    } catch (err) {
      if (codeOf(err) === 'ENOENT') continue; // released meanwhile
      throw err;
    }
    if (st.mtime.getTime() >= Date.now() - STALE_MS) throw lockedBy(lock);
    if (syncInFlight()) await removeLockLater(lock);
    else removeLockNow(lock);
  }
}

/** A lock just made: held, and kept fresh until released. */
function hold(lock: string, mtimeMs: number): HeldLock {
  const h: HeldLock = { path: lock, mtimeMs, freshAt: Date.now(), timer: null, done: false };
  HELD.add(h);
  refreshIn(h, REFRESH_MS);
  return h;
}

function refreshIn(h: HeldLock, ms: number): void {
  h.timer = setTimeout(() => {
    h.timer = null;
    void refresh(h);
  }, ms);
  // Held locks are removed at exit: their refresh need not keep the process alive.
  h.timer.unref();
}

/**
 * Moves a held lock's mtime to the next whole second (exact on every file system), in the thread pool: unless
 * the lock is no longer the one this process made (taken over as stale meanwhile), which it then leaves alone.
 */
async function refresh(h: HeldLock): Promise<void> {
  let next: number;
  try {
    const st = await fsp.stat(h.path);
    if (h.done) return;
    if (st.mtime.getTime() !== h.mtimeMs) return lost(h);
    next = Math.ceil(Date.now() / 1000) * 1000;
    await fsp.utimes(h.path, next / 1000, next / 1000);
  } catch (err) {
    if (h.done) return;
    if (codeOf(err) === 'ENOENT' || Date.now() - h.freshAt > STALE_MS) return lost(h);
    return refreshIn(h, REFRESH_RETRY_MS);
  }
  if (h.done) return;
  h.mtimeMs = next;
  h.freshAt = Date.now();
  refreshIn(h, REFRESH_MS);
}

/** A held lock taken over by another process: neither refreshed nor removed any more. */
function lost(h: HeldLock): void {
  h.done = true;
  HELD.delete(h);
}

/** Lets go of a held lock; true when its file is still this process's to remove. */
function letGo(h: HeldLock): boolean {
  if (h.timer) clearTimeout(h.timer);
  h.timer = null;
  const mine = !h.done;
  lost(h);
  return mine;
}

/**
 * Locks made by older versions: a directory, its holder's record the name of an empty directory `owner=<record>`
 * inside. One may still be held by a replica of such a version on the same volume during a rolling upgrade (our
 * create fails with EEXIST on it as on a file), or left by one that was killed.
 */
const OWNER_PREFIX = 'owner=';

/**
 * An older version's released lock directory on its way out, beside the lock: `<lock>.gone<n>=<record of the
 * releaser>`. Its release renamed the directory away with its record inside, so that a holder killed while
 * releasing left either its lock with its record or a leftover that holds nothing (swept: sweepReleased). An
 * old-style lock this version removes goes the same way.
 */
const RELEASED = /\.gone\d+=(.+)$/;
// Process-wide on purpose: services of one process sharing a state directory must never pick the same name.
let releases = 0;
const releasedName = (dir: string): string => `${dir}.gone${++releases}=${OWNER_RECORD}`;

/** Removes an older version's lock directory (moved away first, as that version did) and its owner record. */
function removeOldLockDir(dir: string): void {
  const released = releasedName(dir);
  fs.renameSync(dir, released);
  clearReleased(released);
}

/** Removes a released lock directory and the owner record in it. */
function clearReleased(released: string): void {
  let entries: string[];
  try {
    entries = readdirSync(released);
  } catch (err) {
    // A lock file of this version that an older version's stale removal moved away (it renames before it removes).
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return fs.unlinkSync(released);
    throw err;
  }
  for (const entry of entries) fs.rmdirSync(path.join(released, entry));
  fs.rmdirSync(released);
}

/** unlink's answer for a directory (EISDIR on Linux, EPERM elsewhere): a lock made by an older version. */
const isDirectory = (err: unknown): boolean => ['EISDIR', 'EPERM'].includes((err as NodeJS.ErrnoException).code ?? '');

/** Removes a lock in the thread pool; an older version's directory (rare: taken over or stale) on the event loop. */
async function removeLockLater(lock: string): Promise<void> {
  try {
    await unlinkInPool(lock);
  } catch (err) {
    if (!isDirectory(err)) throw err;
    removeOldLockDir(lock);
  }
}

/**
 * The holder's record of a lock; null when it has none (one being made, or whose maker was killed before its
 * record was written); undefined when the lock is gone.
 */
function lockRecord(lock: string): string | null | undefined {
  let text: string;
  try {
    text = readFileSync(lock, 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EISDIR' ? oldLockRecord(lock) : undefined;
  }
  return text.endsWith('\n') ? text.slice(0, -1) : null;
}

/** lockRecord of an older version's lock directory. */
function oldLockRecord(dir: string): string | null | undefined {
  try {
    const entry = readdirSync(dir).find((n) => n.startsWith(OWNER_PREFIX));
    return entry === undefined ? null : entry.slice(OWNER_PREFIX.length);
  } catch {
    return undefined;
  }
}

/**
 * One service's file locks in this process (its ServiceRuntime holds them): the queues of its writers, the
 * locks its releases are still removing, and the locks directories it has swept.
 */
class FileLocks {
  /** The in-process queue of each file's writers, by real path. */
  readonly queues = new Map<string, Promise<void>>();
  /**
   * Released locks still being removed, in the thread pool: the answer does not wait for the unlink, which
   * blocks for milliseconds while the disk commits another writer's fsync (bench/README.md, "Decisions"). The
   * next writer of the same file waits for it (withFileLock), and shutdown too (settled).
   */
  readonly removing = new Map<string, Promise<void>>();
  /** Locks directories swept (sweepReleased). */
  readonly swept = new Set<string>();

  /** Resolves when every released lock is gone. */
  async settled(): Promise<void> {
    await Promise.all([...this.removing.values()]);
  }
}

const FILE_LOCKS = new PartKind(() => new FileLocks());

/** Resolves when every lock the service's releases are removing is gone (shutdown, tests). */
export async function locksSettled(runtime: ServiceRuntime): Promise<void> {
  await runtime.part(FILE_LOCKS).settled();
}

/** Keeps a lock's removal in `removing` until it is done (its failure means nothing is left to remove). */
function track(locks: FileLocks, lock: string, removal: Promise<void>): void {
  const done = removal
    // Compromised or already removed (stale takeover): nothing left to release.
    .catch(() => undefined)
    .finally(() => {
      if (locks.removing.get(lock) === done) locks.removing.delete(lock);
    });
  locks.removing.set(lock, done);
}

/** Removes a lock on the event loop: one unlink; an older version's directory as it would. */
function removeLockNow(lock: string): void {
  try {
    fs.unlinkSync(lock);
  } catch (err) {
    if (!isDirectory(err)) throw err;
    removeOldLockDir(lock);
  }
}

/** Age after which a released lock directory of a process on another host is swept (as the temp sweep's age rule). */
const RELEASED_STALE_MS = 10 * 60_000;

/**
 * Removes the released lock directories (RELEASED) that processes killed during their release left: those of
 * a process of this host that is gone, and those of another host's after RELEASED_STALE_MS. They hold no lock,
 * but would pile up. Once per locks directory per process, at its first lock: one read of a directory that
 * holds the locks held at that moment.
 */
function sweepReleased(locks: FileLocks, locksDir: string): void {
  if (locks.swept.has(locksDir)) return;
  locks.swept.add(locksDir);
  let names: string[];
  try {
    names = readdirSync(locksDir);
  } catch {
    return; // not made yet: nothing left in it
  }
  for (const name of names) {
    const record = RELEASED.exec(name)?.[1];
    if (record === undefined) continue;
    const released = path.join(locksDir, name);
    try {
      const state = ownerState(record);
      if (state === 'alive' || (state === 'unknown' && Date.now() - statSync(released).mtimeMs < RELEASED_STALE_MS)) continue;
      clearReleased(released);
    } catch {
      // Swept by another process meanwhile.
    }
  }
}

/** Where the cross-process lock of one file lives (exported for tests that hold it from outside). */
export function lockPathFor(ws: Workspace, real: string): string {
  const key = sha256Hex(real).slice(0, 32);
  return path.join(ws.stateDir, 'locks', `${key}.lock`);
}

function lockedError(rel: string, waitMs: number): ToolError {
  return E.fileLocked(rel, waitMs);
}

/**
 * A call's stop as the lock uses it: asked whether it stopped at each step, and its signal read only to wait for
 * the file's turn. An AbortSignal is one; a tool's context is one whose signal is made only then (src/tools/define.ts).
 */
export type LockStop = AbortSignal | (Stop & { readonly signal: AbortSignal });

/**
 * Runs fn while holding the write lock of one file (identified by its real path). An abort of `stop` (the
 * call's time limit) ends the wait with its reason, and fn does not start once it has fired.
 */
export async function withFileLock<T>(ws: Workspace, real: string, rel: string, fn: () => Promise<T>, stop?: LockStop): Promise<T> {
  const started = performance.now();
  const deadline = Date.now() + ws.limits.lockTimeoutMs;
  const locks = ws.runtime.part(FILE_LOCKS);
  const { queues } = locks;
  const queued = queues.get(real);
  const previous = queued ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  queues.set(real, tail);
  const lockfilePath = lockPathFor(ws, real);
  let removal: Promise<void> | undefined;
  try {
    if (queued) {
      const waited = await turnOf(previous, Math.max(0, deadline - Date.now()), stop instanceof AbortSignal ? stop : stop?.signal);
      stop?.throwIfAborted();
      if (!waited) throw lockedError(rel, ws.limits.lockTimeoutMs);
    }
    const held = await acquireFileLock(ws, locks, lockfilePath, rel, deadline, stop);
    ws.observer?.lockWait((performance.now() - started) / 1000);
    try {
      stop?.throwIfAborted();
      return await fn();
    } finally {
      // Removed in the thread pool: the answer does not wait for it (FileLocks.removing).
      if (letGo(held)) track(locks, lockfilePath, removeLockLater(lockfilePath));
      removal = locks.removing.get(lockfilePath);
    }
  } finally {
    const done = () => {
      release();
      if (queues.get(real) === tail) queues.delete(real);
    };
    // The next writer of this file in this process starts once the lock is gone.
    if (removal) void removal.then(done);
    else done();
  }
}

/**
 * True when the writer before this one is done, false when `ms` pass first or `signal` aborts. The timer and the
 * listener go once the turn comes: left running, a timer would keep the process alive (and pile up, one per write)
 * for the whole lock timeout. A plain timer, not an aborted sleep: the next writer of a file waits here for the
 * previous lock's removal, and the sleep's AbortError (a DOMException with its stack) cost each such write more
 * than its lock (docs/development.md, "Work done once").
 */
function turnOf(previous: Promise<unknown>, ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve, reject) => {
    const settle = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stopped);
    };
    const stopped = (): void => {
      settle();
      resolve(false);
    };
    const timer = setTimeout(stopped, ms);
    signal?.addEventListener('abort', stopped, { once: true });
    previous.then(
      () => {
        settle();
        resolve(true);
      },
      (err: unknown) => {
        settle();
        reject(err as Error);
      },
    );
  });
}

/**
 * The cross-process lock (a file made atomically with O_EXCL, its record inside): taken on the event loop, it
 * costs one create when free; while an fsync runs, in the thread pool (see take).
 */
async function acquireFileLock(ws: Workspace, locks: FileLocks, lockfilePath: string, rel: string, deadline: number, stop?: LockStop): Promise<HeldLock> {
  sweepReleased(locks, path.dirname(lockfilePath));
  let delay = 2;
  for (;;) {
    stop?.throwIfAborted();
    try {
      const taken = take(lockfilePath);
      return taken instanceof Promise ? await taken : taken;
    } catch (err) {
      const code = codeOf(err);
      if (code === 'ENOENT') {
        fs.mkdirSync(path.dirname(lockfilePath), { recursive: true });
        continue;
      }
      if (code !== 'ELOCKED') throw err;
      if (await takeOverFromDeadHolder(lockfilePath)) continue;
      if (Date.now() + delay > deadline) throw lockedError(rel, ws.limits.lockTimeoutMs);
      await sleep(delay);
      delay = Math.min(delay * 2, 50);
    }
  }
}

/**
 * The record of a lock's holder that is known to be gone (null for a lock without one), or undefined while it
 * may live. Gone: a process of this host that no longer exists (killed with -9: its exit handler never ran), or
 * no record in a lock made before this process started (its maker was killed between the create and the write
 * of the record, which follows at once; a release removes the lock and its record in one unlink).
 */
function goneHolder(lockfilePath: string): string | null | undefined {
  const record = lockRecord(lockfilePath);
  if (record === undefined) return undefined; // released meanwhile: the next attempt takes it
  if (record !== null) return ownerState(record) === 'dead' ? record : undefined;
  try {
    return madeBeforeThisProcess(statSync(lockfilePath).mtimeMs) ? null : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes a lock whose holder is gone (goneHolder), so the caller need not wait for the 10 s stale time.
 * Serialized by a second lock and checked again under it: two waiters that both saw the dead holder must not
 * both remove the lock (the second would remove the one the first has taken since). Holders on other hosts
 * are left to the stale time.
 */
async function takeOverFromDeadHolder(lockfilePath: string): Promise<boolean> {
  const record = goneHolder(lockfilePath);
  if (record === undefined) return false;
  const takeoverPath = `${lockfilePath}.takeover`;
  let takeover: HeldLock;
  try {
    const taken = take(takeoverPath);
    takeover = taken instanceof Promise ? await taken : taken;
  } catch {
    return false; // another waiter is taking it over
  }
  try {
    if (goneHolder(lockfilePath) !== record) return false;
    removeLockNow(lockfilePath);
    return true;
  } catch {
    return false;
  } finally {
    try {
      if (letGo(takeover)) removeLockNow(takeoverPath);
    } catch {
      // Already removed as stale by another waiter: nothing to release.
    }
  }
}
