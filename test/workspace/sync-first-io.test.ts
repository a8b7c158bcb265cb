// Files are created on the event loop unless an fsync is running, when creating an inode waits for the
// journal; then the create goes to the thread pool (src/workspace/sync-first-io.ts, openForWrite). A large
// write starts in the thread pool before its caller goes on (src/workspace/atomic.ts, writeTempFile).
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeTempFile } from '../../src/workspace/atomic.js';
import { fsyncFd, openForWrite, renameFile, writeAll } from '../../src/workspace/sync-first-io.js';
import type { Workspace } from '../../src/workspace/workspace.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-small-io-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function create(name: string): Promise<{ sync: boolean; fd: number }> {
  const opened = openForWrite(path.join(dir, name), 'wx', 0o644);
  return { sync: typeof opened === 'number', fd: await opened };
}

describe('openForWrite', () => {
  it('creates a file synchronously when no fsync runs, whatever will be written to it', async () => {
    const first = await create('first');
    const second = await create('second');
    expect([first.sync, second.sync]).toEqual([true, true]);
    closeSync(first.fd);
    closeSync(second.fd);
  });

  it('creates a small file in the thread pool while an fsync runs, and synchronously again after it', async () => {
    const other = openSync(path.join(dir, 'other'), 'w');
    const syncing = fsyncFd(other);
    const during = await create('during');
    await syncing;
    const after = await create('after');
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
    expect((await create('next')).sync).toBe(true);
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
    // Its handler is attached at once: it may fail before `during` settles (an unhandled rejection otherwise).
    const missing = expect(renameFile(path.join(dir, 'nope'), path.join(dir, 'x'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(during).toBeInstanceOf(Promise);
    await during;
    await missing;
    await syncing;
    closeSync(other);
    expect(() => renameFile(path.join(dir, 'nope'), path.join(dir, 'x'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect((await fs.readdir(dir)).sort()).toEqual(['a2', 'b2', 'other']);
  });
});

describe('writeTempFile', () => {
  it('has a large write running in the thread pool before it returns to its caller', async () => {
    const ws = { stateDir: dir, instanceId: 'test' } as Workspace;
    const size = 8 * 1024 * 1024;
    const parts = [Buffer.alloc(size / 2, 'a'), Buffer.from('edited\n'), Buffer.alloc(size / 2, 'b')];
    const tempDir = path.join(dir, 'tmp', 'test');
    mkdirSync(tempDir, { recursive: true }); // as after the service's first write
    const writing = writeTempFile(ws, parts);
    // The event loop stays busy (an edit hashes the new content here): the write must not wait for it.
    const [name] = existsSync(tempDir) ? readdirSync(tempDir) : []; // no await: that would let the event loop run
    const file = path.join(tempDir, name ?? 'missing');
    const busyUntil = Date.now() + 2000;
    let written = 0;
    while (Date.now() < busyUntil && written < size) {
      try {
        written = statSync(file).size;
      } catch {
        break;
      }
    }
    expect(written).toBeGreaterThan(size / 2);
    const temp = await writing;
    expect(readFileSync(temp.path).equals(Buffer.concat(parts))).toBe(true);
  });
});
