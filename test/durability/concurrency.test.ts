// Concurrent writers (docs/api.md): optimistic locks let exactly one racing writer win, appends are never
// lost, writers in other processes are serialized through proper-lockfile, and a held lock gives LOCKED.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import lockfile from 'proper-lockfile';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Envelope, VersionStamp } from '../../src/envelope.js';
import { lockPathFor, locksSettled } from '../../src/workspace/locks.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { holdFileLock, makeApp, type TestApp } from '../helpers.js';
import { expectEnvelope } from '../security/envelope-checks.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const QUIET = { TOOLGATE_RATE_LIMIT: '0', TOOLGATE_AUDIT_STDOUT: 'false' };

function workspaceOf(t: TestApp): Workspace {
  const ws = t.app.toolgate.workspace;
  if (!ws) throw new Error('single-workspace app expected');
  return ws;
}

let t: TestApp;
beforeEach(async () => {
  t = await makeApp(QUIET);
});
afterEach(async () => {
  await t?.close();
});

describe('concurrency: optimistic locking', () => {
  it('two concurrent write_file calls with the same expected_sha256: exactly one wins, the other gets CONFLICT', async () => {
    let content = 'v0\n';
    await fs.writeFile(t.file('race.txt'), content);
    for (let round = 1; round <= 8; round++) {
      const expected = sha256(content);
      const [a, b] = await Promise.all([
        t.call('write_file', { path: 'race.txt', content: `A${round}\n`, expected_sha256: expected }),
        t.call('write_file', { path: 'race.txt', content: `B${round}\n`, expected_sha256: expected }),
      ]);
      expectEnvelope(a.body, a.status);
      expectEnvelope(b.body, b.status);
      const results = [a, b];
      const winners = results.filter((r) => r.body.status === 'success');
      const losers = results.filter((r) => r.body.status === 'error');
      expect(winners, `round ${round}`).toHaveLength(1);
      expect(losers).toHaveLength(1);
      const loser = losers[0]!;
      const winner = winners[0]!;
      expect(loser.status).toBe(409);
      expect(loser.body.error?.code).toBe('CONFLICT');
      const current = (loser.body.error?.details as { current: VersionStamp }).current;
      const winnerVersion = (winner.body.data as { version: VersionStamp }).version;
      expect(current.sha256).toBe(winnerVersion.sha256);
      content = await fs.readFile(t.file('race.txt'), 'utf8');
      expect(sha256(content)).toBe(winnerVersion.sha256);
      expect([`A${round}\n`, `B${round}\n`]).toContain(content);
    }
  });

  it('two concurrent writes with the same If-Match: exactly one wins', async () => {
    let content = 'start\n';
    await fs.writeFile(t.file('etag.txt'), content);
    for (let round = 1; round <= 4; round++) {
      const etag = `"${sha256(content)}"`;
      const results = await Promise.all(['x', 'y', 'z'].map((who) => t.call('write_file', { path: 'etag.txt', content: `${who}${round}\n` }, { 'if-match': etag })));
      expect(results.filter((r) => r.body.status === 'success')).toHaveLength(1);
      expect(results.filter((r) => r.body.error?.code === 'CONFLICT')).toHaveLength(2);
      content = await fs.readFile(t.file('etag.txt'), 'utf8');
    }
  });

  it('50 concurrent append_to_file calls lose none', async () => {
    await fs.writeFile(t.file('log.txt'), '');
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => t.call('append_to_file', { path: 'log.txt', content: `entry ${i}\n` })));
    for (const r of results) {
      expectEnvelope(r.body, r.status);
      expect(r.body.status, JSON.stringify(r.body.error)).not.toBe('error');
    }
    const lines = (await fs.readFile(t.file('log.txt'), 'utf8')).split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(50);
    expect(new Set(lines)).toEqual(new Set(Array.from({ length: 50 }, (_, i) => `entry ${i}`)));
  });

  it('concurrent edit_file calls on one file all apply', async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `slot ${i}: empty`);
    await fs.writeFile(t.file('slots.txt'), `${lines.join('\n')}\n`);
    const results = await Promise.all(lines.map((_, i) => t.call('edit_file', { path: 'slots.txt', old_text: `slot ${i}: empty`, new_text: `slot ${i}: taken` })));
    for (const r of results) expect(r.body.status, JSON.stringify(r.body.error)).not.toBe('error');
    expect(await fs.readFile(t.file('slots.txt'), 'utf8')).toBe(`${lines.map((_, i) => `slot ${i}: taken`).join('\n')}\n`);
  });
});

