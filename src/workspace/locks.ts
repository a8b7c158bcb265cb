// Per-file write locks: an in-process queue first (cheap, fair), then a proper-lockfile lock in the
// state directory so that other processes and replicas on the same volume are serialized too.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, realpathSync, renameSync, rmdirSync, statSync, utimesSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { madeBeforeThisProcess, OWNER_RECORD, ownerState } from './process-owner.js';
import { syncInFlight } from './sync-first-io.js';
import { PartKind, type ServiceRuntime } from './runtime.js';
import type { Workspace } from './workspace.js';

const STALE_MS = 10_000;
/**
 * The file-system calls proper-lockfile makes with lockSync (and rmdirSync when the process exits, which each
 * service's FileLocks adds): it copies the object it is given on every lock, and its default is all of
 * graceful-fs (bench/README.md, "Decisions").
 */
const LOCK_FS = { mkdirSync: makeLockDir, realpathSync, statSync, utimesSync };
/**
 * Inside a lock directory, an empty directory whose name is the holder's record: who holds it, so that a waiter
 * on this host sees a holder killed with -9 at once. A name is made whole in one mkdir, the cheapest record on
 * the write path (a file took three calls more), and the service never makes symlinks.
 */
const OWNER_PREFIX = 'owner=';

/**
 * A released lock directory on its way out, beside the lock: `<lock>.gone<n>=<owner record of the releaser>`.
 * A release renames the lock directory away, its owner record still inside, before removing the two: the lock
 * path is free in one step, so a holder killed anywhere in its release leaves either its lock with its record
 * (a dead holder, taken over at once) or a leftover that holds nothing (swept). A lock directory without a
 * record is then only one being made, or one whose maker was killed between the directory and its record
 * (docs/api.md, "Durable writes and backups").
 */
const RELEASED = /\.gone\d+=(.+)$/;
// Process-wide on purpose: services of one process sharing a state directory must never pick the same name.
let releases = 0;
const releasedName = (dir: string): string => `${dir}.gone${++releases}=${OWNER_RECORD}`;

/** The lock directory with its owner record, made before proper-lockfile reads the directory's mtime (which the record changes). */
function makeLockDir(dir: string): void {
  mkdirSync(dir);
  try {
    mkdirSync(path.join(dir, OWNER_PREFIX + OWNER_RECORD));
  } catch (err) {
    rmdirSync(dir);
    throw err;
  }
}

/** The record of a lock directory's holder, or null (none, or the lock is gone). */
function lockOwner(dir: string): string | null {
  try {
    const entry = readdirSync(dir).find((n) => n.startsWith(OWNER_PREFIX));
    return entry === undefined ? null : entry.slice(OWNER_PREFIX.length);
  } catch {
    return null;
  }
}

/** Removes a released lock directory (RELEASED) and the owner record in it, ours first as the likely one. */
async function clearReleased(released: string): Promise<void> {
  try {
    await fsp.rmdir(path.join(released, OWNER_PREFIX + OWNER_RECORD));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const record = lockOwner(released);
    if (record !== null) await fsp.rmdir(path.join(released, OWNER_PREFIX + record));
  }
  await fsp.rmdir(released);
}

/** The release in the thread pool: the lock is free once renamed away; its removal follows, tracked in `clearing`. */
async function removeOwnLockDir(locks: FileLocks, dir: string): Promise<void> {
  const released = releasedName(dir);
  await fsp.rename(dir, released);
  const cleared = clearReleased(released)
    .catch(() => undefined) // left for the next process's sweep (sweepReleased)
    .finally(() => locks.clearing.delete(cleared));
  locks.clearing.add(cleared);
}

/** makeLockDir in the thread pool. */
async function makeLockDirLater(dir: string): Promise<void> {
  await fsp.mkdir(dir);
  try {
    await fsp.mkdir(path.join(dir, OWNER_PREFIX + OWNER_RECORD));
  } catch (err) {
    await fsp.rmdir(dir);
    throw err;
  }
}

type Callback = (err: Error | null, value?: unknown) => void;

/**
 * One service's file locks in this process (its ServiceRuntime holds them): the queues of its writers, the
 * lock directories its releases are still removing, and the locks directories it has swept.
 */
