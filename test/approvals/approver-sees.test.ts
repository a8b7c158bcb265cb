// The person deciding sees everything a call will do (issue 21 point 2): every path with its operation, the
// diff of every content change and the content a delete removes, for every mutating tool, on the REST answer
// and GET /v1/approvals/{id}; and the approval binds to exactly those changes.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/tools/registry.js';
import { envelopeOf, httpClient, mcpUrl } from '../transports/mcp-helpers.js';
import { connect, wsUrl } from '../transports/ws-helpers.js';
import { agent, ideAll, makePolicyApp, person, type PolicyApp } from './approval-helpers.js';

let t: PolicyApp;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of closers.splice(0).reverse()) await done();
  await t?.close();
});

interface Change {
  path: string;
  op: string;
  kind: string;
  from?: string;
  to?: string;
  diff: string;
  content: string | null;
  truncated: boolean;
  sha256_before: string | null;
  sha256_after: string | null;
}
interface Approval {
  id: string;
  path: string;
  summary: string;
  diff_preview: string;
  diff_truncated: boolean;
  changes: Change[];
  changes_hash: string | null;
}

async function arrange() {
  t = await makePolicyApp('ide.yaml');
  await fs.writeFile(t.file('notes.txt'), 'hello\n');
  await fs.writeFile(t.file('SOUL.md'), 'I am kind.\nI help.\n');
}

/** Asks with `tool` and returns the 202's approval, checked against GET /v1/approvals/{id}. */
async function ask(tool: string, body: Record<string, unknown>): Promise<Approval> {
  const r = await t.as(agent, tool, body);
  expect(r.status, JSON.stringify(r.body.error)).toBe(202);
  const approval = (r.body.data as { approval: Approval }).approval;
  const stored = (await t.get(person, `/v1/approvals/${approval.id}`)).json.approval as Approval;
  expect(stored.changes).toEqual(approval.changes);
  expect(stored.diff_preview).toBe(approval.diff_preview);
  return stored;
}

const PATCH = '*** Begin Patch\n*** Update File: notes.txt\n@@\n-hello\n+hello, world\n*** Delete File: SOUL.md\n*** End Patch\n';