describe('concurrency: readers racing writers', () => {
  // Regression: read_file compared the opened file's inode with the one the sandbox had checked and
  // answered CONFLICT when an atomic write had renamed a new file over the path in between.
  it('reads racing atomic writes never answer CONFLICT and see the old or the new content whole', async () => {
    const A = `${'a'.repeat(2000)}\n`;
    const B = `${'b'.repeat(3000)}\n`;
    await fs.writeFile(t.file('hot.txt'), A);
    let stop = false;
    let writes = 0;
    const writer = (async () => {
      while (!stop) {
        const current = await fs.readFile(t.file('hot.txt'), 'utf8');
        await t.call('write_file', { path: 'hot.txt', content: current === A ? B : A, expected_sha256: sha256(current), backup: false });
        writes++;
      }
    })();
    const failures: string[] = [];
    for (let i = 0; i < 300; i++) {
      const res = await t.call('read_file', { path: 'hot.txt' });
      if (res.body.status !== 'success') failures.push(String(res.body.error?.code));
      else expect([A, B]).toContain((res.body.data as { content: string }).content);
    }
    stop = true;
    await writer;
    expect(writes).toBeGreaterThan(0);
    expect(failures).toEqual([]);
  });

  // Regression: the wait for the in-process lock queue left its timeout timer running after the turn came,
  // one timer per write for the whole TOOLGATE_LOCK_TIMEOUT_MS, so a worker process could not exit on its own.
  it('a write leaves no lock-timeout timer running', async () => {
    const slow = await makeApp({ TOOLGATE_LOCK_TIMEOUT_MS: '600000', ...QUIET });
    try {
      await slow.call('write_file', { path: 'warm.txt', content: 'x' });
      const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const before = timers();
      for (let i = 0; i < 10; i++) await slow.call('write_file', { path: `t${i}.txt`, content: 'x' });
      // One timer per write before the fix; allow for an unrelated background timer or two.
      expect(timers() - before).toBeLessThan(3);
    } finally {
      await slow.close();
    }
  });
});

