// The write lock on disk (docs/api.md, "Durable writes and backups"): one regular file holding its holder's
// owner record, made in one create and removed in one unlink; the locks older versions made (a directory with
// the record inside) are still respected, and taken over when their holder is gone.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lockPathFor, locksSettled, withFileLock } from '../../src/workspace/locks.js';
import { OWNER_RECORD } from '../../src/workspace/process-owner.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { makeApp, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await t?.close();
  t = undefined;
});

async function app(env: Record<string, string> = {}): Promise<{ app: TestApp; ws: Workspace }> {
  t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'never', ...env });
  const ws = t.app.toolgate.workspace;
  if (!ws) throw new Error('single workspace expected');
  return { app: t, ws };
}

/** The lock path of a workspace file, its locks directory made (as the first write makes it). */
async function lockOf(app: TestApp, ws: Workspace, rel: string): Promise<string> {
  await fsp.writeFile(app.file(rel), 'before\n');
  const lock = lockPathFor(ws, await fsp.realpath(app.file(rel)));
  await fsp.mkdir(path.dirname(lock), { recursive: true });
  return lock;
}

const HOST = OWNER_RECORD.split(':')[0] as string;
/** The owner record of a process of this host that has exited, as one killed with -9 leaves it. */
async function deadRecord(): Promise<string> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return `${HOST}:${child.pid}:0123456789ab`;
}
/** The owner record of a process of this host that lives (the one that started this test worker). */
const liveRecord = `${HOST}:${process.ppid}:0123456789ab`;

describe('the lock on disk', () => {
  it('while held, is one regular file holding the owner record; after the release nothing is left', async () => {
    const { app: a, ws } = await app();
    const lock = await lockOf(a, ws, 'a.txt');
    await withFileLock(ws, await fsp.realpath(a.file('a.txt')), 'a.txt', async () => {
      const st = await fsp.lstat(lock);
      expect(st.isFile()).toBe(true);
      expect(st.mode & 0o777).toBe(0o600);
      expect(await fsp.readFile(lock, 'utf8')).toBe(`${OWNER_RECORD}\n`);
      expect(await fsp.readdir(path.dirname(lock))).toEqual([path.basename(lock)]);
    });
    await locksSettled(ws.runtime);
    expect(await fsp.readdir(path.dirname(lock))).toEqual([]);

    expect((await a.call('write_file', { path: 'a.txt', content: 'after\n' })).body.status).toBe('success');
    await locksSettled(ws.runtime);
    expect(await fsp.readdir(path.dirname(lock))).toEqual([]);
  });

  it('a write makes one create and one unlink in the locks directory, and no other metadata call or lookup there', async () => {
    const { app: a, ws } = await app();
    const lock = await lockOf(a, ws, 'counted.txt');
    const locksDir = path.dirname(lock) + path.sep;
    // Every call of node:fs that makes, removes, moves or touches an entry, by name: those in locks/ count.
    const calls: string[] = [];
    const watch = (obj: object, names: string[], kind: string) => {
      for (const name of names) {
        const target = obj as Record<string, (...args: unknown[]) => unknown>;
        const real = (target[name] as (...args: unknown[]) => unknown).bind(obj);
        vi.spyOn(target, name).mockImplementation((p: unknown, ...rest: unknown[]) => {
          if (String(p).startsWith(locksDir)) calls.push(`${name} (${kind})`);
          return real(p, ...rest);
        });
      }
    };
    // And every lookup by name: the new lock's mtime, kept to tell whether the lock is still ours, comes from its descriptor.
    watch(fs, ['openSync', 'mkdirSync', 'rmdirSync', 'unlinkSync', 'renameSync', 'utimesSync', 'statSync', 'lstatSync'], 'sync');
    watch(fs, ['open', 'mkdir', 'rmdir', 'unlink', 'rename', 'utimes', 'stat', 'lstat'], 'callback');
    watch(fsp, ['open', 'mkdir', 'rmdir', 'unlink', 'rename', 'utimes', 'stat', 'lstat'], 'promise');
    const WRITES = 5;
    for (let n = 1; n <= WRITES; n++) {
      expect((await a.call('write_file', { path: 'counted.txt', content: `write ${n}\n` })).body.status).toBe('success');
    }
    await locksSettled(ws.runtime);
    const of = (re: RegExp) => calls.filter((c) => re.test(c)).length;
    // No utimes either: a lock is refreshed only when held for seconds (src/workspace/locks.ts).
    expect({ creates: of(/^open/), unlinks: of(/^unlink/), others: calls.filter((c) => !/^(open|unlink)/.test(c)) }).toEqual({ creates: WRITES, unlinks: WRITES, others: [] });
  });

  it('a lock held past its refreshes keeps its mtime fresh in whole seconds and is released, not compromised', async () => {
    const { app: a, ws } = await app();
    const lock = await lockOf(a, ws, 'long.txt');
    // The lock's mtime is refreshed every 5 s (half the stale time) by a setTimeout, its stat and utimes in the thread pool.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const mtimeOf = async () => (await fsp.stat(lock)).mtimeMs;
    /** Until the lock's mtime is a whole second after `than` (the refresh's calls land), in real time. */
    const refreshedAfter = async (than: number) => {
      for (let i = 0; i < 20_000; i++) {
        const m = await mtimeOf();
        if (m > than && m % 1000 === 0) return m;
        await new Promise((r) => setImmediate(r));
      }
      throw new Error('the lock was not refreshed');
    };
    try {
      await withFileLock(ws, await fsp.realpath(a.file('long.txt')), 'long.txt', async () => {
        const made = await mtimeOf();
        vi.advanceTimersByTime(5_000);
        const refreshed = await refreshedAfter(made);
        // Later refreshes find the mtime the last one gave (not compromised), and keep it whole.
        for (let n = 0; n < 2; n++) {
          vi.advanceTimersByTime(5_000);
          expect(await refreshedAfter(refreshed - 1)).toBeGreaterThanOrEqual(refreshed);
          for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
        }
      });
    } finally {
      vi.useRealTimers();
    }
    await locksSettled(ws.runtime);
    expect(await fsp.readdir(path.dirname(lock))).toEqual([]);
  });
});

