// Crash safety of rewind (issue 35 point 6; docs/api.md, "Turns, checkpoints and rewind"): the built service is
// killed with SIGKILL at random moments of a rewind of many files, again and again; after each restart the
// project is wholly as before that rewind or wholly as after it, never a mix, and no journal is left.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Envelope } from '../../src/envelope.js';
import { makeTempDir } from '../helpers.js';
import { startServer, type ServerProcess } from '../ops/process.js';

const FILES = 120;
const ROUNDS = 8;
/** A guard against a machine too slow to finish the rounds, not a measure: five kills already prove the point. */
const BUDGET_MS = 60_000;

let base: string;
let root: string;

async function snapshot(): Promise<string> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of (await fs.readdir(path.join(root, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (r === '.toolgate') continue;
      if (e.isDirectory()) {
        out.push(`${r}/`);
        await walk(r);
      } else out.push(`${r}=${await fs.readFile(path.join(root, r), 'utf8')}`);
    }
  };
  await walk('');
  return out.join('\n');
}

const env = () => ({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' });

async function post(server: ServerProcess, tool: string, body: unknown): Promise<Envelope> {
  const res = await fetch(`${server.url}/v1/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await res.json()) as Envelope;
}

let before: string;
let after: string;

beforeAll(async () => {
  base = await makeTempDir('toolgate-rewind-crash-');
  root = path.join(base, 'ws');
  await fs.mkdir(root);
  for (let i = 0; i < FILES; i++) await fs.writeFile(path.join(root, `f${i}.txt`), `before ${i}\n`.repeat(50));
  before = await snapshot();
  // One agent turn that changes most files, creates some (in new directories), deletes and moves others.
  const app = await buildApp(loadConfig(env()));
  const call = async (tool: string, body: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body, headers: { 'toolgate-turn': 'big-turn' } });
    expect(res.statusCode, res.body).toBe(200);
  };
  for (let i = 0; i < FILES; i++) {
    const rel = `f${i}.txt`;
    const sha = (JSON.parse((await app.inject({ method: 'POST', url: '/v1/tools/file_info', payload: { path: rel } })).body) as Envelope).data as { version: { sha256: string } };
    if (i % 6 === 0) await call('delete_file', { path: rel });
    else if (i % 6 === 1) await call('move_file', { path: rel, destination: `moved/${rel}` });
    else await call('write_file', { path: rel, content: `after ${i}\n`.repeat(40), expected_sha256: sha.version.sha256 });
  }
  for (let i = 0; i < 20; i++) await call('write_file', { path: `new/d${i % 4}/n${i}.txt`, content: `new ${i}\n` });
  await app.close();
  after = await snapshot();
}, 120_000);

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

it('a rewind killed at random points leaves the project wholly before or after it, and the next start finishes or leaves it', async () => {
  const started = Date.now();
  let state = after;
  let kills = 0;
  let finishedByStart = 0;
  for (let round = 0; round < ROUNDS && (round < 5 || Date.now() - started < BUDGET_MS); round++) {
    const server = await startServer(env());
    // The newest checkpoint: the turn at first, then the rewind before, so each rewind flips the project.
    const newest = ((await post(server, 'list_checkpoints', { limit: 1 })).data as { checkpoints: { id: string }[] }).checkpoints[0]?.id;
    let settled = false;
    const pending = post(server, 'rewind', { checkpoint: newest })
      .catch(() => null)
      .finally(() => (settled = true));
    if (round % 2 === 0) {
      // Any moment from the request on: most land before the commit point, while the content is staged.
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 150)));
    } else {
      // After the commit point: the journal is there, the steps are being made.
      const journals = path.join(root, '.toolgate', 'rewinds');
      while (!settled && !(await fs.readdir(journals).catch(() => [] as string[])).some((n) => n.endsWith('.journal'))) await new Promise((r) => setTimeout(r, 1));
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 10)));
    }
    server.child.kill('SIGKILL');
    await server.exited;
    const answered = await pending;
    kills++;
    // The next start completes a committed rewind before it answers anything.
    const next = await startServer(env());
    const now = await snapshot();
    expect([before, after], `round ${round}: the project is a mix of before and after`).toContain(now);
    if (answered === null && now !== state) finishedByStart++;
    state = now;
    const left = await fs.readdir(path.join(root, '.toolgate', 'rewinds')).catch(() => [] as string[]);
    expect(left).toEqual([]);
    next.child.kill('SIGKILL');
    await next.exited;
  }
  expect(kills).toBeGreaterThanOrEqual(5);
  // Every other kill waits for the journal, so some land among the steps (a busy machine only widens that window).
  expect(finishedByStart).toBeGreaterThanOrEqual(1);
  // Reported, not asserted: where the kills land depends on the machine.
  console.log(`rewind crash: ${kills} kills, ${finishedByStart} rewinds finished by the next start`);
}, 180_000);