describe('concurrency: several apps on one root', () => {
  it('two app instances doing read-modify-write increments lose no update', async () => {
    const other = await buildApp(loadConfig({ TOOLGATE_ROOT: t.root, TOOLGATE_INSTANCE_ID: 'second-app', ...QUIET }), { logger: false });
    try {
      await fs.writeFile(t.file('counter.txt'), '0\n');
      const callOn = async (app: typeof other, tool: string, body: object) => (await app.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body })).json() as Envelope;
      const incrementer = async (app: typeof other, n: number) => {
        let done = 0;
        let conflicts = 0;
        while (done < n) {
          const read = await callOn(app, 'read_file', { path: 'counter.txt' });
          const { content, version } = read.data as { content: string; version: VersionStamp };
          const write = await callOn(app, 'write_file', { path: 'counter.txt', content: `${Number(content.trim()) + 1}\n`, expected_sha256: version.sha256, backup: false });
          if (write.status === 'success') done++;
          else {
            expect(write.error?.code).toBe('CONFLICT');
            conflicts++;
          }
        }
        return conflicts;
      };
      await Promise.all([incrementer(t.app, 25), incrementer(other, 25), incrementer(t.app, 25), incrementer(other, 25)]);
      expect(await fs.readFile(t.file('counter.txt'), 'utf8')).toBe('100\n');
    } finally {
      await other.close();
    }
  });

  it('writers in other processes (cross-process proper-lockfile) lose no update', async () => {
    await fs.writeFile(t.file('counter.txt'), '0\n');
    const PER_WORKER = 25;
    const worker = path.join(here, 'fixtures', 'rmw-worker.mjs'); // plain JavaScript on dist/ (the global set-up's build)
    const children = ['proc-a', 'proc-b'].map((id) => {
      const child = spawn(process.execPath, [worker, t.root, 'counter.txt', String(PER_WORKER), id], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const done = new Promise<{ successes: number; conflicts: number; errors: string[] }>((resolve, reject) => {
        child.on('exit', (code) => {
          const line = out.split('\n').find((l) => l.startsWith('@@RESULT '));
          if (code !== 0 || !line) reject(new Error(`worker ${id} exited ${code}: ${err.slice(-2000)}`));
          else resolve(JSON.parse(line.slice('@@RESULT '.length)));
        });
      });
      return { child, done };
    });
    // The workers wait on stdin so that their start-up time does not serialize them; this process joins in too.
    await new Promise((r) => setTimeout(r, 100));
    for (const { child } of children) child.stdin.end('go\n');
    let mine = 0;
    while (mine < PER_WORKER) {
      const read = await t.call('read_file', { path: 'counter.txt' });
      const { content, version } = read.body.data as { content: string; version: VersionStamp };
      const write = await t.call('write_file', { path: 'counter.txt', content: `${Number(content.trim()) + 1}\n`, expected_sha256: version.sha256, backup: false });
      if (write.body.status === 'success') mine++;
      else expect(write.body.error?.code).toBe('CONFLICT');
    }
    const results = await Promise.all(children.map((c) => c.done));
    for (const r of results) {
      expect(r.errors).toEqual([]);
      expect(r.successes).toBe(PER_WORKER);
    }
    expect(await fs.readFile(t.file('counter.txt'), 'utf8')).toBe(`${PER_WORKER * 3}\n`);
  }, 45_000);
});

