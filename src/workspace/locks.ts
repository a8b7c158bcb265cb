// Per-file write locks: an in-process queue first (cheap, fair), then a proper-lockfile lock in the
// state directory so that other processes and replicas on the same volume are serialized too.
import { createHash } from 'node:crypto';
import fs, { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { probe } from 'proper-lockfile/lib/mtime-precision.js';
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { madeBeforeThisProcess, OWNER_RECORD, ownerState } from './process-owner.js';
import { syncInFlight } from './sync-first-io.js';
import { PartKind, type ServiceRuntime } from './runtime.js';
import type { Workspace } from './workspace.js';

const STALE_MS = 10_000;
type Callback = (err: Error | null, value?: unknown) => void;
/**
 * The lock is a regular file made with O_EXCL whose content is its holder's record and a newline: who holds it,
 * so that a waiter on this host sees a holder killed with -9 at once. One create makes the lock with its record
 * (the few bytes are data) and one unlink frees both at once (docs/api.md, "Durable writes and backups").
 * Without the newline the record is not written yet (or cut short): a lock without a record.
 */
const LOCK_CONTENT = Buffer.from(`${OWNER_RECORD}\n`);
/**
 * proper-lockfile probes the mtime precision of the file system at a lock (a utimes of the new lock, one more
 * metadata call) unless its fs object holds the answer under a private key, which lockSync's copy of the object
 * keeps as an enumerable property. Whole seconds are exact on every file system, so 's' holds anywhere: the
 * lock's refreshed mtime is then up to 1 s ahead, and its staleness that much later. The key is found by
 * probing a stand-in once; without it (another version of proper-lockfile), every lock probes again
 * (bench/README.md, "Decisions").
 */
const KNOWN_PRECISION = ((): object => {
  const standIn = { utimes: (...args: unknown[]) => (args.at(-1) as Callback)(null), stat: (_p: string, cb: Callback) => cb(null, { mtime: new Date(1) }) };
  try {
    probe('', standIn, () => undefined);
  } catch {
    return {};
  }
  const key = Object.getOwnPropertySymbols(standIn)[0];
  return key === undefined ? {} : { [key]: 's' };
})();
/**
 * The file-system calls proper-lockfile makes with lockSync (and rmdirSync when the process exits, which each
 * service's FileLocks adds): it copies the object it is given on every lock, and its default is all of
 * graceful-fs (bench/README.md, "Decisions"). Its mkdir and rmdir make and remove our lock file. Calls that
 * change the locks directory go through `fs` when made, so that a test can count them.
 */
const LOCK_FS = { ...KNOWN_PRECISION, mkdirSync: createLock, realpathSync, statSync: (p: string) => statMade(p) ?? fs.statSync(p), utimesSync: (p: string, a: Date, m: Date) => fs.utimesSync(p, a, m) };

/**
 * The stat of each lock this process just made, from its descriptor: proper-lockfile reads the new lock's mtime
 * (to tell later whether the lock is still its own) right after making it, and is answered from here instead of
 * by one more lookup by name, which while an fsync runs is one more round trip through the thread pool.
 * Consumed by that one read; every later stat of the lock (its refreshes) asks the file system.
 */
const madeStats = new Map<string, fs.Stats>();

function statMade(lock: string): fs.Stats | undefined {
  const st = madeStats.get(lock);
  if (st) madeStats.delete(lock);
  return st;
}

/** Writes the record into the new lock at `fd` and closes it, keeping its stat for proper-lockfile (madeStats). */
function finishLock(lock: string, fd: number): void {
  try {
    try {
      fs.writeSync(fd, LOCK_CONTENT);
      madeStats.set(lock, fs.fstatSync(fd));
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    madeStats.delete(lock);
    fs.unlinkSync(lock); // no lock without its record
    throw err;
  }
}

/** The lock file with its record, written before proper-lockfile reads the file's mtime (which the write may change). */
function createLock(lock: string): void {
  finishLock(lock, fs.openSync(lock, 'wx', 0o600));
}

/**
 * createLock for proper-lockfile's asynchronous lock (FileLocks.fsLater), taken while an fsync runs: the create
 * (which waits for the journal) in the thread pool; the few bytes of the record, the fstat and the close of the
 * new file on the event loop, as a temp file's write is (src/workspace/sync-first-io.ts).
 */
function createLockLater(lock: string, cb: Callback): void {
  fs.open(lock, 'wx', 0o600, (err, fd) => {
    if (err) return cb(err);
    try {
      finishLock(lock, fd);
    } catch (failed) {
      return cb(failed as Error);
    }
    cb(null);
  });
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
    await fsp.unlink(lock);
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
  /** Set while proper-lockfile releases one of our locks: its removal is then deferred (see `removing`). */
  deferRemoval = false;
  /** Locks directories swept (sweepReleased). */
  readonly swept = new Set<string>();
  /** LOCK_FS with this service's removal (the release of a lock, deferred while `deferRemoval` is set). */
  readonly fs = { ...LOCK_FS, rmdirSync: (lock: string) => removeLock(this, lock) };
  /**
   * LOCK_FS for proper-lockfile's asynchronous lock, taken while an fsync runs: then the create would wait for
   * its commit on the event loop (bench/README.md, "Decisions").
   */
  readonly fsLater = {
    ...KNOWN_PRECISION,
    mkdir: createLockLater,
    rmdir: (lock: string, cb: Callback) => void removeLockLater(lock).then(() => cb(null), cb),
    // When the process exits holding the lock (proper-lockfile's exit handler), as with `fs`.
    rmdirSync: (lock: string) => removeLock(this, lock),
    stat: (p: string, cb: Callback) => {
      const made = statMade(p);
      if (made) return cb(null, made);
      void fsp.stat(p).then((st) => cb(null, st), cb);
    },
    utimes: (p: string, a: Date, m: Date, cb: Callback) => void fsp.utimes(p, a, m).then(() => cb(null), cb),
    realpath: (p: string, cb: Callback) => void fsp.realpath(p).then((r) => cb(null, r), cb),
  };

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

/** Removes a lock: one unlink (deferred to the thread pool while `deferRemoval` is set); an older version's directory as it would. */
function removeLock(locks: FileLocks, lock: string): void {
  if (locks.deferRemoval) {
    track(locks, lock, removeLockLater(lock));
    return;
  }
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
  const key = createHash('sha256').update(real).digest('hex').slice(0, 32);
  return path.join(ws.stateDir, 'locks', `${key}.lock`);
}

function lockedError(rel: string, waitMs: number): ToolError {
  return E.fileLocked(rel, waitMs);
}

/**
 * Runs fn while holding the write lock of one file (identified by its real path). An abort of `signal` (the
 * call's time limit) ends the wait with the signal's reason, and fn does not start once it has fired.
 */
export async function withFileLock<T>(ws: Workspace, real: string, rel: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
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
  let removal: Promise<void> | undefined;
  try {
    if (queued) {
      // The timer is cancelled once the turn comes: left running it would keep the process alive (and pile
      // up, one per write) for the whole lock timeout.
      const timer = new AbortController();
      const stop = () => timer.abort();
      signal?.addEventListener('abort', stop, { once: true });
      const waited = await Promise.race([previous.then(() => true), sleep(Math.max(0, deadline - Date.now()), false, { signal: timer.signal }).catch(() => false)]);
      signal?.removeEventListener('abort', stop);
      timer.abort();
      signal?.throwIfAborted();
      if (!waited) throw lockedError(rel, ws.limits.lockTimeoutMs);
    }
    const unlock = await acquireFileLock(ws, locks, real, rel, deadline, signal);
    ws.observer?.lockWait((performance.now() - started) / 1000);
    try {
      signal?.throwIfAborted();
      return await fn();
    } finally {
      locks.deferRemoval = true;
      try {
        const released = unlock();
        // Taken asynchronously: its release removes the lock in the pool already.
        if (released) track(locks, lockPathFor(ws, real), released);
      } catch {
        // Compromised or already removed (stale takeover): nothing left to release.
      } finally {
        locks.deferRemoval = false;
      }
      removal = locks.removing.get(lockPathFor(ws, real));
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
 * The cross-process lock (a file made atomically with O_EXCL, its record inside): taken synchronously, it costs
 * one create when free; while an fsync runs, in the thread pool (see FileLocks.fsLater). The release of the
 * second kind is a promise.
 */
async function acquireFileLock(ws: Workspace, locks: FileLocks, real: string, rel: string, deadline: number, signal?: AbortSignal): Promise<() => void | Promise<void>> {
  const lockfilePath = lockPathFor(ws, real);
  sweepReleased(locks, path.dirname(lockfilePath));
  let delay = 2;
  for (;;) {
    signal?.throwIfAborted();
    try {
      const options = { lockfilePath, realpath: false, stale: STALE_MS, onCompromised: () => undefined };
      if (syncInFlight()) return await lockfile.lock(real, { ...options, fs: locks.fsLater });
      return lockfile.lockSync(real, { ...options, fs: locks.fs });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        fs.mkdirSync(path.dirname(lockfilePath), { recursive: true });
        continue;
      }
      if (code !== 'ELOCKED') throw err;
      if (takeOverFromDeadHolder(locks, lockfilePath)) continue;
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
function takeOverFromDeadHolder(locks: FileLocks, lockfilePath: string): boolean {
  const record = goneHolder(lockfilePath);
  if (record === undefined) return false;
  let release: () => void;
  try {
    release = lockfile.lockSync(lockfilePath, { lockfilePath: `${lockfilePath}.takeover`, realpath: false, stale: STALE_MS, onCompromised: () => undefined, fs: locks.fs });
  } catch {
    return false; // another waiter is taking it over
  }
  try {
    if (goneHolder(lockfilePath) !== record) return false;
    removeLock(locks, lockfilePath);
    return true;
  } catch {
    return false;
  } finally {
    try {
      release();
    } catch {
      // Already removed as stale by another waiter: nothing to release.
    }
  }
}
