// The example policies in examples/policies/, each loaded as an operator would (TOOLGATE_POLICY) and played
// through the seed's scenario over HTTP (issue 14 point 6).
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { agent, approvalOf, ide, makePolicyApp, person, reader, type PolicyApp } from './approval-helpers.js';

let t: PolicyApp;
afterEach(async () => t?.close());

async function pendingId(): Promise<string> {
  for (;;) {
    const list = (await t.get(person, '/v1/approvals?status=pending')).json.approvals as { id: string }[];
    if (list[0]) return list[0].id;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the assistant (assistant.yaml)', () => {
  it('memory off hides USER.md and MEMORY.md; SOUL.md edits wait for the person; a rejection reaches the model', async () => {
    t = await makePolicyApp('assistant.yaml');
    await fs.writeFile(t.file('SOUL.md'), 'You are a calm assistant.\n');
    await fs.writeFile(t.file('USER.md'), 'The user is Ann.\n');
    await fs.writeFile(t.file('MEMORY.md'), 'Ann likes tea.\n');
    await fs.writeFile(t.file('journal.md'), 'Day one.\n');

    // The model's view with memory off: the tools say where they may not go, and no call reaches the files.
    const tools = (await t.app.inject({ method: 'GET', url: '/v1/tools?format=openai', headers: agent.header })).json() as { function: { name: string; description: string } }[];
    expect(tools.find((x) => x.function.name === 'read_file')?.function.description).toMatch(/Not allowed on: USER\.md, MEMORY\.md, memory/);
    expect(tools.find((x) => x.function.name === 'edit_file')?.function.description).toMatch(/Asks for approval on: SOUL\.md/);
    for (const [tool, body] of [
      ['read_file', { path: 'USER.md' }],
      ['read_file', { path: 'MEMORY.md' }],
      ['write_file', { path: 'MEMORY.md', content: 'x' }],
      ['file_info', { path: 'USER.md' }],
    ] as const) {
      const r = await t.as(agent, tool, body);
      expect(r.status, `${tool} ${body.path}`).toBe(403);
      expect(r.body.error?.message).toMatch(/is available only while the memory switch is on\.$/);
    }
    const listing = JSON.stringify((await t.as(agent, 'list_directory', { path: '.' })).body.data);
    expect(listing).not.toMatch(/USER\.md|MEMORY\.md/);
    expect(JSON.stringify((await t.as(agent, 'search_files', { path: '.', query: 'Ann' })).body.data)).not.toMatch(/USER|MEMORY/);
    // With memory on, the model may use them (no approval: only SOUL.md asks).
    const on = await t.as(agent, 'append_to_file', { path: 'MEMORY.md', content: 'Ann has a cat.\n' }, { 'x-toolgate-switches': 'memory=on' });
    expect(on.status).toBe(200);
    // Other files are free.
    expect((await t.as(agent, 'append_to_file', { path: 'journal.md', content: 'Day two.\n' })).status).toBe(200);

    // SOUL.md: the call waits for the person (Prefer: wait), who approves; it then runs at once.
    const edit = { path: 'SOUL.md', old_text: 'calm', new_text: 'cheerful' };
    const waiting = t.as(agent, 'edit_file', edit, { prefer: 'wait=30' });
    const id = await pendingId();
    const seen = (await t.get(person, `/v1/approvals/${id}`)).json.approval as { diff_preview: string };
    expect(seen.diff_preview).toContain('+You are a cheerful assistant.');
    await t.decide(person, id, 'approve');
    expect((await waiting).status).toBe(200);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('You are a cheerful assistant.\n');

    // A second change is rejected: the model reads "The user rejected this change." and the file stays.
    const again = { path: 'SOUL.md', old_text: 'cheerful', new_text: 'sarcastic' };
    const asked = approvalOf((await t.as(agent, 'edit_file', again)).body);
    await t.decide(person, asked.id, 'reject', 'stay kind');
    const r = await t.as(agent, 'edit_file', { ...again, approval_id: asked.id });
    expect(r.status).toBe(403);
    expect(r.body.error?.code).toBe('USER_REJECTED');
    expect(r.body.text).toMatch(/^The user rejected this change\./);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('You are a cheerful assistant.\n');
  });
});