describe('locks of older versions (a directory, the record an entry owner=<record> inside)', () => {
  it('one whose holder is gone is taken over at once, and removed whole', async () => {
    const { app: a, ws } = await app({ TOOLGATE_LOCK_TIMEOUT_MS: '2000' });
    const lock = await lockOf(a, ws, 'old.txt');
    await fsp.mkdir(path.join(lock, `owner=${await deadRecord()}`), { recursive: true });
    expect((await a.call('write_file', { path: 'old.txt', content: 'after\n' })).body.status).toBe('success');
    await locksSettled(ws.runtime);
    expect(await fsp.readdir(path.dirname(lock))).toEqual([]);
  });

  it('one whose holder lives is waited for: LOCKED, then the write goes through once it is released', async () => {
    const { app: a, ws } = await app({ TOOLGATE_LOCK_TIMEOUT_MS: '150' });
    const lock = await lockOf(a, ws, 'old.txt');
    await fsp.mkdir(path.join(lock, `owner=${liveRecord}`), { recursive: true });
    const held = await a.call('write_file', { path: 'old.txt', content: 'after\n' });
    expect(held.body.error?.code).toBe('LOCKED');
    expect(await fsp.readFile(a.file('old.txt'), 'utf8')).toBe('before\n');
    // Its holder's release.
    await fsp.rm(lock, { recursive: true });
    expect((await a.call('write_file', { path: 'old.txt', content: 'after\n' })).body.status).toBe('success');
  });
});

describe('a lock file without a record (its maker killed between the create and the write)', () => {
  it('made after this process started is waited for (it may be one being made)', async () => {
    const { app: a, ws } = await app({ TOOLGATE_LOCK_TIMEOUT_MS: '150' });
    const lock = await lockOf(a, ws, 'empty.txt');
    await fsp.writeFile(lock, '', { flag: 'wx' });
    expect((await a.call('write_file', { path: 'empty.txt', content: 'after\n' })).body.error?.code).toBe('LOCKED');
    // A record cut short (no newline) is no record either.
    await fsp.writeFile(lock, OWNER_RECORD.slice(0, 12));
    expect((await a.call('write_file', { path: 'empty.txt', content: 'after\n' })).body.error?.code).toBe('LOCKED');
    expect(await fsp.readFile(a.file('empty.txt'), 'utf8')).toBe('before\n');
  });

  it('older than the stale time is removed, and the write goes through', async () => {
    const { app: a, ws } = await app({ TOOLGATE_LOCK_TIMEOUT_MS: '150' });
    const lock = await lockOf(a, ws, 'empty.txt');
    await fsp.writeFile(lock, '', { flag: 'wx' });
    const old = new Date(Date.now() - 60_000);
    await fsp.utimes(lock, old, old);
    expect((await a.call('write_file', { path: 'empty.txt', content: 'after\n' })).body.status).toBe('success');
    await locksSettled(ws.runtime);
    expect(await fsp.readdir(path.dirname(lock))).toEqual([]);
  });
});
