// Durable writes (docs/api.md, "Durable writes and backups"): temp file, fsync, rename over the target, fsync of the directory.
// Temp files live in the state directory (same volume), so a crash never leaves one beside the user's files.
import fsCallbacks, { accessSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, rmdirSync, rmSync, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ownerStateOf, writeOwnerRecord } from './process-owner.js';
import { randomHex } from './random-hex.js';
import { TEMP_MARKER } from './sandbox.js';
import { fsyncFd, openForWrite, renameFile, writeAll } from './sync-first-io.js';
import type { Workspace } from './workspace.js';

const STALE_TEMP_MS = 10 * 60 * 1000;

function tempDirOf(ws: Workspace): string {
  return path.join(ws.stateDir, 'tmp', ws.instanceId);
}
/** In each temp directory: the process that made it, so that a sweep spares the temp files of a live writer. */
const OWNER = '.owner';

function makeTempDir(ws: Workspace): void {
  const dir = tempDirOf(ws);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    writeOwnerRecord(path.join(dir, OWNER));
  } catch (err) {
    // EEXIST: another live process with the same (explicitly set) instance id made it first.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

export async function fsyncDirectory(dir: string): Promise<void> {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
}

/** Content to write: one buffer, or several written back to back (see writeAll). */
export type FileContent = Buffer | readonly Buffer[];

/**
 * Writes and fsyncs a new temp file; on any failure (a full disk above all) nothing of it is left. Returns its
 * stat, from the descriptor: a rename keeps the inode's size and mtime, so it is the committed file's too.
 */
async function writeTemp(tempPath: string, data: FileContent, mode: number): Promise<Stats> {
  const opened = openForWrite(tempPath, 'wx', mode);
  const fd = typeof opened === 'number' ? opened : await opened;
  let st: Stats;
  try {
    await writeAll(fd, data);
    fchmodSync(fd, mode);
    await fsyncFd(fd);
    st = fstatSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tempPath, { force: true });
    throw err;
  }
  closeSync(fd);
  return st;
}

export interface AtomicWriteOptions {
  /** File mode to give the new file (the existing file's mode is kept by callers). */
  mode?: number | undefined;
}

/** A temp file written and fsynced in the state directory, not yet renamed over its target. */
export interface TempFile {
  readonly path: string;
  readonly name: string;
  readonly data: FileContent;
  readonly mode: number;
  /** Its stat once written and fsynced (see writeTemp). */
  readonly stat: Stats;
}

/**
 * First half of writeFileAtomic: the content in a new, fsynced temp file. A caller may run other work while
 * it is being written (the write and the fsync run in the thread pool), then commit or discard it.
 */
