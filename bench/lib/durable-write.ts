// The baseline of the big-edit target: a plain durable write of given bytes, done the way the spec
// asks of every write (temp file in the same directory, write, fsync, rename, fsync of the directory),
// with nothing else: no read, no hashing, no backup, no diff. And the floors of write_file (its file-system
// calls) and of a big edit (read, hashes, backup and durable write).
import { randomBytes } from 'node:crypto';
import { closeSync, constants as fsConstants, fstatSync, fsync, mkdirSync, open, openSync, readFileSync, readdirSync, renameSync, rmdirSync, writeSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { readAll } from '../../src/workspace/sync-first-io.js';
import { Sha256Snapshots } from '../../src/workspace/versions.js';

const fsyncAsync = promisify(fsync);
const openAsync = promisify(open);

/** Durable write of `data`, or of the concatenation of its parts (one writev, no copy). */
export async function durableWrite(target: string, data: Buffer | Buffer[]): Promise<void> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.bench-${randomBytes(6).toString('hex')}.tmp`);
  const fh = await fs.open(temp, 'wx', 0o644);
  try {
    if (Buffer.isBuffer(data)) await fh.writeFile(data);
    else {
      const total = data.reduce((n, b) => n + b.length, 0);
      const { bytesWritten } = await fh.writev(data);
      if (bytesWritten !== total) throw new Error(`${temp}: short write (${bytesWritten} of ${total} bytes)`);
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(temp, target);
  const dh = await fs.open(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

/** Backups kept per file by toolgate's default (TOOLGATE_BACKUP_KEEP). */
export const BACKUP_KEEP = 10;
let backupSeq = 0;
let fsyncsRunning = 0;

async function fsyncCounted(fd: number): Promise<void> {
  fsyncsRunning++;
  try {
    await fsyncAsync(fd);
  } finally {
    fsyncsRunning--;
  }
}

/** A new small file, created as toolgate creates one: on the event loop, or in the thread pool while an fsync runs. */
async function createWith(file: string, data: Buffer | string, flags = 'w'): Promise<number> {
  const fd = fsyncsRunning === 0 ? openSync(file, flags, 0o644) : await openAsync(file, flags, 0o644);
  writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
  return fd;
}

/**
 * The file-system calls alone that toolgate's write_file must make around the same durable write, in the same
 * style (other metadata calls and small reads and writes synchronous; fsync in the thread pool, and file
 * creation and the rename too while an fsync runs): take a lock directory, read the old content, keep it as a
 * backup (data + meta file) and drop the oldest backup over the per-file limit, write a temp file, fsync it,
 * rename it over the target, fsync the directory, and remove the lock. No HTTP, no hashing, no diff, no audit:
 * the floor of a locked, backed-up durable write.
 */
export async function guardedDurableWrite(target: string, data: Buffer, stateDir: string): Promise<void> {
  const key = path.basename(target);
  const lock = path.join(stateDir, 'locks', `${key}.lock`);
  const backups = path.join(stateDir, 'backups', key);
  mkdirSync(lock);
  try {
    const old = readFileSync(target);
    const id = `${Date.now().toString(36)}-${(backupSeq++).toString(36).padStart(6, '0')}`;
    mkdirSync(backups, { recursive: true });
    closeSync(await createWith(path.join(backups, `${id}.bak`), old));
    closeSync(await createWith(path.join(backups, `${id}.json`), JSON.stringify({ backup_id: id, path: key, size_bytes: old.length })));
    const ids = readdirSync(backups)
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -5))
      .sort()
      .reverse();
    await Promise.all(ids.slice(BACKUP_KEEP).flatMap((o) => [fs.unlink(path.join(backups, `${o}.bak`)), fs.unlink(path.join(backups, `${o}.json`))]));
    const dir = path.dirname(target);
    const temp = path.join(dir, `.bench-${randomBytes(6).toString('hex')}.tmp`);
    const fd = await createWith(temp, data, 'wx');
    try {
      await fsyncCounted(fd);
    } finally {
      closeSync(fd);
    }
    if (fsyncsRunning === 0) renameSync(temp, target);
    else await fs.rename(temp, target);
    const dfd = openSync(dir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
    try {
      await fsyncCounted(dfd);
    } finally {
      closeSync(dfd);
    }
  } finally {
    rmdirSync(lock);
  }
}

/** The read buffer of guardedEdit, kept between calls (toolgate pools its big buffers too): fresh 50 MiB would be page-faulted in on every call. */
let editBuffer: Buffer | null = null;

/**
 * The least a one-line edit of a big file must do, with the overlap toolgate uses: read the old content in
 * chunks while hashing each chunk on the main thread (its sha256 is the version the edit replaces and the
 * audit's sha256_before), keeping the hash state every 256 KiB (toolgate's readAll and Sha256Snapshots); find
 * the old text; then write the old content as the backup (not fsynced) and the new content (old head, new
 * text, old tail: one writev, no copy) durably in the thread pool while the main thread hashes the new content
 * from the last state before the change. No lock, no HTTP, no diff, no audit: the floor of a backed-up,
 * versioned durable edit.
 */
export async function guardedEdit(target: string, backup: string, from: Buffer, to: Buffer): Promise<void> {
  const hash = new Sha256Snapshots();
  const fd = openSync(target, 'r');
  let old: Buffer;
  try {
    const { size } = fstatSync(fd);
    old = await readAll(fd, size, (chunk) => hash.update(chunk), (n) => {
      if (!editBuffer || editBuffer.length < n) editBuffer = Buffer.allocUnsafe(n);
      return editBuffer.subarray(0, n);
    });
  } finally {
    closeSync(fd);
  }
  hash.digest();
  const at = old.indexOf(from);
  if (at < 0) throw new Error(`${target}: the old text is not in the file`);
  const tail = old.subarray(at + from.length);
  const writes = Promise.all([fs.writeFile(backup, old), durableWrite(target, [old.subarray(0, at), to, tail])]);
  hash.hashOfHead(old, at).update(to).update(tail).digest('hex');
  await writes;
}