describe('what the approval shows, over REST', () => {
  it('apply_patch updating notes.txt and deleting SOUL.md shows both files, their ops and the content that goes', async () => {
    await arrange();
    const a = await ask('apply_patch', { patch: PATCH });
    expect(a.changes.map((c) => [c.op, c.path])).toEqual([
      ['update', 'notes.txt'],
      ['delete', 'SOUL.md'],
    ]);
    const [update, del] = a.changes as [Change, Change];
    expect(update.diff).toContain('-hello\n+hello, world');
    expect(del.content).toBe('I am kind.\nI help.\n');
    expect(del.truncated).toBe(false);
    expect(del.sha256_after).toBeNull();
    expect(a.diff_preview).toContain('+hello, world');
    expect(a.diff_preview).toContain('-I am kind.');
    expect(a.summary).toMatch(/notes\.txt.*SOUL\.md/);
    expect(a.changes_hash).toMatch(/^[0-9a-f]{64}$/);
    const requested = t.audit().find((l) => l.event === 'approval_requested' && l.approval_id === a.id);
    expect(requested?.changes).toEqual([expect.objectContaining({ op: 'update', path: 'notes.txt' }), expect.objectContaining({ op: 'delete', path: 'SOUL.md' })]);
    expect(JSON.stringify(requested)).not.toContain('I am kind');
    // Nothing changed while it waits.
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\nI help.\n');
  });

  it("the text editor's str_replace, insert and create show a diff (no dry run of their own)", async () => {
    await arrange();
    const sr = await ask('str_replace_based_edit_tool', { command: 'str_replace', path: 'SOUL.md', old_str: 'kind', new_str: 'very kind' });
    expect(sr.changes).toHaveLength(1);
    expect(sr.changes[0]).toMatchObject({ op: 'update', path: 'SOUL.md' });
    expect(sr.diff_preview).toContain('-I am kind.\n+I am very kind.');
    const ins = await ask('text_editor', { command: 'insert', path: 'SOUL.md', insert_line: 0, new_str: 'Hi.' });
    expect(ins.changes[0]?.diff).toContain('+Hi.');
    const cr = await ask('str_replace_based_edit_tool', { command: 'create', path: 'new/x.md', file_text: 'x\n' });
    expect(cr.changes[0]).toMatchObject({ op: 'create', path: 'new/x.md', sha256_before: null });
    expect(cr.changes[0]?.diff).toContain('+x');
    // Planning made no directory.
    await expect(fs.stat(t.file('new'))).rejects.toThrow(/ENOENT/);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\nI help.\n');
  });

  it('move_file notes.txt -> SOUL.md shows source and destination, and the destination content it replaces', async () => {
    await arrange();
    const plain = await ask('move_file', { path: 'notes.txt', destination: 'archive/notes.txt' });
    expect(plain.changes).toEqual([expect.objectContaining({ op: 'move', path: 'notes.txt', from: 'notes.txt', to: 'archive/notes.txt' })]);
    expect(plain.diff_preview).toContain('rename from notes.txt\nrename to archive/notes.txt');
    await expect(fs.stat(t.file('archive'))).rejects.toThrow(/ENOENT/);
    const over = await ask('move_file', { path: 'notes.txt', destination: 'SOUL.md', overwrite: true });
    expect(over.changes.map((c) => [c.op, c.path, c.to])).toEqual([
      ['delete', 'SOUL.md', undefined],
      ['move', 'notes.txt', 'SOUL.md'],
    ]);
    expect(over.changes[0]?.content).toBe('I am kind.\nI help.\n');
    expect(await fs.readFile(t.file('notes.txt'), 'utf8')).toBe('hello\n');
  });

  it('the shell tools say what they do: rm shows the content that goes, mkdir the directory it makes', async () => {
    await arrange();
    const rm = await ask('shell_destructive', { command: 'rm SOUL.md' });
    expect(rm.changes).toEqual([expect.objectContaining({ op: 'delete', path: 'SOUL.md', content: 'I am kind.\nI help.\n' })]);
    expect(rm.diff_preview).toContain('-I am kind.');
    const mkdir = await ask('shell_write', { command: 'mkdir -p build/out' });
    expect(mkdir.changes).toEqual([expect.objectContaining({ op: 'create', kind: 'directory', path: 'build/out' })]);
    await expect(fs.stat(t.file('build'))).rejects.toThrow(/ENOENT/);
  });

  it('every other mutating tool names its change', async () => {
    await arrange();
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['write_file', { path: 'notes.txt', content: 'bye\n', expected_sha256: createHash('sha256').update('hello\n').digest('hex') }, 'update', '+bye'],
      ['write_file', { path: 'fresh.txt', content: 'new\n' }, 'create', '+new'],
      ['edit_file', { path: 'SOUL.md', old_text: 'help', new_text: 'listen' }, 'update', '+I listen.'],
      ['replace_in_file', { path: 'SOUL.md', old: 'kind', new: 'calm' }, 'update', '+I am calm.'],
      ['append_to_file', { path: 'notes.txt', content: 'more\n' }, 'update', '+more'],
      ['delete_file', { path: 'notes.txt' }, 'delete', '-hello'],
      ['create_directory', { path: 'docs' }, 'create', 'new directory docs/'],
    ];
    for (const [tool, body, op, shown] of cases) {
      const a = await ask(tool, body);
      expect(a.changes.map((c) => c.op), tool).toEqual([op]);
      expect(a.diff_preview, tool).toContain(shown);
    }
    const del = await ask('delete_file', { path: 'SOUL.md' });
    expect(del.changes[0]?.content).toBe('I am kind.\nI help.\n');
  });

  it('restore_backup and undo_edit show the content they bring back', async () => {
    await arrange();
    const edit = { command: 'str_replace', path: 'SOUL.md', old_str: 'kind', new_str: 'very kind' };
    const a = await ask('str_replace_based_edit_tool', edit);
    await t.decide(person, a.id, 'approve');
    expect((await t.as(agent, 'str_replace_based_edit_tool', { ...edit, approval_id: a.id })).status).toBe(200);
    const undo = await ask('str_replace_based_edit_tool', { command: 'undo_edit', path: 'SOUL.md' });
    expect(undo.changes).toEqual([expect.objectContaining({ op: 'update', path: 'SOUL.md' })]);
    expect(undo.changes[0]?.diff).toContain('-I am very kind.\n+I am kind.');
    const backups = (await t.as(agent, 'list_backups', { path: 'SOUL.md' })).body.data as { backups: { backup_id: string }[] };
    const restore = await ask('restore_backup', { backup_id: backups.backups[0]?.backup_id });
    expect(restore.changes).toEqual([expect.objectContaining({ op: 'update', path: 'SOUL.md' })]);
    expect(restore.diff_preview).toContain('+I am kind.');
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am very kind.\nI help.\n');
  });

  it('every mutating tool is among those shown here (a new one needs its plan and a case above)', () => {
    // run_command shows its command line, cwd, env and stdin instead of a plan: test/tools/run-command.test.ts.
    // rewind's plan and approval: test/checkpoints/rewind.test.ts ("rewind under a policy").
    const shown = ['rewind', 'apply_patch', 'str_replace_based_edit_tool', 'move_file', 'shell_destructive', 'shell_write', 'write_file', 'edit_file', 'replace_in_file', 'append_to_file', 'delete_file', 'create_directory', 'restore_backup', 'run_command'];
    expect(TOOLS.filter((tool) => tool.mutates).map((tool) => tool.name).sort()).toEqual([...shown].sort());
  });

  it('a patch too large to show whole keeps every path and operation, later contents marked cut', async () => {
    await arrange();
    const body = Array.from({ length: 120 }, (_, i) => `line ${i} ${'x'.repeat(80)}`).join('\n') + '\n';
    const names = Array.from({ length: 30 }, (_, i) => `big${i}.txt`);
    for (const n of names) await fs.writeFile(t.file(n), body);
    const a = await ask('apply_patch', { patch: `*** Begin Patch\n${names.map((n) => `*** Delete File: ${n}\n`).join('')}*** End Patch\n` });
    expect(a.changes.map((c) => [c.op, c.path])).toEqual(names.map((n) => ['delete', n]));
    expect(a.changes.every((c) => c.truncated)).toBe(true);
    expect(a.changes[0]?.content).toMatch(/^line 0 /);
    expect(a.changes.at(-1)).toMatchObject({ diff: '', content: '' });
    expect(JSON.stringify(a.changes).length).toBeLessThan(300 * 1024);
  });

  it('a delete of a long file shows its beginning, marked truncated', async () => {
    await arrange();
    await fs.writeFile(t.file('long.txt'), Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n'));
    const a = await ask('delete_file', { path: 'long.txt' });
    expect(a.changes[0]?.truncated).toBe(true);
    expect(a.changes[0]?.content).toMatch(/^line 0\nline 1\n/);
    expect(a.changes[0]?.content?.split('\n').length).toBeLessThanOrEqual(101);
    expect(a.diff_truncated).toBe(true);
  });
});

