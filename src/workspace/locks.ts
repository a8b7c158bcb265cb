// Per-file write locks: an in-process queue first (cheap, fair), then a lock file in the state directory, so
// that other processes and replicas on the same volume are serialized too (docs/api.md, "Durable writes and
// backups"). The lock file is taken, kept fresh and judged stale as proper-lockfile, which earlier versions
// used, does it, so that replicas of both kinds exclude each other during a rolling upgrade: its mtime is its
// holder's, kept fresh while held, though this version's lock is a link to its process's owner file (Owner).
import fs, { readdirSync, readFileSync, statSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onExit } from 'signal-exit';
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { madeBeforeThisProcess, OWNER_RECORD, ownerState } from './process-owner.js';
import { linkInPool, syncInFlight, unlinkInPool } from './sync-first-io.js';
import type { Stop } from './atomic.js';
import { PartKind, type ServiceRuntime } from './runtime.js';
import type { Workspace } from './workspace.js';
import { sha256Hex } from './versions.js';

/** A lock whose mtime is older than this is stale: its holder stopped refreshing it (gone, or stalled that long). */
const STALE_MS = 10_000;
/** Held locks' mtimes are refreshed this often (half the stale time), so that no waiter ever finds one stale. */
const REFRESH_MS = STALE_MS / 2;
/** After a refresh that failed, the next try comes this soon (until the stale time has passed since the last). */
const REFRESH_RETRY_MS = 1000;
/**
 * A lock taken when its owner file's mtime is older than this moves it first: with the next refresh at most
 * REFRESH_MS away, a held lock's mtime is then never older than 1.25 refresh periods (docs/api.md, "Durable
 * writes and backups").
 */
const TOUCH_BEFORE_MS = REFRESH_MS / 4;
/**
 * The holder's record and a newline: who holds a lock, so that a waiter on this host sees a holder killed with
 * -9 at once. Without the newline the record is not written yet (or cut short): a lock without a record.
 */
const LOCK_CONTENT = Buffer.from(`${OWNER_RECORD}\n`);

/**
 * The file whose inode a lock is. In a locks directory where hard links can be made, one per process holds its
 * record (`.owner<n>=<record>`), and each lock it takes is a link to it: a lock made by one link() holds its
 * record from the start and makes or frees no inode, which costs a write a create and an unlink of an inode
 * (bench/README.md, "The lock as a link"). Where they cannot, the lock is its own owner: a file made with
 * O_EXCL with the record written into it. Refreshed through its descriptor, so that a refresh never moves the
 * mtime of a file another process made.
 */
interface Owner {
  /** The owner file's path; the lock's, for a lock that is its own owner. */
  readonly path: string;
  readonly fd: number;
  readonly dev: number;
  readonly ino: number;
  /** When this process last moved its mtime. */
  freshAt: number;
  /** When a lock was last taken on it. */
  takenAt: number;
  /** The locks held on it now. */
  readonly held: Set<HeldLock>;
  timer: NodeJS.Timeout | null;
  /** Released: its file removed (a directory's owner file) or left to its lock's release; closed once no refresh uses it. */
  closed: boolean;
  /** Refreshes in the thread pool through the descriptor: it is closed only after them, never reused under one. */
  touching: number;
}

/** A lock this process holds. */
interface HeldLock {
  readonly path: string;
  readonly owner: Owner;
  /** Released, or found taken over: its file is no longer this process's to refresh or remove. */
  done: boolean;
}

/**
 * The owner file of each locks directory (null where no hard link can be made there: its locks are files).
 * Process-wide on purpose, as the held locks: services of one process sharing a state directory share it.
 */
const OWNERS = new Map<string, Owner | null>();
/** Every owner file this process made and has not removed, removed at exit. */
const OWNER_FILES = new Set<Owner>();
let ownersMade = 0;
/** An owner file's name; the sweep reads the record back from it (sweepReleased). */
const OWNER_FILE = /^\.owner\d+=(.+)$/;

