// The policy and the approval flow over the real HTTP app (docs/approvals.md, "The approval flow"): denials on
// the real path, walks that leave denied entries out, the 202 request with its dry-run diff, deciding, the
// repeat that runs once, every refusal of the repeat, Prefer: wait, the caller's tool listing, audit, metrics.
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { makeTempDir } from '../helpers.js';
import { agent, approvalOf, ide, makePolicyApp, person, reader, type PolicyApp } from './approval-helpers.js';

const POLICY = `
switches:
  memory: { default: off }
rules:
  - name: memory-off
    paths: [USER.md, memory]
    when: { memory: off }
    action: deny
  - name: secrets
    description: keys stay out of reach
    paths: [secrets]
    action: deny
  - name: soul
    paths: [SOUL.md]
    risks: [write, destructive]
    action: ask
  - name: scripts
    paths: ['**']
    executable: true
    risks: [write, destructive]
    action: ask
`;

let t: PolicyApp;
afterEach(async () => t?.close());

async function arrange() {
  t = await makePolicyApp(POLICY);
  await fs.writeFile(t.file('SOUL.md'), 'I am kind.\n');
  await fs.writeFile(t.file('USER.md'), 'Name: Ann\n');
  await fs.mkdir(t.file('secrets'));
  await fs.writeFile(t.file('secrets/key.pem'), 'KEY\n');
  await fs.writeFile(t.file('notes.md'), 'notes mention kind words\n');
}

const edit = { path: 'SOUL.md', old_text: 'kind', new_text: 'very kind' };

describe('start-up', () => {
  it('a policy file that does not load stops buildApp with file, line and problem', async () => {
    const dir = await makeTempDir();
    const file = `${dir}/bad.yaml`;
    await fs.writeFile(file, 'rules:\n  - paths: [a]\n    action: maybe\n');
    await expect(buildApp(loadConfig({ TOOLGATE_ROOT: dir, TOOLGATE_POLICY: file, TOOLGATE_AUDIT_STDOUT: 'false' }))).rejects.toThrow(new RegExp(`${file}:3:\\d+: .*action`));
    await expect(buildApp(loadConfig({ TOOLGATE_ROOT: dir, TOOLGATE_POLICY: `${dir}/missing.yaml`, TOOLGATE_AUDIT_STDOUT: 'false' }))).rejects.toThrow(/missing\.yaml: cannot read the policy file \(ENOENT\)/);
    await fs.rm(dir, { recursive: true, force: true });
  });
});

