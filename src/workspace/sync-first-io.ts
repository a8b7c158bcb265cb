// Small file-system work runs synchronously: on a local volume an lstat, an open or a read of a few
// KiB takes microseconds, far less than a round trip through libuv's thread pool, which dominated the
// profiles of read_file and write_file. Data over SMALL_IO_BYTES and every fsync stay asynchronous,
// so a large file or a slow disk never holds the event loop.
import fs, { constants as C } from 'node:fs';
import { promisify } from 'node:util';

export const SMALL_IO_BYTES = 256 * 1024;

const readAsync = promisify(fs.read);
const writeAsync = promisify(fs.write);
const writevAsync = promisify(fs.writev);
const fsyncAsync = promisify(fs.fsync);
const openAsync = promisify(fs.open);
const renameAsync = promisify(fs.rename);

/**
 * unlink and link in the thread pool, through the callback API: fs.promises' own costs a few µs more of CPU per
 * call (a promise request object, resolved from C++), and every write makes two or three of these. Unlike the
 * promisified calls above, they look `fs.unlink` and `fs.link` up at each call, so that a test can hold a release.
 */
export function unlinkInPool(file: string): Promise<void> {
  return new Promise((resolve, reject) => fs.unlink(file, (err) => (err ? reject(err) : resolve())));
}
export function linkInPool(existing: string, name: string): Promise<void> {
  return new Promise((resolve, reject) => fs.link(existing, name, (err) => (err ? reject(err) : resolve())));
}

/** fsyncs running in the thread pool (see openForWrite). */
// Process-wide on purpose: every service of the process shares libuv's one thread pool and the disk it waits on.
let syncsInFlight = 0;

/** An fsync is running: a small metadata or append call made now may wait for its commit (see openForWrite). */
export function syncInFlight(): boolean {
  return syncsInFlight > 0;
}

/**
 * Opens (usually creates) a file to write: synchronously when no fsync is running, in the thread pool
 * otherwise, because creating an inode waits for other writers' fsyncs to commit and would hold every request
 * on the event loop meanwhile (bench/README.md, "Decisions": creates during fsyncs). Callers use a descriptor
 * that comes back synchronously without an await (`typeof opened === 'number'`), so that their write starts
 * before the code that called them goes on.
 */
export function openForWrite(file: string, flags: string | number, mode: number): number | Promise<number> {
  return syncsInFlight === 0 ? fs.openSync(file, flags, mode) : openAsync(file, flags, mode);
}

/** Renames a file: on the event loop when no fsync is running, in the thread pool otherwise (see openForWrite). */
export function renameFile(from: string, to: string): void | Promise<void> {
  if (syncsInFlight === 0) return fs.renameSync(from, to);
  return renameAsync(from, to);
}

/** Linux's O_PATH (not in Node's constants): a handle to walk from and name entries through, needing no read permission. */
const O_PATH = 0o10000000;
/** A directory handle: a real directory only, never through a symlink at the leaf. */
export const DIR_HANDLE_FLAGS = O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW;

/** Opens a handle (O_PATH) of the directory at `dir`, not following a symlink at the leaf. */
export function openDirHandle(dir: string): number {
  return fs.openSync(dir, DIR_HANDLE_FLAGS);
}

/** Opens a file for reading without following a symlink at the leaf and without blocking on a FIFO. */
export function openNoFollow(real: string): number {
  return fs.openSync(real, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
}

/** Reads `length` bytes at `position` (synchronously when small). */
export async function readAt(fd: number, buf: Buffer, length: number, position: number): Promise<number> {
  if (length <= SMALL_IO_BYTES) return fs.readSync(fd, buf, 0, length, position);
  return (await readAsync(fd, buf, 0, length, position)).bytesRead;
}

/** Piece of a large file read at a time when the caller looks at the content as it arrives. */
const READ_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Reads an open file whole; `size` is its fstat size (the file may still grow or shrink meanwhile). With
 * `onChunk`, every piece read is handed over in order while the next one is being read in the thread pool,
 * so work on the content (hashing it) overlaps the read. `alloc` gives the buffer (a pool's, see buffer-pool.ts).
 */
export async function readAll(fd: number, size: number, onChunk?: (chunk: Buffer) => void, alloc: (size: number) => Buffer = Buffer.allocUnsafe): Promise<Buffer> {
  const buf = alloc(size);
  const step = onChunk ? READ_CHUNK_BYTES : size;
  const readFrom = (off: number): number | Promise<number> => {
    const len = Math.min(step, size - off);
    if (len <= SMALL_IO_BYTES) return fs.readSync(fd, buf, off, len, off);
    return readAsync(fd, buf, off, len, off).then((r) => r.bytesRead);
  };
  let off = 0;
  let next = size > 0 ? readFrom(0) : 0;
  for (;;) {
    const n = await next;
    if (n === 0) break;
    const start = off;
    off += n;
    const more = off < size;
    if (more) next = readFrom(off);
    try {
      onChunk?.(buf.subarray(start, off));
    } catch (err) {
      await Promise.resolve(next).catch(() => undefined);
      throw err;
    }
    if (!more) break;
  }
  return off === size ? buf : buf.subarray(0, off);
}

/**
 * Writes all of `data` at the start of a fresh file. Several buffers (an edit's unchanged head, new middle
 * and unchanged tail) go out in one writev, so the new content is never assembled in memory.
 */
export async function writeAll(fd: number, data: Buffer | readonly Buffer[]): Promise<void> {
  if (!Array.isArray(data)) {
    const buf = data as Buffer;
    let off = 0;
    while (off < buf.length) {
      const left = buf.length - off;
      off += left <= SMALL_IO_BYTES ? fs.writeSync(fd, buf, off, left, off) : (await writeAsync(fd, buf, off, left, off)).bytesWritten;
    }
    return;
  }
  let chunks = (data as readonly Buffer[]).filter((b) => b.length > 0);
  let left = chunks.reduce((n, b) => n + b.length, 0);
  let pos = 0;
  while (left > 0) {
    const n = left <= SMALL_IO_BYTES ? fs.writevSync(fd, chunks, pos) : (await writevAsync(fd, chunks, pos)).bytesWritten;
    pos += n;
    left -= n;
    chunks = dropWritten(chunks, n);
  }
}

/** The part of `chunks` a short write of n bytes left unwritten. */
function dropWritten(chunks: Buffer[], n: number): Buffer[] {
  let i = 0;
  while (i < chunks.length && n >= (chunks[i] as Buffer).length) n -= (chunks[i++] as Buffer).length;
  const rest = chunks.slice(i);
  if (n > 0 && rest.length > 0) rest[0] = (rest[0] as Buffer).subarray(n);
  return rest;
}

export async function fsyncFd(fd: number): Promise<void> {
  syncsInFlight++;
  try {
    await fsyncAsync(fd);
  } finally {
    syncsInFlight--;
  }
}