class FileLocks {
  /** The in-process queue of each file's writers, by real path. */
  readonly queues = new Map<string, Promise<void>>();
  /**
   * Lock directories of released locks still being moved away, in the thread pool: the answer does not wait for
   * the rename, which blocks for milliseconds while the disk commits another writer's fsync (bench/README.md,
   * "Decisions"). The next writer of the same file waits for it (withFileLock), and shutdown too (settled).
   */
  readonly removing = new Map<string, Promise<void>>();
  /** Released lock directories being removed once moved away (RELEASED): nobody waits for them but shutdown. */
  readonly clearing = new Set<Promise<void>>();
  /** Set while proper-lockfile releases one of our locks: its rmdir is then deferred (see `removing`). */
  deferRemoval = false;
  /** Locks directories swept (sweepReleased). */
  readonly swept = new Set<string>();
  /** LOCK_FS with this service's removal (the release of a lock, deferred while `deferRemoval` is set). */
  readonly fs = { ...LOCK_FS, rmdirSync: (dir: string) => removeLockDir(this, dir) };
  /**
   * LOCK_FS for proper-lockfile's asynchronous lock, taken while an fsync runs: then the mkdirs would wait for
   * its commit on the event loop (bench/README.md, "Decisions").
   */
  readonly fsLater = {
    mkdir: (dir: string, cb: Callback) => void makeLockDirLater(dir).then(() => cb(null), cb),
    rmdir: (dir: string, cb: Callback) => void removeOwnLockDir(this, dir).then(() => cb(null), cb),
    stat: (p: string, cb: Callback) => void fsp.stat(p).then((st) => cb(null, st), cb),
    utimes: (p: string, a: Date, m: Date, cb: Callback) => void fsp.utimes(p, a, m).then(() => cb(null), cb),
    realpath: (p: string, cb: Callback) => void fsp.realpath(p).then((r) => cb(null, r), cb),
  };

  /** Resolves when every released lock's directory is gone. */
  async settled(): Promise<void> {
    await Promise.all([...this.removing.values()]);
    await Promise.all([...this.clearing]);
  }
}

const FILE_LOCKS = new PartKind(() => new FileLocks());

/** Resolves when every lock directory the service's releases are removing is gone (shutdown, tests). */
export async function locksSettled(runtime: ServiceRuntime): Promise<void> {
  await runtime.part(FILE_LOCKS).settled();
}

/** Keeps a lock directory's removal in `removing` until it is done (its failure means nothing is left to remove). */
function track(locks: FileLocks, dir: string, removal: Promise<void>): void {
  const done = removal
    // Compromised or already removed (stale takeover): nothing left to release.
    .catch(() => undefined)
    .finally(() => {
      if (locks.removing.get(dir) === done) locks.removing.delete(dir);
    });
  locks.removing.set(dir, done);
}

function removeLockDir(locks: FileLocks, dir: string): void {
  if (locks.deferRemoval) {
    track(locks, dir, removeOwnLockDir(locks, dir));
    return;
  }
  const released = releasedName(dir);
  renameSync(dir, released);
  // Mostly our own lock, whose record we know: no listing (three calls) on every write's release.
  try {
    rmdirSync(path.join(released, OWNER_PREFIX + OWNER_RECORD));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const record = lockOwner(released);
    if (record !== null) rmdirSync(path.join(released, OWNER_PREFIX + record));
  }
  rmdirSync(released);
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
      for (const entry of readdirSync(released)) rmdirSync(path.join(released, entry));
      rmdirSync(released);
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
        // Taken asynchronously: its release removes the directory in the pool already.
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
    // The next writer of this file in this process starts once the lock directory is gone.
    if (removal) void removal.then(done);
    else done();
  }
}

/**
 * The cross-process lock (a directory made atomically by mkdir): taken synchronously, it costs one mkdir when
 * free; while an fsync runs, in the thread pool (see FileLocks.fsLater). The release of the second kind is a promise.
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
        mkdirSync(path.dirname(lockfilePath), { recursive: true });
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
 * The record of a lock's holder that is known to be gone (null for a lock directory without one), or
 * undefined while it may live. Gone: a process of this host that no longer exists (killed with -9: its exit
 * handler never ran), or no record in a directory made before this process started (its maker was killed
 * between the directory and the record, which follows at once; a release moves the directory away whole).
 */
function goneHolder(lockfilePath: string): string | null | undefined {
  let names: string[];
  try {
    names = readdirSync(lockfilePath);
  } catch {
    return undefined; // released meanwhile: the next attempt takes it
  }
  const entry = names.find((n) => n.startsWith(OWNER_PREFIX));
  if (entry !== undefined) {
    const record = entry.slice(OWNER_PREFIX.length);
    return ownerState(record) === 'dead' ? record : undefined;
  }
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
    removeLockDir(locks, lockfilePath);
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