describe('concurrency: LOCKED', () => {
  let locked: TestApp;
  beforeEach(async () => {
    locked = await makeApp({ TOOLGATE_LOCK_TIMEOUT_MS: '150', ...QUIET });
  });
  afterEach(async () => {
    await locked?.close();
  });

  it('a lock held by another process (proper-lockfile on the same lock path) gives 423 LOCKED, then the write goes through', async () => {
    await fs.writeFile(locked.file('held.txt'), 'before\n');
    const ws = workspaceOf(locked);
    const real = await fs.realpath(locked.file('held.txt'));
    const lockfilePath = lockPathFor(ws, real);
    await fs.mkdir(path.dirname(lockfilePath), { recursive: true });
    const release = await lockfile.lock(real, { lockfilePath, realpath: false });
    try {
      const res = await locked.call('write_file', { path: 'held.txt', content: 'after\n', expected_sha256: sha256('before\n') });
      expectEnvelope(res.body, res.status);
      expect(res.status).toBe(423);
      expect(res.body.error?.code).toBe('LOCKED');
      expect(res.body.error?.message).toContain('held.txt');
      expect(await fs.readFile(locked.file('held.txt'), 'utf8')).toBe('before\n');
    } finally {
      await release();
    }
    const res = await locked.call('write_file', { path: 'held.txt', content: 'after\n', expected_sha256: sha256('before\n') });
    expect(res.body.status).toBe('success');
    expect(await fs.readFile(locked.file('held.txt'), 'utf8')).toBe('after\n');
  });

  it('a lock left behind by a crashed writer (older than the 10 s stale time) is taken over: no LOCKED, and no lock left', async () => {
    await fs.writeFile(locked.file('crashed.txt'), 'before\n');
    const ws = workspaceOf(locked);
    const real = await fs.realpath(locked.file('crashed.txt'));
    const lockfilePath = lockPathFor(ws, real);
    // A directory, as proper-lockfile itself and toolgate's older versions make a lock.
    await fs.mkdir(lockfilePath, { recursive: true });
    const old = new Date(Date.now() - 60_000);
    await fs.utimes(lockfilePath, old, old);
    const res = await locked.call('write_file', { path: 'crashed.txt', content: 'after\n', expected_sha256: sha256('before\n') });
    expect(res.body.status).toBe('success');
    expect(await fs.readFile(locked.file('crashed.txt'), 'utf8')).toBe('after\n');
    // The answer does not wait for the lock's removal (src/workspace/locks.ts); it follows.
    await locksSettled(ws.runtime);
    await expect(fs.stat(lockfilePath)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a lock whose holder on this host was killed with -9 is taken over at once, not LOCKED (issue 12)', async () => {
    await fs.writeFile(locked.file('killed.txt'), 'before\n');
    const ws = workspaceOf(locked);
    const real = await fs.realpath(locked.file('killed.txt'));
    const holder = spawn(process.execPath, [path.join(here, 'fixtures', 'lock-holder.mjs'), ws.stateDir, real], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => holder.once('exit', (_code, signal) => resolve(signal)));
    let out = '';
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('@@LOCKED')) resolve();
      });
      holder.stderr.on('data', (d: Buffer) => (out += d.toString()));
      void exited.then(() => reject(new Error(`lock holder exited early: ${out}`)));
    });
    // While the holder lives its lock is respected.
    const whileHeld = await locked.call('write_file', { path: 'killed.txt', content: 'after\n', expected_sha256: sha256('before\n') });
    expect(whileHeld.body.error?.code).toBe('LOCKED');
    holder.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    // The lock file is still there (no exit handler ran) and younger than the stale time.
    await expect(fs.stat(lockPathFor(ws, real))).resolves.toBeTruthy();
    const res = await locked.call('write_file', { path: 'killed.txt', content: 'after\n', expected_sha256: sha256('before\n') });
    expect(res.body.status, JSON.stringify(res.body.error)).toBe('success');
    expect(await fs.readFile(locked.file('killed.txt'), 'utf8')).toBe('after\n');
    await locksSettled(ws.runtime);
    await expect(fs.stat(lockPathFor(ws, real))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a lock path stays in the state directory, never beside the file', async () => {
    const ws = workspaceOf(locked);
    const lockfilePath = lockPathFor(ws, path.join(ws.root, 'a', 'b.txt'));
    expect(lockfilePath.startsWith(ws.stateDir + path.sep)).toBe(true);
  });

  it('a writer queued in this process behind a long write gets LOCKED, and the queue recovers', async () => {
    await fs.writeFile(locked.file('queued.txt'), 'q0\n');
    const ws = workspaceOf(locked);
    const holder = await holdFileLock(ws, await fs.realpath(locked.file('queued.txt')), 'queued.txt');
    const res = await locked.call('write_file', { path: 'queued.txt', content: 'q1\n', expected_sha256: sha256('q0\n') });
    expect(res.status).toBe(423);
    expect(res.body.error?.code).toBe('LOCKED');
    await holder.release();
    const again = await locked.call('write_file', { path: 'queued.txt', content: 'q1\n', expected_sha256: sha256('q0\n') });
    expect(again.body.status).toBe('success');
  });

  it('append_to_file also answers LOCKED while the lock is held elsewhere', async () => {
    await fs.writeFile(locked.file('app.txt'), 'a\n');
    const ws = workspaceOf(locked);
    const real = await fs.realpath(locked.file('app.txt'));
    const lockfilePath = lockPathFor(ws, real);
    await fs.mkdir(path.dirname(lockfilePath), { recursive: true });
    const release = await lockfile.lock(real, { lockfilePath, realpath: false });
    try {
      const res = await locked.call('append_to_file', { path: 'app.txt', content: 'b\n' });
      expect(res.body.error?.code).toBe('LOCKED');
    } finally {
      await release();
    }
    expect(await fs.readFile(locked.file('app.txt'), 'utf8')).toBe('a\n');
  });
});
