// Two real toolgate processes on one workspace and one state directory (issue 14 point 4): a request made
// on one is decided on the other; a call held by `Prefer: wait` on one is released by a decision on the
// other; the repeat runs once whichever replica it reaches. Then the same over Redis. Also: a policy that
// does not load stops the process with the file, the line and the problem (point 1).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';
import { makeToken } from '../ops/ops-helpers.js';
import { run, startServer, type ServerProcess } from '../ops/process.js';
import { startRedis, type RedisServer } from '../ops/redis-server.js';

const agent = makeToken('agent', { risks: ['read', 'write'] });
const person = makeToken('person', { risks: ['read', 'approve'] });
const POLICY = 'rules:\n  - name: soul\n    paths: [SOUL.md]\n    risks: [write]\n    action: ask\n';

const servers: ServerProcess[] = [];
const dirs: string[] = [];
let redis: RedisServer | undefined;

afterAll(async () => {
  for (const s of servers) s.child.kill('SIGTERM');
  await Promise.all(servers.map((s) => s.exited));
  await redis?.kill();
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

async function post(server: ServerProcess, url: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(server.url + url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { status: string; data: { approval?: { id: string } } | null; error?: { code: string } } };
}

async function twoReplicas(extra: Record<string, string>) {
  const dir = await makeTempDir('toolgate-approval-replicas-');
  dirs.push(dir);
  const root = path.join(dir, 'ws');
  await fs.mkdir(root);
  await fs.writeFile(path.join(root, 'SOUL.md'), 'one\n');
  await fs.writeFile(path.join(dir, 'policy.yaml'), POLICY);
  await fs.writeFile(path.join(dir, 'tokens.json'), JSON.stringify([agent.entry, person.entry]));
  const env = {
    TOOLGATE_ROOT: root,
    TOOLGATE_STATE_DIR: path.join(dir, 'state'),
    TOOLGATE_POLICY: path.join(dir, 'policy.yaml'),
    TOOLGATE_TOKENS_FILE: path.join(dir, 'tokens.json'),
    TOOLGATE_AUDIT_STDOUT: 'false',
    TOOLGATE_RATE_LIMIT: '0',
    ...extra,
  };
  const pair = await Promise.all([startServer({ ...env, TOOLGATE_INSTANCE_ID: 'a' }), startServer({ ...env, TOOLGATE_INSTANCE_ID: 'b' })]);
  servers.push(...pair);
  return { a: pair[0], b: pair[1], file: path.join(root, 'SOUL.md') };
}

async function scenario(extra: Record<string, string>) {
  const { a, b, file } = await twoReplicas(extra);
  const edit = { path: 'SOUL.md', old_text: 'one', new_text: 'two' };

  // Asked on A, decided on B, repeated on B.
  const asked = await post(a, '/v1/tools/edit_file', edit, agent.header);
  expect(asked.status).toBe(202);
  const id = asked.body.data?.approval?.id as string;
  expect((await post(b, `/v1/approvals/${id}/approve`, {}, person.header)).status).toBe(200);
  expect((await post(b, `/v1/approvals/${id}/approve`, {}, person.header)).body.error?.code).toBe('CONFLICT');
  const ran = await post(b, '/v1/tools/edit_file', { ...edit, approval_id: id }, agent.header);
  expect(ran.status).toBe(200);
  expect(await fs.readFile(file, 'utf8')).toBe('two\n');
  expect((await post(a, '/v1/tools/edit_file', { ...edit, approval_id: id }, agent.header)).status).toBe(410);

  // Held on A by Prefer: wait, released by a decision on B.
  const back = { path: 'SOUL.md', old_text: 'two', new_text: 'three' };
  const held = post(a, '/v1/tools/edit_file', back, { ...agent.header, prefer: 'wait=60' });
  let pending: string | undefined;
  while (!pending) {
    const res = await fetch(`${b.url}/v1/approvals?status=pending`, { headers: person.header });
    pending = ((await res.json()) as { approvals: { id: string }[] }).approvals[0]?.id;
    if (!pending) await new Promise((r) => setTimeout(r, 50));
  }
  expect((await post(b, `/v1/approvals/${pending}/approve`, { reason: 'ok' }, person.header)).status).toBe(200);
  const released = await held;
  expect(released.status).toBe(200);
  expect(await fs.readFile(file, 'utf8')).toBe('three\n');
}

describe('approvals across two replicas', () => {
  it('files on the shared state directory (secret generated there once)', async () => {
    await scenario({});
  });

  it('Redis (TOOLGATE_REDIS_URL) with a configured secret', async () => {
    redis = await startRedis();
    await scenario({ TOOLGATE_REDIS_URL: redis.url, TOOLGATE_APPROVAL_SECRET: 'a-secret-of-enough-length' });
  });
});

describe('start-up with a bad policy', () => {
  it('a missing or malformed policy file stops the process, naming it', async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    const missing = await run('src/main.ts', ['--root', dir, '--port', '0', '--policy', '/does/not/exist.yaml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/\/does\/not\/exist\.yaml: cannot read the policy file/);
    await fs.writeFile(path.join(dir, 'p.yaml'), 'rules:\n  - paths: [a]\n    action: allow\n    colour: red\n');
    const bad = await run('src/main.ts', ['--root', dir, '--port', '0', '--policy', path.join(dir, 'p.yaml')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/p\.yaml:4:\d+: .*colour/);
  });
});