/**
 * Every lock this process holds, removed when the process exits (also by a signal nothing else handles), and
 * its owner files. The exit handler is set when this module loads, before the service's own SIGTERM listener:
 * signal-exit re-raises a signal only it listens to, and set later it would make a graceful shutdown die by SIGTERM.
 */
const HELD = new Set<HeldLock>();
onExit(() => {
  for (const file of [...[...HELD].map((h) => h.path), ...[...OWNER_FILES].map((o) => o.path)]) {
    try {
      fs.unlinkSync(file);
    } catch {
      // Removed meanwhile.
    }
  }
});

const codeOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

function lockedBy(lock: string): Error {
  return Object.assign(new Error(`Lock file is already being held: ${lock}`), { code: 'ELOCKED' });
}

/** Writes the record into the new file at `fd` and makes it an owner, kept open; the file is removed if that fails. */
function ownerAt(file: string, fd: number): Owner {
  try {
    fs.writeSync(fd, LOCK_CONTENT);
    const st = fs.fstatSync(fd);
    return { path: file, fd, dev: st.dev, ino: st.ino, freshAt: Date.now(), takenAt: 0, held: new Set(), timer: null, closed: false, touching: 0 };
  } catch (err) {
    fs.closeSync(fd);
    fs.unlinkSync(file); // no lock without its record
    throw err;
  }
}

/** The owner file of the locks directory `dir`, made at its first lock (ENOENT while `dir` is not made); null where locks are files. */
function ownerIn(dir: string): Owner | null {
  let owner = OWNERS.get(dir);
  if (owner === undefined) {
    const file = path.join(dir, `.owner${++ownersMade}=${OWNER_RECORD}`);
    owner = ownerAt(file, fs.openSync(file, 'wx', 0o600));
    OWNER_FILES.add(owner);
    OWNERS.set(dir, owner);
    refreshIn(owner, REFRESH_MS);
  }
  return owner;
}

/** No hard link can be made there: EPERM (FAT, some FUSE file systems), ENOTSUP/EOPNOTSUPP (SMB), ENOSYS. */
const noLinks = (err: unknown): boolean => ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(codeOf(err) ?? '');

/**
 * What a failed link of the owner file means: EEXIST, the lock is held (false); the owner file gone (ENOENT:
 * removed by hand, or the directory with it) or full of links (EMLINK), a new one next time (true, or the error
 * again for ENOENT, on which the caller makes the directory); no hard links there, the lock a file (true).
 */
function linkFailed(owner: Owner, dir: string, err: unknown): boolean {
  const code = codeOf(err);
  if (code === 'EEXIST') return false;
  if (code === 'ENOENT' || code === 'EMLINK' || noLinks(err)) {
    if (OWNERS.get(dir) === owner) OWNERS.delete(dir);
    if (noLinks(err)) OWNERS.set(dir, null);
    retireIfIdle(owner);
    if (code === 'ENOENT') throw err;
    return true;
  }
  throw err;
}

/**
 * Makes the lock: a link to the directory's owner file, or a file holding the record where locks are files.
 * Null when the lock exists. On the event loop unless an fsync runs (see openForWrite in
 * src/workspace/sync-first-io.ts), so that a free lock costs one link and no await.
 */
function makeLock(lock: string): HeldLock | null | Promise<HeldLock | null> {
  const dir = path.dirname(lock);
  const owner = ownerIn(dir);
  if (owner === null) return syncInFlight() ? createLockLater(lock) : createLockNow(lock);
  if (syncInFlight()) return linkLater(owner, dir, lock);
  try {
    if (Date.now() - owner.freshAt > TOUCH_BEFORE_MS) touchNow(owner);
    fs.linkSync(owner.path, lock);
  } catch (err) {
    return linkFailed(owner, dir, err) ? makeLock(lock) : null;
  }
  return hold(lock, owner);
}

/** makeLock's link while an fsync runs: in the thread pool, as the journal may keep it waiting. */
async function linkLater(owner: Owner, dir: string, lock: string): Promise<HeldLock | null> {
  try {
    if (Date.now() - owner.freshAt > TOUCH_BEFORE_MS) await touchLater(owner);
    await linkInPool(owner.path, lock);
  } catch (err) {
    return linkFailed(owner, dir, err) ? makeLock(lock) : null;
  }
  return hold(lock, owner);
}

