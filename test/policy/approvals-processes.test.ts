// Replicas as separate processes on one state directory (and on one Redis): a request is decided once, used
// once, and a waiter in one process is released by a decision taken in another. Bounds are generous
// timeouts only; the assertions are about outcomes and order.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argsHash, openApprovalStore, type ApprovalStore } from '../../src/policy/approvals.js';
import { makeTempDir } from '../helpers.js';
import { startRedis, type RedisServer } from '../ops/redis-server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
// Plain JavaScript on dist/ (built by vitest's global set-up): a worker starts without a TypeScript loader.
const WORKER = path.join(here, 'fixtures', 'approval-worker.mjs');
const VERSION = { mtime_ms: 1, size_bytes: 3, sha256: 'c'.repeat(64) };
const ARGS_HASH = argsHash({ path: 'SOUL.md', content: 'x' });
const BINDING = { caller: 'agent', project: 'p', tool: 'write_file', args_hash: ARGS_HASH };

interface Worker {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the first stdout line starting with the marker (its rest). */
  line(marker: string): Promise<string>;
  go(): void;
}

function startWorker(job: object): Worker {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(job)], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { marker: string; resolve: (s: string) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const line = out.split('\n').find((l) => l.startsWith(w.marker));
      if (line !== undefined) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line.slice(w.marker.length).trim());
      }
    }
  };
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    check();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return {
    child,
    line: (marker) =>
      new Promise((resolve, reject) => {
        waiters.push({ marker, resolve });
        check();
        child.once('exit', (code) => setTimeout(() => reject(new Error(`worker exited (${code}) before ${marker}: ${err}`)), 100));
      }),
    go: () => child.stdin.write('go\n'),
  };
}

async function runTogether(jobs: object[]): Promise<unknown[]> {
  const workers = jobs.map(startWorker);
  await Promise.all(workers.map((w) => w.line('@@READY')));
  for (const w of workers) w.go();
  return Promise.all(workers.map(async (w) => JSON.parse(await w.line('@@RESULT')) as unknown));
}

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.kill();
});

describe.each(['files', 'redis'] as const)('replicas as processes (%s)', (kind) => {
  let base: string;
  let stateDir: string;
  let store: ApprovalStore;
  const extra: Record<string, string> = {};

  beforeAll(async () => {
    base = await makeTempDir();
    stateDir = path.join(base, 'state');
    if (kind === 'redis') {
      extra.redisUrl = redis.url;
      extra.redisPrefix = `p${randomBytes(4).toString('hex')}:{approvals}:`;
    }
    store = await openApprovalStore({ stateDir, ...extra });
  });
  afterAll(async () => {
    await store.close();
    await fs.rm(base, { recursive: true, force: true });
  });

  const newRequest = () =>
    store.create({
      caller: 'agent',
      project: 'p',
      tool: 'write_file',
      path: 'SOUL.md',
      risk: 'write',
      risk_level: 'high',
      args_hash: ARGS_HASH,
      file_version: VERSION,
      summary: 'Overwrite SOUL.md',
      diff_preview: '',
      diff_truncated: false,
      ttlMs: 600_000,
    });

  it('four processes decide one request at once: one wins, the others get CONFLICT', async () => {
    const r = await newRequest();
    const results = await runTogether(
      ['approved', 'rejected', 'approved', 'rejected'].map((decision) => ({ stateDir, ...extra, op: 'decide', id: r.id, decision, by: 'person' })),
    );
    const won = results.filter((x) => (x as { ok: boolean }).ok);
    expect(won).toHaveLength(1);
    expect(results.filter((x) => (x as { code?: string }).code === 'CONFLICT')).toHaveLength(3);
    expect((await store.get(r.id))?.status).toBe((won[0] as { status: string }).status);
  });

  it('four processes use one approval at once: it runs exactly once', async () => {
    const r = await newRequest();
    await store.decide(r.id, { decision: 'approved', by: 'person' });
    const results = (await runTogether(Array.from({ length: 4 }, () => ({ stateDir, ...extra, op: 'consume', id: r.id, binding: BINDING, version: VERSION })))) as {
      kind: string;
      code?: string;
    }[];
    expect(results.filter((x) => x.kind === 'run')).toHaveLength(1);
    expect(results.filter((x) => x.kind === 'refused' && x.code === 'APPROVAL_EXPIRED')).toHaveLength(3);
    expect(await store.consume(r.id, BINDING, VERSION)).toMatchObject({ kind: 'refused', error: { code: 'APPROVAL_EXPIRED' } });
    expect((await store.get(r.id))?.status).toBe('used');
  });

  it('a process waiting for a decision is released by a decision taken in this one', async () => {
    const r = await newRequest();
    const w = startWorker({ stateDir, ...extra, op: 'wait', id: r.id, timeoutMs: 60_000 });
    await w.line('@@READY');
    w.go();
    expect(await w.line('@@WAITING')).toBe('pending');
    await store.decide(r.id, { decision: 'approved', by: 'person' });
    expect(JSON.parse(await w.line('@@RESULT'))).toEqual({ status: 'approved' });
  });

  it('a waiter here is released by a decision taken in another process', async () => {
    const r = await newRequest();
    let released = false;
    const waiting = store.waitForDecision(r.id, 60_000).finally(() => (released = true));
    const decider = startWorker({ stateDir, ...extra, op: 'decide', id: r.id, decision: 'rejected', by: 'person' });
    await decider.line('@@READY');
    expect(released).toBe(false); // still waiting: nothing but the decision can end it before the 60 s bound
    decider.go();
    expect(JSON.parse(await decider.line('@@RESULT'))).toEqual({ ok: true, status: 'rejected' });
    expect((await waiting)?.status).toBe('rejected');
  });
});

describe('the generated secret', () => {
  it('six processes starting together on a fresh state directory agree on one key', async () => {
    const dir = path.join(await makeTempDir(), 'state');
    const code = `import('./dist/policy/approvals.js').then(async (m) => { const k = await m.loadApprovalSecret(${JSON.stringify(dir)}); process.stdout.write(k.toString('hex')); })`;
    const runs = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<string>((resolve, reject) => {
            const c = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: repoRoot });
            let out = '';
            c.stdout.on('data', (d: Buffer) => (out += d.toString()));
            c.on('exit', (status) => (status === 0 ? resolve(out) : reject(new Error(`exit ${status}`))));
          }),
      ),
    );
    expect(new Set(runs).size).toBe(1);
    expect(runs[0]).toMatch(/^[0-9a-f]{64}$/);
    expect((await fs.readFile(path.join(dir, 'approval-secret'), 'utf8')).trim()).toBe(runs[0]);
    await fs.rm(path.dirname(dir), { recursive: true, force: true });
  });
});