describe('the IDE (ide.yaml)', () => {
  it('every write asks, executables too; the IDE token confirms its own request', async () => {
    t = await makePolicyApp('ide.yaml');
    await fs.writeFile(t.file('build.sh'), '#!/bin/sh\nmake\n', { mode: 0o755 });
    await fs.writeFile(t.file('main.py'), 'print("hi")\n');

    // Reads are free.
    expect((await t.as(ide, 'read_file', { path: 'main.py' })).status).toBe(200);

    // A new file asks; the IDE shows its dialog and approves with its own token (self_approve).
    const create = { path: 'src/app.py', content: 'print("app")\n' };
    const asked = await t.as(ide, 'write_file', create);
    expect(asked.status).toBe(202);
    expect(approvalOf(asked.body).diff_preview).toContain('+print("app")');
    await expect(fs.stat(t.file('src/app.py'))).rejects.toThrow();
    expect((await t.decide(ide, approvalOf(asked.body).id, 'approve')).status).toBe(200);
    expect((await t.as(ide, 'write_file', { ...create, approval_id: approvalOf(asked.body).id })).status).toBe(200);
    expect(await fs.readFile(t.file('src/app.py'), 'utf8')).toBe('print("app")\n');

    // An executable asks under its own rule.
    const exe = await t.as(ide, 'append_to_file', { path: 'build.sh', content: 'make test\n' });
    expect(exe.status).toBe(202);
    const record = (await t.get(ide, `/v1/approvals/${approvalOf(exe.body).id}`)).json.approval as { rule: { name: string } };
    expect(record.rule.name).toBe('executables');

    // A token not marked self_approve cannot confirm its own request.
    const other = await t.as(agent, 'edit_file', { path: 'main.py', old_text: 'hi', new_text: 'hello' });
    expect((await t.decide(agent, approvalOf(other.body).id, 'approve')).status).toBe(403);
  });
});

describe('system tools (system-tools.yaml)', () => {
  it('reads are free; writes and deletes ask; .git is off limits; a token without destructive is not offered delete', async () => {
    t = await makePolicyApp('system-tools.yaml');
    await fs.mkdir(t.file('.git'));
    await fs.writeFile(t.file('.git/config'), '[core]\n');
    await fs.writeFile(t.file('old.log'), 'log\n');

    expect((await t.as(agent, 'disk_usage', { path: '.' })).status).toBe(200);
    const git = await t.as(agent, 'write_file', { path: '.git/hooks/pre-commit', content: 'evil' });
    expect(git.status).toBe(403);
    expect(git.body.error?.message).toMatch(/Policy rule 'vcs' \(version control internals\) denies write_file/);

    const del = await t.as(agent, 'delete_file', { path: 'old.log' });
    expect(del.status).toBe(202);
    expect(approvalOf(del.body)).toMatchObject({ tool: 'delete_file', path: 'old.log' });
    await fs.stat(t.file('old.log'));
    await t.decide(person, approvalOf(del.body).id, 'approve');
    expect((await t.as(agent, 'delete_file', { path: 'old.log', approval_id: approvalOf(del.body).id })).status).toBe(200);
    await expect(fs.stat(t.file('old.log'))).rejects.toThrow();

    const names = ((await t.app.inject({ method: 'GET', url: '/v1/tools', headers: reader.header })).json() as { tools: { name: string }[] }).tools.map((x) => x.name);
    expect(names).not.toContain('delete_file');
    expect(names).toContain('write_file');
  });
});

describe('the example files', () => {
  it('open with what they are for, in the operator\'s words (no internal seed numbers)', async () => {
    const { EXAMPLES } = await import('./approval-helpers.js');
    const files = (await fs.readdir(EXAMPLES)).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const text = await fs.readFile(`${EXAMPLES}/${f}`, 'utf8');
      expect(text.split('\n')[0], f).toMatch(/^# [A-Z]/);
      expect(text, f).not.toMatch(/\bseed \d/i);
    }
  });
});