/** Creates a lock that is a file on the event loop; null when the lock exists. */
function createLockNow(lock: string): HeldLock | null {
  let fd: number;
  try {
    fd = fs.openSync(lock, 'wx', 0o600);
  } catch (err) {
    if (codeOf(err) === 'EEXIST') return null;
    throw err;
  }
  return holdOwn(lock, fd);
}

/**
 * createLockNow while an fsync runs: the create (which waits for the journal) in the thread pool; the few bytes
 * of the record and the fstat of the new file on the event loop, as a temp file's write is
 * (src/workspace/sync-first-io.ts).
 */
function createLockLater(lock: string): Promise<HeldLock | null> {
  return new Promise((resolve, reject) =>
    fs.open(lock, 'wx', 0o600, (err, fd) => {
      try {
        if (!err) resolve(holdOwn(lock, fd));
        else if (codeOf(err) === 'EEXIST') resolve(null);
        else reject(err);
      } catch (failed) {
        reject(failed as Error);
      }
    }),
  );
}

/** A lock that is a file, just made at `fd`: its own owner. */
function holdOwn(lock: string, fd: number): HeldLock {
  const owner = ownerAt(lock, fd);
  refreshIn(owner, REFRESH_MS);
  return hold(lock, owner);
}

/** Takes the lock, or throws ELOCKED while another holds it. */
function take(lock: string): HeldLock | Promise<HeldLock> {
  const made = makeLock(lock);
  if (made instanceof Promise) return made.then((h) => h ?? takeLater(lock, true));
  return made ?? takeLater(lock, true);
}

/**
 * take, where it may wait: a lock that exists is looked at once, and one whose mtime is older than the stale
 * time is removed and made again; one removed meanwhile is made again, once.
 */
