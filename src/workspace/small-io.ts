// Small file-system work runs synchronously: on a local volume an lstat, an open or a read of a few
// KiB takes microseconds, far less than a round trip through libuv's thread pool, which dominated the
// profiles of read_file and write_file. Data over SMALL_IO_BYTES and every fsync stay asynchronous,
// so a large file or a slow disk never holds the event loop.
import fs, { constants as C } from 'node:fs';
import { promisify } from 'node:util';

export const SMALL_IO_BYTES = 256 * 1024;

const readAsync = promisify(fs.read);
const writeAsync = promisify(fs.write);
const fsyncAsync = promisify(fs.fsync);

/** Opens a file for reading without following a symlink at the leaf and without blocking on a FIFO. */
export function openNoFollow(real: string): number {
  return fs.openSync(real, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
}

/** Reads `length` bytes at `position` (synchronously when small). */
export async function readAt(fd: number, buf: Buffer, length: number, position: number): Promise<number> {
  if (length <= SMALL_IO_BYTES) return fs.readSync(fd, buf, 0, length, position);
  return (await readAsync(fd, buf, 0, length, position)).bytesRead;
}

/** Reads an open file whole; `size` is its fstat size (the file may still grow or shrink meanwhile). */
export async function readAll(fd: number, size: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(size);
  let off = 0;
  while (off < size) {
    const n = size - off <= SMALL_IO_BYTES ? fs.readSync(fd, buf, off, size - off, off) : (await readAsync(fd, buf, off, size - off, off)).bytesRead;
    if (n === 0) break;
    off += n;
  }
  return off === size ? buf : buf.subarray(0, off);
}

/** Writes all of `data` at the start of a fresh file. */
export async function writeAll(fd: number, data: Buffer): Promise<void> {
  let off = 0;
  while (off < data.length) {
    const left = data.length - off;
    off += left <= SMALL_IO_BYTES ? fs.writeSync(fd, data, off, left, off) : (await writeAsync(fd, data, off, left, off)).bytesWritten;
  }
}

export function fsyncFd(fd: number): Promise<void> {
  return fsyncAsync(fd);
}
