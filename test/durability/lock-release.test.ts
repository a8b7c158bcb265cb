// Releasing a write lock (docs/api.md, "Durable writes and backups"): the answer does not wait for the unlink of
// the lock file, but the next writer of the same file waits for it, and the shutdown too.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { VersionStamp } from '../../src/envelope.js';
import { lockPathFor, locksSettled } from '../../src/workspace/locks.js';
import { makeApp, pathExists, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await t?.close();
  t = undefined;
});

/** Holds every release of a lock (the unlink of its file) until `open()` is called. */
function holdLockRemoval() {
  const realUnlink = fs.unlink.bind(fs);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let held = 0;
  // The release unlinks in the thread pool through the callback API (src/workspace/sync-first-io.ts).
  vi.spyOn(fs, 'unlink').mockImplementation(((p: fs.PathLike, done: fs.NoParamCallback) => {
    if (String(p).includes(`${path.sep}locks${path.sep}`)) {
      held++;
      void gate.then(() => realUnlink(p, done));
      return;
    }
    realUnlink(p, done);
  }) as typeof fs.unlink);
  return { open, held: () => held };
}

describe('lock release', () => {
  it('answers before the lock is gone; the next writer of the file waits for it', async () => {
    t = await makeApp();
    const app = t;
    const ws = app.app.toolgate.workspace;
    if (!ws) throw new Error('single workspace expected');
    const removal = holdLockRemoval();

    const first = await app.call('write_file', { path: 'a.txt', content: 'one\n' });
    expect(first.status).toBe(200);
    // The answer came while the lock's removal was still held.
    expect(removal.held()).toBeGreaterThan(0);
    expect(await pathExists(lockPathFor(ws, app.file('a.txt')))).toBe(true);

    const version = (first.body.data as { version: VersionStamp }).version.sha256;
    let secondDone = false;
    const second = app.call('write_file', { path: 'a.txt', content: 'two\n', expected_sha256: version }).then((r) => {
      secondDone = true;
      return r;
    });
    // A writer of another file is not held up by it.
    expect((await app.call('write_file', { path: 'b.txt', content: 'other\n' })).status).toBe(200);
    expect(secondDone).toBe(false);
    expect(await fsp.readFile(app.file('a.txt'), 'utf8')).toBe('one\n');

    removal.open();
    const r = await second;
    expect(r.status).toBe(200);
    expect(await fsp.readFile(app.file('a.txt'), 'utf8')).toBe('two\n');
  });

  it('writers that lock while another write fsyncs take their locks in the thread pool, and all release them', async () => {
    t = await makeApp();
    const app = t;
    const ws = app.app.toolgate.workspace;
    if (!ws) throw new Error('single workspace expected');
    const realOpen = fs.open.bind(fs);
    let pooled = 0;
    vi.spyOn(fs, 'open').mockImplementation(((p: fs.PathLike, ...rest: unknown[]) => {
      if (String(p).endsWith('.lock')) pooled++;
      return (realOpen as (...args: unknown[]) => void)(p, ...rest);
    }) as typeof fs.open);
    const names = Array.from({ length: 16 }, (_, i) => `f${i}.txt`);
    const answers = await Promise.all(names.map((n) => app.call('write_file', { path: n, content: `${n}\n` })));
    expect(answers.map((r) => r.status)).toEqual(names.map(() => 200));
    for (const n of names) expect(await fsp.readFile(app.file(n), 'utf8')).toBe(`${n}\n`);
    // The first writer's fsync was running while the others locked.
    expect(pooled).toBeGreaterThan(0);
    await locksSettled(ws.runtime);
    expect(await fsp.readdir(path.dirname(lockPathFor(ws, app.file('f0.txt'))))).toEqual([]);
  });

  it('the shutdown waits until every released lock is gone', async () => {
    t = await makeApp();
    const app = t;
    const ws = app.app.toolgate.workspace;
    if (!ws) throw new Error('single workspace expected');
    const removal = holdLockRemoval();
    expect((await app.call('write_file', { path: 'c.txt', content: 'x\n' })).status).toBe(200);
    const lock = lockPathFor(ws, app.file('c.txt'));
    expect(await pathExists(lock)).toBe(true);

    let closed = false;
    const closing = app.app.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    removal.open();
    await closing;
    expect(await pathExists(lock)).toBe(false);
    expect(await fsp.readdir(path.dirname(lock))).toEqual([]);
  });
});
