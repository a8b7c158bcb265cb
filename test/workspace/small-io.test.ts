// Small files are created on the event loop unless an fsync is running, when creating an inode waits for
// the journal; then the create goes to the thread pool (src/workspace/small-io.ts, openForWrite).
import { closeSync, openSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fsyncFd, openForWrite, renameFile, SMALL_IO_BYTES, writeAll } from '../../src/workspace/small-io.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-small-io-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function create(name: string, bytes: number): Promise<{ sync: boolean; fd: number }> {
  const opened = openForWrite(path.join(dir, name), 'wx', 0o644, bytes);
  return { sync: typeof opened === 'number', fd: await opened };
}

describe('openForWrite', () => {
  it('creates a small file synchronously when no fsync runs, and a large one in the thread pool', async () => {
    const small = await create('small', SMALL_IO_BYTES);
    const large = await create('large', SMALL_IO_BYTES + 1);
    expect([small.sync, large.sync]).toEqual([true, false]);
    closeSync(small.fd);
    closeSync(large.fd);
  });

  it('creates a small file in the thread pool while an fsync runs, and synchronously again after it', async () => {
    const other = openSync(path.join(dir, 'other'), 'w');
    const syncing = fsyncFd(other);
    const during = await create('during', 10);
    await syncing;
    const after = await create('after', 10);
    expect([during.sync, after.sync]).toEqual([false, true]);
    await writeAll(during.fd, Buffer.from('written\n'));
    closeSync(during.fd);
    closeSync(after.fd);
    closeSync(other);
    expect(readFileSync(path.join(dir, 'during'), 'utf8')).toBe('written\n');
  });

  it('counts a failed fsync as finished', async () => {
    const neverOpen = 2 ** 30; // above any file-descriptor limit
    await expect(fsyncFd(neverOpen)).rejects.toMatchObject({ code: 'EBADF' });
    expect((await create('next', 10)).sync).toBe(true);
  });
});

describe('renameFile', () => {
  it('renames on the event loop when no fsync runs, in the thread pool while one does, and reports a failure either way', async () => {
    await fs.writeFile(path.join(dir, 'a'), 'A');
    await fs.writeFile(path.join(dir, 'b'), 'B');
    expect(renameFile(path.join(dir, 'a'), path.join(dir, 'a2'))).toBeUndefined();
    const other = openSync(path.join(dir, 'other'), 'w');
    const syncing = fsyncFd(other);
    const during = renameFile(path.join(dir, 'b'), path.join(dir, 'b2'));
    const missing = renameFile(path.join(dir, 'nope'), path.join(dir, 'x'));
    expect(during).toBeInstanceOf(Promise);
    await during;
    await expect(missing).rejects.toMatchObject({ code: 'ENOENT' });
    await syncing;
    closeSync(other);
    expect(() => renameFile(path.join(dir, 'nope'), path.join(dir, 'x'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect((await fs.readdir(dir)).sort()).toEqual(['a2', 'b2', 'other']);
  });
});
