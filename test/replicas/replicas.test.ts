// Replicas (docs/operations.md, Helm "three replicas sharing one volume and one rate-limit budget"): three real
// toolgate processes on ONE workspace directory and one real redis-server, with auth on and distinct
// instance ids. 32 concurrent clients do read-modify-write with versions (read_file, then write_file
// with expected_sha256 carrying one more line; on CONFLICT re-read and retry), reading from one
// instance and writing through another. Proven: no successful update is lost, losers got CONFLICT,
// the rate limit is one budget across the three, and each instance's audit chain verifies.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';
import { makeToken, type TestToken } from '../ops/ops-helpers.js';
import { cli, startServer, type ServerProcess } from '../ops/process.js';
import { startRedis, type RedisServer } from '../ops/redis-server.js';

const INSTANCES = ['replica-a', 'replica-b', 'replica-c'] as const;
const CLIENTS = 32;
/** Attempts (one read + one write each) a client may make before the test calls it starved. */
const MAX_ATTEMPTS = 100;
/** Per token and window: a client's whole load (2 calls an attempt) fits, with room to spare. */
const RATE_LIMIT = 2 * MAX_ATTEMPTS + 50;
const FILE = 'shared/journal.txt';
const HEADER = '# journal written by three replicas\n';

interface Envelope {
  status: string;
  data: { content?: string; version?: { sha256: string } } | null;
  error?: { code: string; message: string };
}

interface Answer {
  status: number;
  body: Envelope;
}

let dir = '';
let root = '';
let redis: RedisServer | undefined;
const servers: ServerProcess[] = [];
const clientTokens: TestToken[] = [];
const burst = makeToken('burst', { risks: ['read'] });
/** Tool calls sent to each instance (every one of them must leave one audit line there). */
const callsPer = new Map<number, number>(INSTANCES.map((_, i) => [i, 0]));