describe('the approval binds to its changes', () => {
  it('a repeat whose changes differ from the approved ones is refused and changes nothing', async () => {
    await arrange();
    // SOUL.md asks first, so the approval's file_version is SOUL.md's; notes.txt is bound by the changes alone.
    const patch = '*** Begin Patch\n*** Delete File: SOUL.md\n*** Update File: notes.txt\n@@\n-hello\n+hello, world\n*** End Patch\n';
    const a = await ask('apply_patch', { patch });
    expect(a.path).toBe('SOUL.md');
    expect((await t.decide(person, a.id, 'approve')).status).toBe(200);
    // notes.txt changes after the approval: the patch still applies, but would now write other content.
    await fs.writeFile(t.file('notes.txt'), 'hello\nsomething new\n');
    const r = await t.as(agent, 'apply_patch', { patch, approval_id: a.id });
    expect(r.status, JSON.stringify(r.body.error)).toBe(409);
    expect(r.body.error).toMatchObject({ code: 'CONFLICT', details: { approval_id: a.id, mismatch: 'changes' } });
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\nI help.\n');
    expect(await fs.readFile(t.file('notes.txt'), 'utf8')).toBe('hello\nsomething new\n');
    expect(t.audit().some((l) => l.event === 'approval_refused' && l.mismatch === 'changes')).toBe(true);
  });

  it('a repeat that plans the same changes runs them', async () => {
    await arrange();
    const a = await ask('apply_patch', { patch: PATCH });
    await t.decide(person, a.id, 'approve');
    const r = await t.as(agent, 'apply_patch', { patch: PATCH, approval_id: a.id });
    expect(r.status).toBe(200);
    await expect(fs.stat(t.file('SOUL.md'))).rejects.toThrow(/ENOENT/);
    expect(await fs.readFile(t.file('notes.txt'), 'utf8')).toBe('hello, world\n');
  });

  it('a directory move shows what the directory holds, and binds to it', async () => {
    await arrange();
    await fs.mkdir(t.file('stage/sub'), { recursive: true });
    await fs.writeFile(t.file('stage/a.env'), 'A=1\n');
    const a = await ask('move_file', { path: 'stage', destination: 'deploy' });
    expect(a.changes).toEqual([expect.objectContaining({ op: 'move', kind: 'directory', from: 'stage', to: 'deploy', content: 'a.env (4 bytes)\nsub/\n' })]);
    expect(a.diff_preview).toContain('rename from stage\nrename to deploy\n  a.env (4 bytes)\n  sub/\n');
    await t.decide(person, a.id, 'approve');
    // A file put into the directory after the approval would move too: not what was approved.
    await fs.writeFile(t.file('stage/sub/prod.env'), 'SECRET=1\n');
    const r = await t.as(agent, 'move_file', { path: 'stage', destination: 'deploy', approval_id: a.id });
    expect(r.body.error).toMatchObject({ code: 'CONFLICT', details: { mismatch: 'changes' } });
    await expect(fs.stat(t.file('deploy'))).rejects.toThrow(/ENOENT/);
  });

  it('a move whose destination appeared after the approval is refused', async () => {
    await arrange();
    const a = await ask('move_file', { path: 'SOUL.md', destination: 'old/SOUL.md', overwrite: true });
    await t.decide(person, a.id, 'approve');
    await fs.mkdir(t.file('old'));
    await fs.writeFile(t.file('old/SOUL.md'), 'an older soul\n');
    const r = await t.as(agent, 'move_file', { path: 'SOUL.md', destination: 'old/SOUL.md', overwrite: true, approval_id: a.id });
    expect(r.body.error?.code).toBe('CONFLICT');
    expect(await fs.readFile(t.file('old/SOUL.md'), 'utf8')).toBe('an older soul\n');
  });
});