describe('rules on the real path', () => {
  it('a switch rule denies, names the switch, and the header turns it on', async () => {
    await arrange();
    const off = await t.as(agent, 'read_file', { path: 'USER.md' });
    expect(off.status).toBe(403);
    expect(off.body.error).toMatchObject({ code: 'ACCESS_DENIED', message: 'USER.md is available only while the memory switch is on.', details: { switch: 'memory' } });
    const on = await t.as(agent, 'read_file', { path: 'USER.md' }, { 'x-toolgate-switches': 'memory=on' });
    expect(on.status).toBe(200);
    const bad = await t.as(agent, 'read_file', { path: 'notes.md' }, { 'x-toolgate-switches': 'nosuch=on' });
    expect(bad.body.error?.code).toBe('INVALID_PARAM');
  });

  it('a symlink or a/../ cannot dodge a rule', async () => {
    await arrange();
    await fs.symlink('USER.md', t.file('alias.md'));
    await fs.symlink('secrets', t.file('keys'));
    await fs.mkdir(t.file('a'));
    for (const p of ['alias.md', 'a/../USER.md', './USER.md', 'keys/key.pem', 'a/../secrets/key.pem']) {
      const r = await t.as(agent, 'read_file', { path: p });
      expect(r.body.error?.code, p).toBe('ACCESS_DENIED');
    }
    const info = await t.as(agent, 'file_info', { path: 'keys' });
    expect(info.body.error?.code).toBe('ACCESS_DENIED');
    // A write through the link asks like a write to SOUL.md.
    await fs.symlink('SOUL.md', t.file('persona.md'));
    const w = await t.as(agent, 'edit_file', { path: 'persona.md', old_text: 'kind', new_text: 'cruel' });
    expect(w.status).toBe(202);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\n');
  });

  it('walking tools leave denied entries out', async () => {
    await arrange();
    const list = await t.as(agent, 'list_directory', { path: '.', depth: 3 });
    const names = (list.body.data as { entries: { path: string }[] }).entries.map((e) => e.path);
    expect(names).toContain('SOUL.md');
    expect(names).not.toContain('USER.md');
    expect(names.some((n) => n.startsWith('secrets'))).toBe(false);
    const search = await t.as(agent, 'search_files', { path: '.', query: 'KEY|Ann', regex: true });
    expect(JSON.stringify(search.body.data)).not.toMatch(/key\.pem|USER\.md/);
    const large = await t.as(agent, 'find_large_files', { path: '.', min_size_bytes: 1 });
    expect(JSON.stringify(large.body.data)).not.toMatch(/key\.pem|USER\.md/);
    const withMemory = await t.as(agent, 'list_directory', { path: '.' }, { 'x-toolgate-switches': 'memory=on' });
    expect(JSON.stringify(withMemory.body.data)).toMatch(/USER\.md/);
  });

  it('moving a directory that holds a protected file asks (the rule covers the tree)', async () => {
    await arrange();
    await fs.mkdir(t.file('persona'));
    await fs.writeFile(t.file('persona/run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    const r = await t.as(agent, 'move_file', { path: 'persona', destination: 'elsewhere' });
    expect(r.status).toBe(202);
    expect(await fs.stat(t.file('persona'))).toBeTruthy();
    const plain = await t.as(agent, 'append_to_file', { path: 'persona/run.sh', content: 'echo hi\n' });
    expect(plain.status).toBe(202);
  });
});

describe('the approval flow', () => {
  it('asks (202, dry-run diff, nothing changed), is approved, runs once', async () => {
    await arrange();
    const first = await t.as(agent, 'edit_file', edit);
    expect(first.status).toBe(202);
    expect(first.body.status).toBe('partial');
    expect(first.body.error).toBeUndefined();
    expect(first.body.data).toMatchObject({ applied: false, approval: { status: 'pending', tool: 'edit_file', path: 'SOUL.md', risk: 'write', risk_level: 'high', diff_truncated: false } });
    const a = approvalOf(first.body);
    expect(a.id).toMatch(/^apr_[A-Za-z0-9_-]{22}$/);
    expect(a.diff_preview).toContain('-I am kind.');
    expect(a.diff_preview).toContain('+I am very kind.');
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\n');

    const pending = await t.get(person, '/v1/approvals?status=pending');
    expect(pending.status).toBe(200);
    expect((pending.json.approvals as { id: string; caller: string }[]).map((x) => [x.id, x.caller])).toEqual([[a.id, 'agent']]);
    expect((await t.get(person, `/v1/approvals/${a.id}`)).json.approval).toMatchObject({ id: a.id, status: 'pending' });

    // Still pending: the repeat answers 202 again and changes nothing.
    expect((await t.as(agent, 'edit_file', { ...edit, approval_id: a.id })).status).toBe(202);

    const ok = await t.decide(person, a.id, 'approve', 'fine');
    expect(ok.status).toBe(200);
    expect(ok.json.approval).toMatchObject({ status: 'approved', decided_by: 'person', reason: 'fine' });
    expect((await t.decide(person, a.id, 'reject')).json).toMatchObject({ error: { code: 'CONFLICT' } });

    const run = await t.as(agent, 'edit_file', { ...edit, approval_id: a.id });
    expect(run.status).toBe(200);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am very kind.\n');
    const again = await t.as(agent, 'edit_file', { ...edit, approval_id: a.id });
    expect(again.status).toBe(410);
    expect(again.body.error?.code).toBe('APPROVAL_EXPIRED');
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am very kind.\n');

    await vi.waitFor(() => expect(t.audit().some((l) => l.event === 'approval_refused')).toBe(true));
    const events = t.audit().filter((l) => typeof l.event === 'string' && String(l.event).startsWith('approval_')).map((l) => l.event);
    expect(events).toEqual(['approval_requested', 'approval_approved', 'approval_used', 'approval_refused']);
    const decided = t.audit().find((l) => l.event === 'approval_approved');
    expect(decided).toMatchObject({ decided_by: 'person', reason: 'fine', approval_id: a.id });
    expect(decided?.decided_at).toBeTypeOf('string');
  });

  it('a rejection reaches the caller as USER_REJECTED with the reason', async () => {
    await arrange();
    const a = approvalOf((await t.as(agent, 'edit_file', edit)).body);
    expect((await t.decide(person, a.id, 'reject', 'keep the persona')).status).toBe(200);
    const r = await t.as(agent, 'edit_file', { ...edit, approval_id: a.id });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'USER_REJECTED' });
    expect(r.body.error?.message).toMatch(/^The user rejected this change\. Reason: keep the persona/);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\n');
  });

  it('other arguments, another caller or a changed file are refused', async () => {
    await arrange();
    const a = approvalOf((await t.as(agent, 'edit_file', edit)).body);
    await t.decide(person, a.id, 'approve');
    const other = await t.as(agent, 'edit_file', { ...edit, new_text: 'cruel', approval_id: a.id });
    expect(other.status).toBe(400);
    expect(other.body.error?.code).toBe('INVALID_PARAM');
    const stranger = await t.as(ide, 'edit_file', { ...edit, approval_id: a.id });
    expect(stranger.body.error?.code).toBe('INVALID_PARAM');
    await fs.writeFile(t.file('SOUL.md'), 'I am kind and new.\n');
    const moved = await t.as(agent, 'edit_file', { ...edit, approval_id: a.id });
    expect(moved.status).toBe(409);
    expect(moved.body.error?.code).toBe('CONFLICT');
    expect((moved.body.error?.details as { current: { sha256: string } }).current.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind and new.\n');
  });

  it('an expired request is swept, audited, and answers APPROVAL_EXPIRED', async () => {
    await arrange();
    const a = approvalOf((await t.as(agent, 'edit_file', edit)).body);
    const swept = await t.app.toolgate.policy.sweep(Date.now() + 24 * 3600 * 1000);
    expect(swept.map((r) => r.id)).toEqual([a.id]);
    await vi.waitFor(() => expect(t.audit().some((l) => l.event === 'approval_expired' && l.approval_id === a.id)).toBe(true));
    const r = await t.as(agent, 'edit_file', { ...edit, approval_id: a.id });
    expect(r.status).toBe(410);
    expect((await t.decide(person, a.id, 'approve')).json).toMatchObject({ error: { code: 'APPROVAL_EXPIRED' } });
  });

  it('who decides: approve risk, no self-approval unless marked, dry runs never ask', async () => {
    await arrange();
    const a = approvalOf((await t.as(agent, 'edit_file', edit)).body);
    expect((await t.decide(agent, a.id, 'approve')).json).toMatchObject({ error: { code: 'ACCESS_DENIED' } });
    expect((await t.decide(reader, a.id, 'approve')).status).toBe(403);
    // A token that is not a decider sees only its own requests.
    expect((await t.get(reader, '/v1/approvals')).json.approvals).toEqual([]);
    expect((await t.get(reader, `/v1/approvals/${a.id}`)).status).toBe(404);
    expect((await t.get(agent, `/v1/approvals/${a.id}`)).status).toBe(200);

    const mine = approvalOf((await t.as(ide, 'edit_file', edit)).body);
    expect((await t.decide(ide, mine.id, 'approve')).status).toBe(200);
    const dry = await t.as(agent, 'edit_file', { ...edit, dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body.status).toBe('partial');
  });

  it('Prefer: wait holds the first call until the decision, then runs it', async () => {
    await arrange();
    const call = t.as(agent, 'edit_file', edit, { prefer: 'wait=30' });
    let id: string | undefined;
    while (!id) {
      const list = (await t.get(person, '/v1/approvals?status=pending')).json.approvals as { id: string }[];
      id = list[0]?.id;
      if (!id) await new Promise((r) => setTimeout(r, 20));
    }
    expect((await t.decide(person, id, 'approve')).status).toBe(200);
    const r = await call;
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am very kind.\n');
  });

  it('metrics count outcomes and show the pending ones', async () => {
    await arrange();
    await t.as(agent, 'edit_file', edit);
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/toolgate_approvals_total\{outcome="requested"\} 1/);
    expect(text).toMatch(/toolgate_approvals_pending 1/);
  });
});

describe('GET /v1/tools for the caller', () => {
  it("leaves out tools the token's risks do not allow, and says where a tool asks", async () => {
    await arrange();
    const res = await t.app.inject({ method: 'GET', url: '/v1/tools', headers: reader.header });
    const tools = (res.json() as { tools: { name: string; description: string }[] }).tools;
    expect(tools.map((x) => x.name)).not.toContain('delete_file');
    expect(tools.find((x) => x.name === 'edit_file')?.description).toMatch(/Asks for approval on: SOUL\.md/);
    const openai = (await t.app.inject({ method: 'GET', url: '/v1/tools?format=openai', headers: reader.header })).json() as { function: { name: string } }[];
    expect(openai.map((x) => x.function.name)).not.toContain('delete_file');
    const all = (await t.app.inject({ method: 'GET', url: '/v1/tools?format=mcp', headers: agent.header })).json() as { tools: { name: string }[] };
    expect(all.tools.map((x) => x.name)).toContain('delete_file');
  });

  it('leaves out a tool the policy denies outright', async () => {
    t = await makePolicyApp('rules:\n  - tools: [delete_file]\n    action: deny\n');
    const tools = ((await t.app.inject({ method: 'GET', url: '/v1/tools', headers: agent.header })).json() as { tools: { name: string }[] }).tools;
    expect(tools.map((x) => x.name)).not.toContain('delete_file');
    expect(tools.map((x) => x.name)).toContain('write_file');
  });
});

describe('shutdown', () => {
  it('a call held by Prefer: wait answers 202 when the app closes, instead of holding up the close', async () => {
    await arrange();
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const held = fetch(`${base}/v1/tools/edit_file`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'wait=300', ...agent.header }, body: JSON.stringify(edit) });
    while (((await t.get(person, '/v1/approvals?status=pending')).json.approvals as unknown[]).length === 0) await new Promise((r) => setTimeout(r, 20));
    // As serve() does on SIGTERM: answers then close their keep-alive connection, so close() need not wait for it.
    t.app.toolgate.shuttingDown = true;
    const closed = t.app.close();
    const res = await held;
    expect(res.status).toBe(202);
    await closed;
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\n');
  });
});