async function call(instance: number, tool: string, body: unknown, token: TestToken | null): Promise<Answer> {
  const server = servers[instance];
  if (!server) throw new Error(`no instance ${instance}`);
  // Calls without a token are refused at the door and audited too.
  callsPer.set(instance, (callsPer.get(instance) ?? 0) + 1);
  const res = await fetch(`${server.url}/v1/tools/${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && token.header) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Envelope };
}

beforeAll(async () => {
  redis = await startRedis(); // fails with an install hint when redis-server is missing
  dir = await makeTempDir('toolgate-replicas-');
  root = path.join(dir, 'ws');
  await fs.mkdir(path.join(root, 'shared'), { recursive: true });
  await fs.writeFile(path.join(root, FILE), HEADER);
  for (let i = 0; i < CLIENTS; i++) clientTokens.push(makeToken(`client-${i}`, { risks: ['read', 'write'] }));
  const tokensFile = path.join(dir, 'tokens.json');
  await fs.writeFile(tokensFile, JSON.stringify([...clientTokens, burst].map((t) => t.entry)));

  const started = await Promise.allSettled(
    INSTANCES.map((id) =>
      startServer({
        TOOLGATE_ROOT: root,
        TOOLGATE_INSTANCE_ID: id,
        TOOLGATE_TOKENS_FILE: tokensFile,
        TOOLGATE_REDIS_URL: redis!.url,
        TOOLGATE_RATE_LIMIT: String(RATE_LIMIT),
        TOOLGATE_RATE_LIMIT_WINDOW_MS: '120000',
        TOOLGATE_AUDIT_STDOUT: 'false',
      }),
    ),
  );
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
});

afterAll(async () => {
  for (const s of servers) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGKILL');
      await s.exited;
    }
  }
  await redis?.kill();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('three replicas on one workspace and one Redis', () => {
  it('each instance has auth on and the Redis store ready', async () => {
    for (const [i, s] of servers.entries()) {
      const health = (await (await fetch(`${s.url}/healthz`)).json()) as Record<string, unknown>;
      expect(health).toMatchObject({ status: 'ok', instance: INSTANCES[i], auth: 'tokens', rate_limit: { store: 'redis', redis: 'ready' } });
      expect((await call(i, 'read_file', { path: FILE }, null)).status).toBe(401);
    }
  });

  it(`${CLIENTS} concurrent read-modify-write clients across the three: no successful update is lost, losers get CONFLICT`, async () => {
    let conflicts = 0;
    let locked = 0;
    const writesVia = new Map<number, number>();
    const readsVia = new Map<number, number>();

    const client = async (c: number): Promise<{ line: string; attempts: number }> => {
      const token = clientTokens[c] as TestToken;
      const line = `client-${c}-${randomBytes(6).toString('hex')}`;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        // Read through one instance, write through the next: a version is valid on every replica.
        const r = (c + attempt) % INSTANCES.length;
        const w = (r + 1) % INSTANCES.length;
        const read = await call(r, 'read_file', { path: FILE }, token);
        expect(read.status, `client ${c} read via ${INSTANCES[r]}: ${JSON.stringify(read.body.error)}`).toBe(200);
        readsVia.set(r, (readsVia.get(r) ?? 0) + 1);
        const content = read.body.data?.content ?? '';
        const expected = read.body.data?.version?.sha256;
        const write = await call(w, 'write_file', { path: FILE, content: `${content}${line}\n`, expected_sha256: expected }, token);
        if (write.status === 200) {
          writesVia.set(w, (writesVia.get(w) ?? 0) + 1);
          return { line, attempts: attempt + 1 };
        }
        const code = write.body.error?.code;
        if (code === 'CONFLICT') conflicts++;
        else if (code === 'LOCKED') locked++;
        else throw new Error(`client ${c} write via ${INSTANCES[w]}: HTTP ${write.status} ${JSON.stringify(write.body.error)}`);
        await sleep(Math.random() * 15);
      }
      throw new Error(`client ${c} did not get its update in after ${MAX_ATTEMPTS} attempts`);
    };

    const t0 = performance.now();
    const results = await Promise.allSettled(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    const elapsed = performance.now() - t0;
    const failures = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    expect(failures, failures.join('\n')).toEqual([]);
    const done = results.map((r) => (r as PromiseFulfilledResult<{ line: string; attempts: number }>).value);
    const attempts = done.reduce((a, d) => a + d.attempts, 0);
    console.log(
      `[replicas] ${CLIENTS} clients, ${attempts} attempts, ${conflicts} CONFLICT, ${locked} LOCKED, max ${Math.max(...done.map((d) => d.attempts))} attempts for one client, ${elapsed.toFixed(0)} ms`,
    );

    // Every successful update is in the file, once; nothing else is.
    const final = await fs.readFile(path.join(root, FILE), 'utf8');
    expect(final.startsWith(HEADER)).toBe(true);
    const lines = final.slice(HEADER.length).split('\n').slice(0, -1);
    expect(lines.length).toBe(CLIENTS);
    expect(new Set(lines)).toEqual(new Set(done.map((d) => d.line)));
    // Every replica sees the same final content.
    for (const i of INSTANCES.keys()) expect((await call(i, 'read_file', { path: FILE }, clientTokens[0] ?? null)).body.data?.content).toBe(final);

    // The losers were told: CONFLICT, as many as the extra attempts that were not LOCKED.
    expect(conflicts).toBeGreaterThan(0);
    expect(conflicts + locked).toBe(attempts - CLIENTS);
    // The load was really spread: every instance served reads and successful writes.
    for (const i of INSTANCES.keys()) {
      expect(readsVia.get(i) ?? 0, `reads via ${INSTANCES[i]}`).toBeGreaterThan(0);
      expect(writesVia.get(i) ?? 0, `writes via ${INSTANCES[i]}`).toBeGreaterThan(0);
    }
    // The three instances' metrics add up to the conflicts the clients saw.
    let metricConflicts = 0;
    for (const s of servers) {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      metricConflicts += Number(/^toolgate_conflicts_total\{tool="write_file"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    }
    expect(metricConflicts).toBe(conflicts);
  });

  it(`the rate limit is one budget across the three: ${RATE_LIMIT} calls spread over them pass, the next is RATE_LIMITED on every instance`, async () => {
    // A token of its own (fresh budget). In batches, round robin over the instances: each instance sees
    // only a third of the budget, so separate in-memory budgets would never refuse.
    const statuses: number[] = [];
    for (let start = 0; start < RATE_LIMIT; start += 10) {
      const batch = Array.from({ length: Math.min(10, RATE_LIMIT - start) }, (_, k) => call((start + k) % INSTANCES.length, 'file_info', { path: FILE }, burst));
      for (const r of await Promise.all(batch)) statuses.push(r.status);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(statuses.length).toBe(RATE_LIMIT);
    for (const i of INSTANCES.keys()) {
      const refused = await call(i, 'file_info', { path: FILE }, burst);
      expect(refused.status, `instance ${INSTANCES[i]}`).toBe(429);
      expect(refused.body.error?.code).toBe('RATE_LIMITED');
      expect(refused.body.error?.message).toContain(`Rate limit of ${RATE_LIMIT} tool calls`);
    }
    // Another token still has its own budget.
    expect((await call(1, 'file_info', { path: FILE }, clientTokens[1] ?? null)).status).toBe(200);
  });

  it('SIGTERM stops each instance with exit 0, and each instance audit chain verifies (toolgate audit verify)', async () => {
    const exits = await Promise.all(
      servers.map(async (s) => {
        s.child.kill('SIGTERM');
        return s.exited;
      }),
    );
    expect(exits).toEqual(INSTANCES.map(() => ({ code: 0, signal: null })));

    const auditDir = path.join(root, '.toolgate', 'audit');
    const files = await fs.readdir(auditDir);
    for (const [i, id] of INSTANCES.entries()) {
      const mine = files.filter((f) => f.startsWith(`${id}-`) && f.endsWith('.jsonl'));
      expect(mine.length, `audit files of ${id} in ${files.join(', ')}`).toBeGreaterThan(0);
      let lines = 0;
      for (const f of mine) {
        const file = path.join(auditDir, f);
        const verdict = await cli(['audit', 'verify', file]);
        expect(verdict.code, `${verdict.stdout}${verdict.stderr}`).toBe(0);
        const m = /^OK: .*: (\d+) line\(s\), hash chain intact\.$/m.exec(verdict.stdout);
        expect(m, verdict.stdout).not.toBeNull();
        lines += Number(m?.[1]);
      }
      // One line per tool call this instance answered (the unauthenticated, refused and rate-limited ones included).
      expect(lines, `audit lines of ${id}`).toBe(callsPer.get(i));
    }
  });
});