export async function writeTempFile(ws: Workspace, data: FileContent, opts: AtomicWriteOptions = {}): Promise<TempFile> {
  const mode = opts.mode ?? 0o644;
  const name = `${TEMP_MARKER}${randomHex(8)}`;
  const tempPath = path.join(tempDirOf(ws), name);
  let stat: Stats;
  try {
    stat = await writeTemp(tempPath, data, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    makeTempDir(ws);
    stat = await writeTemp(tempPath, data, mode);
  }
  return { path: tempPath, name, data, mode, stat };
}

/**
 * Whether a call was stopped (time limit, client gone), asked without making its AbortSignal: an AbortSignal is
 * one, and so is a tool's context (src/tools/define.ts), which makes its signal only when a step has to wait on it.
 */
export interface Stop {
  readonly aborted: boolean;
  throwIfAborted(): void;
}

export interface CommitOptions {
  /**
   * The call this write belongs to (an AbortSignal, or a tool's context: see Stop): once it is stopped (time
   * limit, client gone), the temp file is removed instead of renamed, so a call answered TIMEOUT changed nothing
   * (as fs.writeFile's `signal` refuses to write).
   */
  stop?: Stop | undefined;
  /**
   * The file being replaced is large: hold it open across the rename and close it in the thread pool
   * afterwards, so freeing its blocks (which a rename over the last link does in the call) happens there,
   * after the answer, instead of holding this thread.
   */
  releaseLater?: boolean;
}

/**
 * Second half of writeFileAtomic: renames the temp file over `target` (a handle name, ResolvedPath.at) and
 * fsyncs the directory, unless the call was stopped meanwhile (`stop`); returns the target's stat.
 */
export async function commitTempFile(temp: TempFile, target: string, opts: CommitOptions = {}): Promise<Stats> {
  if (opts.stop?.aborted) {
    discardTempFile(temp);
    opts.stop.throwIfAborted();
  }
  const held = opts.releaseLater ? holdOpen(target) : null;
  try {
    return await renameInto(temp, target);
  } finally {
    if (held !== null) fsCallbacks.close(held, () => undefined);
  }
}

/** A read-only descriptor of the file at `target` (not following a symlink, not blocking), or null. */
function holdOpen(target: string): number | null {
  try {
    return openSync(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
}

/**
 * Renames the temp file over `target` and fsyncs the directory; returns the stat of what was renamed (the temp
 * file's, taken from its descriptor: no lookup of the target by name after the rename).
 */
async function renameInto(temp: TempFile, target: string): Promise<Stats> {
  requireWritable(target);
  let tempPath = temp.path;
  let st = temp.stat;
  try {
    try {
      await renameFile(tempPath, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      // The target lies on another file system than the state directory: use a hidden temp beside it.
      rmSync(tempPath, { force: true });
      tempPath = path.join(path.dirname(target), `.${temp.name}`);
      st = await writeTemp(tempPath, temp.data, temp.mode);
      await renameFile(tempPath, target);
    }
  } catch (err) {
    rmSync(tempPath, { force: true });
    throw err;
  }
  await fsyncDirectory(path.dirname(target));
  return st;
}

/**
 * A rename replaces a file its mode or owner protects from writing: refuse as a plain write would (for root,
 * which writes anything, a file with no write bit at all is protected).
 */
function requireWritable(target: string): void {
  let st: Stats;
  try {
    st = lstatSync(target);
  } catch {
    return; // a new file: the directory's permissions decide, at the rename
  }
  if (!st.isFile()) return;
  const root = process.getuid?.() === 0;
  let writable = !root || (st.mode & 0o222) !== 0;
  if (writable && !root) {
    try {
      accessSync(target, constants.W_OK);
    } catch {
      writable = false;
    }
  }
  if (!writable) throw Object.assign(new Error('file is read-only'), { code: 'EACCES' });
}

/** Removes a temp file that will not be committed (the change was refused after it was written). */
export function discardTempFile(temp: TempFile): void {
  rmSync(temp.path, { force: true });
}

/** Replaces `target` (a handle name from the sandbox, ResolvedPath.at) with `data` atomically and durably; returns its stat. */
export async function writeFileAtomic(ws: Workspace, target: string, data: FileContent, opts: AtomicWriteOptions & CommitOptions = {}): Promise<Stats> {
  return commitTempFile(await writeTempFile(ws, data, opts), target, opts);
}

/**
 * Removes temp files left by a crash: all of a temp directory whose owner on this host is gone, and files
 * older than ten minutes where the owner lives elsewhere (only age can tell there). A live owner's files may
 * be in flight and stay. A directory without an owner record (made before records were kept) is treated as
 * before: this instance's is a crashed earlier run's. Returns how many files were removed.
 */
export async function sweepTempFiles(ws: Workspace): Promise<number> {
  const base = path.join(ws.stateDir, 'tmp');
  let removed = 0;
  let owners: string[];
  try {
    owners = await fs.readdir(base);
  } catch {
    return 0;
  }
  const now = Date.now();
  for (const owner of owners) {
    const dir = path.join(base, owner);
    const state = ownerStateOf(path.join(dir, OWNER));
    if (state === 'alive') continue;
    const all = state === 'dead' || (state === null && owner === ws.instanceId);
    const entries = await fs.readdir(dir).catch(() => [] as string[]);
    for (const entry of entries) {
      if (entry === OWNER) continue;
      const file = path.join(dir, entry);
      const st = await fs.lstat(file).catch(() => null);
      if (!st) continue;
      if (all || now - st.mtimeMs > STALE_TEMP_MS) {
        await fs.rm(file, { force: true });
        removed++;
      }
    }
    if (state === 'dead') {
      // One directory per process start would pile up otherwise.
      try {
        rmSync(path.join(dir, OWNER), { force: true });
        rmdirSync(dir);
      } catch {
        // Not empty after all: left for a later sweep.
      }
    }
  }
  return removed;
}