async function takeLater(lock: string, exists: boolean): Promise<HeldLock> {
  for (let staleCheck = true; ; staleCheck = false) {
    if (!exists) {
      const held = await makeLock(lock);
      if (held !== null) return held;
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

/** A lock just made on `owner`: held, and kept fresh with it until released. */
function hold(lock: string, owner: Owner): HeldLock {
  const h: HeldLock = { path: lock, owner, done: false };
  HELD.add(h);
  owner.held.add(h);
  owner.takenAt = Date.now();
  return h;
}

/** The mtime a refresh gives: the next whole second, exact on every file system. */
const nextWholeSecond = (): number => Math.ceil(Date.now() / 1000);

function touchNow(owner: Owner): void {
  const next = nextWholeSecond();
  fs.futimesSync(owner.fd, next, next);
  owner.freshAt = Date.now();
}

async function touchLater(owner: Owner): Promise<void> {
  const next = nextWholeSecond();
  owner.touching++;
  try {
    await new Promise<void>((resolve, reject) => fs.futimes(owner.fd, next, next, (err) => (err ? reject(err) : resolve())));
  } finally {
    if (--owner.touching === 0 && owner.closed) fs.closeSync(owner.fd);
  }
  owner.freshAt = Date.now();
}

function refreshIn(owner: Owner, ms: number): void {
  owner.timer = setTimeout(() => {
    owner.timer = null;
    void refresh(owner);
  }, ms);
  // Held locks and owner files are removed at exit: their refresh need not keep the process alive.
  owner.timer.unref();
}

/**
 * Every REFRESH_MS from its making: moves the mtime of an owner with held locks, in the thread pool, and lets
 * go of each of its locks that is no longer this process's (taken over as stale meanwhile: another inode, or
 * none). A directory's owner file left idle for a whole period goes.
 */
async function refresh(owner: Owner): Promise<void> {
  if (owner.closed) return;
  if (owner.held.size === 0) {
    if (Date.now() - owner.takenAt >= REFRESH_MS) return retire(owner);
    return refreshIn(owner, REFRESH_MS);
  }
  try {
    await touchLater(owner);
  } catch {
    if (Date.now() - owner.freshAt > STALE_MS) for (const h of owner.held) lost(h);
    if (!owner.closed) refreshIn(owner, REFRESH_RETRY_MS);
    return;
  }
  await Promise.all([...owner.held].map((h) => checkStillMine(h)));
  if (!owner.closed) refreshIn(owner, REFRESH_MS);
}

/** Lets go of a held lock whose path no longer names its owner's inode. */
async function checkStillMine(h: HeldLock): Promise<void> {
  try {
    const st = await fsp.lstat(h.path);
    if (!h.done && (st.ino !== h.owner.ino || st.dev !== h.owner.dev)) lost(h);
  } catch (err) {
    if (!h.done && codeOf(err) === 'ENOENT') lost(h);
  }
}

/** A held lock released or taken over by another process: neither refreshed nor removed by this one any more. */
function lost(h: HeldLock): void {
  h.done = true;
  HELD.delete(h);
  h.owner.held.delete(h);
  // A lock that is its own owner is done with it; a directory's owner stays for the next lock.
  if (!OWNER_FILES.has(h.owner)) retire(h.owner);
}

/** Closes an owner; a directory's owner file is removed, unless it still has locks held on it. */
function retire(owner: Owner): void {
  if (owner.closed) return;
  if (owner.held.size > 0 && OWNER_FILES.has(owner)) return;
  owner.closed = true;
  if (owner.timer) clearTimeout(owner.timer);
  owner.timer = null;
  if (owner.touching === 0) fs.closeSync(owner.fd);
  for (const [dir, o] of OWNERS) if (o === owner) OWNERS.delete(dir);
  if (!OWNER_FILES.delete(owner)) return;
  try {
    fs.unlinkSync(owner.path);
  } catch {
    // Removed meanwhile.
  }
}

/** An owner file no longer linked by new locks: it goes once its held locks are released. */
function retireIfIdle(owner: Owner): void {
  if (owner.held.size === 0) retire(owner);
}

/** Lets go of a held lock; true when its file is still this process's to remove. */
function letGo(h: HeldLock): boolean {
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

  /** Resolves when every released lock is gone, and with it the owner file of each locks directory where none is held. */
  async settled(): Promise<void> {
    await Promise.all([...this.removing.values()]);
    for (const dir of this.swept) {
      const owner = OWNERS.get(dir);
      if (owner) retireIfIdle(owner);
    }
  }
}

const FILE_LOCKS = new PartKind(() => new FileLocks());

/** Resolves when every lock the service's releases are removing is gone, and its idle owner files (shutdown, tests). */
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

/** Age after which a leftover of a process on another host is swept (as the temp sweep's age rule). */
const RELEASED_STALE_MS = 10 * 60_000;

/**
 * Removes the released lock directories (RELEASED) that processes killed during their release left, and the
 * owner files (OWNER_FILE) of processes killed with -9: those of a process of this host that is gone, and those
 * of another host's after RELEASED_STALE_MS (a live holder's owner file is refreshed while it holds a lock). They
 * hold no lock, but would pile up. Once per locks directory per service, at its first lock: one read of a
 * directory that holds the locks held at that moment.
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
    const ownerRecord = OWNER_FILE.exec(name)?.[1];
    const record = ownerRecord ?? RELEASED.exec(name)?.[1];
    if (record === undefined) continue;
    const entry = path.join(locksDir, name);
    try {
      const state = ownerState(record);
      if (state === 'alive' || (state === 'unknown' && Date.now() - statSync(entry).mtimeMs < RELEASED_STALE_MS)) continue;
      // An owner file holds no lock: its locks are links of their own, taken over as any lock.
      if (ownerRecord === undefined) clearReleased(entry);
      else fs.unlinkSync(entry);
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
 * The cross-process lock (a link to the owner file, or a file made with O_EXCL, its record inside either way):
 * taken on the event loop, it costs one link when free; while an fsync runs, in the thread pool (see makeLock).
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