describe('what the person at the other end of a door sees', () => {
  it('the WebSocket confirmation_request carries every change; approving runs exactly that', async () => {
    await arrange();
    const c = await connect(await wsUrl(t), { headers: ideAll.header });
    c.send({ type: 'tool_call', call_id: 'p1', tool_name: 'apply_patch', arguments: { patch: PATCH } });
    const ask = (await c.one()) as { type: string; approval?: { changes: Change[]; diff_preview: string } };
    expect(ask.type).toBe('confirmation_request');
    expect(ask.approval?.changes.map((x) => [x.op, x.path])).toEqual([
      ['update', 'notes.txt'],
      ['delete', 'SOUL.md'],
    ]);
    expect(ask.approval?.changes[1]?.content).toBe('I am kind.\nI help.\n');
    expect(ask.approval?.diff_preview).toContain('-I am kind.');
    c.send({ type: 'confirmation_response', call_id: 'p1', approved: true });
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'p1', result: { status: 'success' } });
    await expect(fs.stat(t.file('SOUL.md'))).rejects.toThrow(/ENOENT/);

    c.send({ type: 'tool_call', call_id: 'm1', tool_name: 'move_file', arguments: { path: 'notes.txt', destination: 'SOUL.md' } });
    const move = (await c.one()) as { approval?: { changes: Change[] } };
    expect(move.approval?.changes).toEqual([expect.objectContaining({ op: 'move', from: 'notes.txt', to: 'SOUL.md' })]);
    c.send({ type: 'confirmation_response', call_id: 'm1', approved: false });
    expect(await c.one()).toMatchObject({ result: { error: { code: 'USER_REJECTED' } } });
  });

  it('the MCP elicitation names every file with its operation, the diffs and the content that goes', async () => {
    await arrange();
    const asked: ElicitRequest['params'][] = [];
    const client = await httpClient(await mcpUrl(t.app), ideAll.header, { capabilities: { elicitation: {} } }, {}, (c: McpClient) =>
      c.setRequestHandler(ElicitRequestSchema, (req) => {
        asked.push(req.params);
        return { action: 'decline' };
      }),
    );
    closers.push(() => client.close());
    const refused = await client.callTool({ name: 'apply_patch', arguments: { patch: PATCH } });
    expect(envelopeOf(refused).error?.code).toBe('USER_REJECTED');
    const message = (asked[0] as { message: string }).message;
    expect(message).toContain('- update notes.txt (+1/-1)');
    expect(message).toContain('- delete SOUL.md');
    expect(message).toContain('+hello, world');
    expect(message).toContain('-I am kind.');

    const editor = await client.callTool({ name: 'str_replace_based_edit_tool', arguments: { command: 'str_replace', path: 'SOUL.md', old_str: 'kind', new_str: 'very kind' } });
    expect(envelopeOf(editor).error?.code).toBe('USER_REJECTED');
    expect((asked[1] as { message: string }).message).toContain('+I am very kind.');
    const rm = await client.callTool({ name: 'shell_destructive', arguments: { command: 'rm notes.txt' } });
    expect(envelopeOf(rm).error?.code).toBe('USER_REJECTED');
    expect((asked[2] as { message: string }).message).toMatch(/- delete notes\.txt[\s\S]*-hello/);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\nI help.\n');
    expect(await fs.readFile(t.file('notes.txt'), 'utf8')).toBe('hello\n');
  });
});
