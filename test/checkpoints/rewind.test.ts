// Turns, checkpoints and rewind through the REST door (issue 35; docs/api.md, "Turns, checkpoints and rewind"):
// the Toolgate-Turn header, list_checkpoints, rewind with its dry run, conflicts and force, pre-images gone,
// the path limit, the policy and approvals, and a rewind taken back.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Envelope } from '../../src/envelope.js';
import { backupFile, makeApp, pathExists, sha256OfFile, type TestApp } from '../helpers.js';
import { agent, approvalOf, makePolicyApp, person } from '../approvals/approval-helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

interface FileEntry {
  path: string;
  op: string;
  kind: string;
  to?: string;
  lines_added: number;
  lines_removed: number;
}
interface CheckpointData {
  id: string;
  turn: string | null;
  actor: string | null;
  calls: number;
  tools: string[];
  rewound_to: string | null;
  files: FileEntry[];
  files_count: number;
}
interface ListData {
  checkpoints: CheckpointData[];
  next_before: string | null;
  pruned: { count: number; before: string | null };
}
interface RewindData {
  applied: boolean;
  checkpoint: string;
  changes: { path: string; op: string; kind: string; to?: string; diff: string; content: string | null; sha256_before: string | null; sha256_after: string | null }[];
  forced: string[];
  rewind_checkpoint: string | null;
}

const turn = (id: string) => ({ 'toolgate-turn': id });
const list = async (app: TestApp, body: Record<string, unknown> = {}) => (await app.call('list_checkpoints', body)).body.data as ListData;
const read = (app: TestApp, rel: string) => fs.readFile(app.file(rel), 'utf8');
const version = async (app: TestApp, rel: string) => ({ expected_sha256: await sha256OfFile(app.file(rel)) });

async function ok(p: Promise<{ status: number; body: Envelope }>): Promise<Envelope> {
  const r = await p;
  expect(r.status, JSON.stringify(r.body.error ?? r.body.text)).toBe(200);
  return r.body;
}

/** Every file and directory under the workspace (the state directory left out), with the files' contents. */
async function snapshot(app: TestApp): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const e of await fs.readdir(app.file(dir), { withFileTypes: true })) {
      const rel = dir === '.' ? e.name : `${dir}/${e.name}`;
      if (rel === '.toolgate') continue;
      out[rel] = e.isDirectory() ? '<dir>' : await fs.readFile(app.file(rel), 'utf8');
      if (e.isDirectory()) await walk(rel);
    }
  };
  await walk('.');
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

describe('turns and list_checkpoints', () => {
  it('groups the calls of a turn into one checkpoint, newest first, with each file, its operation and its lines; a call without a turn is one of its own', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'one\ntwo\n');
    await ok(t.call('write_file', { path: 'a.txt', content: 'one\n2\nthree\n', ...(await version(t, 'a.txt')) }, turn('t-1')));
    await ok(t.call('write_file', { path: 'dir/new.txt', content: 'x\n' }, turn('t-1')));
    await ok(t.call('append_to_file', { path: 'a.txt', content: 'four\n' }));
    await ok(t.call('delete_file', { path: 'dir/new.txt' }, turn('t-2')));

    const data = await list(t);
    expect(data.checkpoints.map((c) => [c.turn, c.calls])).toEqual([
      ['t-2', 1],
      [null, 1],
      ['t-1', 2],
    ]);
    const first = data.checkpoints[2] as CheckpointData;
    expect(first.tools).toEqual(['write_file']);
    expect(first.files).toEqual([
      { path: 'a.txt', op: 'update', kind: 'file', lines_added: 2, lines_removed: 1 },
      { path: 'dir', op: 'create', kind: 'directory', lines_added: 0, lines_removed: 0 },
      { path: 'dir/new.txt', op: 'create', kind: 'file', lines_added: 1, lines_removed: 0 },
    ]);
    expect(data.checkpoints[0]?.files).toEqual([{ path: 'dir/new.txt', op: 'delete', kind: 'file', lines_added: 0, lines_removed: 0 }]);
    expect(data.pruned).toEqual({ count: 0, before: null });
    // Reads, dry runs and writes of the bytes a file holds record nothing.
    await ok(t.call('read_file', { path: 'a.txt' }, turn('t-3')));
    await t.call('write_file', { path: 'b.txt', content: 'b', dry_run: true }, turn('t-3'));
    await ok(t.call('write_file', { path: 'a.txt', content: await read(t, 'a.txt') }, turn('t-3')));
    expect((await list(t)).checkpoints).toHaveLength(3);
  });

  it('pages with limit and before', async () => {
    t = await makeApp();
    for (let i = 0; i < 5; i++) await ok(t.call('write_file', { path: `f${i}.txt`, content: `${i}\n` }, turn(`p-${i}`)));
    const page1 = await list(t, { limit: 2 });
    expect(page1.checkpoints.map((c) => c.turn)).toEqual(['p-4', 'p-3']);
    const page2 = await list(t, { limit: 2, before: page1.next_before });
    expect(page2.checkpoints.map((c) => c.turn)).toEqual(['p-2', 'p-1']);
    const page3 = await list(t, { limit: 2, before: page2.next_before });
    expect(page3.checkpoints.map((c) => c.turn)).toEqual(['p-0']);
    expect(page3.next_before).toBeNull();
    expect((await t.call('list_checkpoints', { limit: 101 })).body.error?.code).toBe('INVALID_PARAM');
    expect((await t.call('list_checkpoints', { limit: 100 })).status).toBe(200);
    expect((await t.call('list_checkpoints', { before: 'nope' })).body.error?.code).toBe('INVALID_PARAM');
  });

  it('a bad turn is INVALID_PARAM in the envelope and the call changes nothing; 128 printable characters are a turn, 129 are not', async () => {
    t = await makeApp();
    for (const bad of ['has space', 'x'.repeat(129), 'tab\there', 'é']) {
      const r = await t.call('write_file', { path: 'bad.txt', content: 'no\n' }, { 'toolgate-turn': bad });
      expect(r.status, bad).toBe(400);
      expect(r.body.error?.code).toBe('INVALID_PARAM');
      expect(r.body.error?.message).toMatch(/Invalid turn .*128 printable ASCII/);
      expect(await pathExists(t.file('bad.txt'))).toBe(false);
    }
    const edge = 'msg_01' + 'A'.repeat(122);
    expect(edge).toHaveLength(128);
    await ok(t.call('write_file', { path: 'good.txt', content: 'yes\n' }, { 'toolgate-turn': edge }));
    expect((await list(t)).checkpoints[0]?.turn).toBe(edge);
    expect((await list(t)).checkpoints).toHaveLength(1);
  });
});

describe('rewind', () => {
  it('a dry run answers every change with its diff and changes nothing; the rewind puts every file back; a rewind of the rewind puts the turn again', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('edit.txt'), 'alpha\nbeta\n');
    await fs.writeFile(t.file('gone.txt'), 'kept\n');
    await fs.writeFile(t.file('moved.txt'), 'travels\n');
    await fs.writeFile(t.file('patched.txt'), 'p1\n');
    await fs.writeFile(t.file('replaced.txt'), 'old old\n');
    const before = await snapshot(t);
    const h = turn('agent-turn-7');
    await ok(t.call('edit_file', { path: 'edit.txt', old_text: 'beta', new_text: 'BETA', ...(await version(t, 'edit.txt')) }, h));
    await ok(t.call('write_file', { path: 'made/deep/new.txt', content: 'new\n' }, h));
    await ok(t.call('delete_file', { path: 'gone.txt' }, h));
    await ok(t.call('move_file', { path: 'moved.txt', destination: 'arrived/moved.txt' }, h));
    await ok(t.call('create_directory', { path: 'empty/dir' }, h));
    await ok(t.call('replace_in_file', { path: 'replaced.txt', old: 'old', new: 'new', count: 2 }, h));
    await ok(t.call('apply_patch', { patch: '*** Begin Patch\n*** Update File: patched.txt\n@@\n-p1\n+p2\n*** Add File: added.txt\n+a\n*** End Patch\n' }, h));
    await ok(t.call('str_replace_based_edit_tool', { command: 'create', path: 'editor.txt', file_text: 'e\n' }, h));
    await ok(t.call('write_file', { path: 'edit.txt', content: 'rewritten\n', ...(await version(t, 'edit.txt')) }, h));
    const after = await snapshot(t);
    expect(after).not.toEqual(before);

    const dry = await t.call('rewind', { turn: 'agent-turn-7', dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body.status).toBe('partial');
    const preview = dry.body.data as RewindData;
    expect(preview.applied).toBe(false);
    expect(await snapshot(t)).toEqual(after);
    const byPath = new Map(preview.changes.map((c) => [c.path, c]));
    expect(byPath.get('edit.txt')).toMatchObject({ op: 'update', diff: expect.stringContaining('-rewritten\n+alpha\n+beta') });
    expect(byPath.get('made/deep/new.txt')).toMatchObject({ op: 'delete', content: 'new\n' });
    expect(byPath.get('gone.txt')).toMatchObject({ op: 'create', diff: expect.stringContaining('+kept') });
    expect(byPath.get('arrived/moved.txt')).toMatchObject({ op: 'move', kind: 'file', to: 'moved.txt' });
    expect(byPath.get('empty/dir')).toMatchObject({ op: 'delete', kind: 'directory' });
    expect(byPath.get('added.txt')).toMatchObject({ op: 'delete', content: 'a\n' });

    const done = await ok(t.call('rewind', { checkpoint: preview.checkpoint }));
    const data = done.data as RewindData;
    expect(data.applied).toBe(true);
    expect(await snapshot(t)).toEqual(before);
    expect(done.text).toMatch(/^Rewound 1 checkpoint to before checkpoint \S+ \(turn agent-turn-7\)/);

    // The rewind is a checkpoint of its own: listed, and rewound like any.
    const listed = await list(t);
    expect(listed.checkpoints[0]).toMatchObject({ id: data.rewind_checkpoint, tools: ['rewind'], rewound_to: preview.checkpoint });
    await ok(t.call('rewind', { checkpoint: data.rewind_checkpoint }));
    expect(await snapshot(t)).toEqual(after);
  });

  it('records and takes back the text editor with its undo_edit, restore_backup and the shell tools', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('e.txt'), 'one\n');
    await fs.writeFile(t.file('r.txt'), 'first\n');
    await fs.writeFile(t.file('x.txt'), 'doomed\n');
    await ok(t.call('write_file', { path: 'r.txt', content: 'second\n', ...(await version(t, 'r.txt')) }));
    const before = await snapshot(t);
    const h = turn('tools');
    await ok(t.call('str_replace_based_edit_tool', { command: 'str_replace', path: 'e.txt', old_str: 'one', new_str: 'two' }, h));
    await ok(t.call('str_replace_based_edit_tool', { command: 'str_replace', path: 'e.txt', old_str: 'two', new_str: 'three' }, h));
    await ok(t.call('str_replace_based_edit_tool', { command: 'undo_edit', path: 'e.txt' }, h));
    await ok(t.call('restore_backup', { path: 'r.txt' }, h));
    await ok(t.call('shell_write', { command: 'mkdir -p made/here' }, h));
    await ok(t.call('shell_destructive', { command: 'rm x.txt' }, h));
    const cp = (await list(t)).checkpoints[0] as CheckpointData;
    expect(cp.tools).toEqual(['str_replace_based_edit_tool', 'restore_backup', 'shell_write', 'shell_destructive']);
    expect(cp.calls).toBe(6);
    await ok(t.call('rewind', { turn: 'tools' }));
    expect(await snapshot(t)).toEqual(before);
  });

  it('moves a directory back, with a file changed and one made in it after the move', async () => {
    t = await makeApp();
    await fs.mkdir(t.file('src/lib'), { recursive: true });
    await fs.writeFile(t.file('src/lib/a.txt'), 'a\n');
    await fs.writeFile(t.file('src/b.txt'), 'b\n');
    const before = await snapshot(t);
    const h = turn('dirs');
    await ok(t.call('move_file', { path: 'src', destination: 'moved/src' }, h));
    await ok(t.call('write_file', { path: 'moved/src/lib/a.txt', content: 'A\n', ...(await version(t, 'moved/src/lib/a.txt')) }, h));
    await ok(t.call('write_file', { path: 'moved/src/new.txt', content: 'n\n' }, h));
    const dry = (await t.call('rewind', { turn: 'dirs', dry_run: true })).body.data as RewindData;
    expect(dry.changes[0]).toMatchObject({ op: 'move', kind: 'directory', path: 'moved/src', to: 'src' });
    await ok(t.call('rewind', { turn: 'dirs' }));
    expect(await snapshot(t)).toEqual(before);
    // A directory made again where one was moved away blocks the move back: refused, nothing changed.
    await ok(t.call('move_file', { path: 'src', destination: 'elsewhere' }, turn('again')));
    await ok(t.call('create_directory', { path: 'src' }));
    const blocked = await t.call('rewind', { turn: 'again' });
    expect(blocked.body.error?.code).toBe('CONFLICT');
    expect(await pathExists(t.file('elsewhere/b.txt'))).toBe(true);
  });

  it('takes back every checkpoint at or after the one named, and none before it', async () => {
    t = await makeApp();
    await ok(t.call('write_file', { path: 'a.txt', content: '1\n' }, turn('one')));
    await ok(t.call('write_file', { path: 'a.txt', content: '2\n', ...(await version(t, 'a.txt')) }, turn('two')));
    await ok(t.call('write_file', { path: 'b.txt', content: 'b\n' }));
    await ok(t.call('write_file', { path: 'a.txt', content: '3\n', ...(await version(t, 'a.txt')) }, turn('three')));
    const r = await ok(t.call('rewind', { turn: 'two' }));
    expect((r.data as { checkpoints_rewound: number }).checkpoints_rewound).toBe(3);
    expect(await read(t, 'a.txt')).toBe('1\n');
    expect(await pathExists(t.file('b.txt'))).toBe(false);
  });

  it('a file changed outside the record stops the rewind with CONFLICT naming it, and nothing changes; force overwrites it', async () => {
    t = await makeApp();
    await ok(t.call('write_file', { path: 'a.txt', content: 'agent\n' }, turn('t')));
    await ok(t.call('write_file', { path: 'b.txt', content: 'agent b\n' }, turn('t')));
    await fs.writeFile(t.file('b.txt'), 'by hand\n');
    const refused = await t.call('rewind', { turn: 't' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { paths: ['b.txt'] } });
    expect(refused.body.error?.message).toMatch(/'b\.txt' changed since the last recorded change.*force: true/);
    expect(await read(t, 'a.txt')).toBe('agent\n');
    expect(await read(t, 'b.txt')).toBe('by hand\n');

    const forced = await ok(t.call('rewind', { turn: 't', force: true }));
    expect((forced.data as RewindData).forced).toEqual(['b.txt']);
    expect(await pathExists(t.file('a.txt'))).toBe(false);
    expect(await pathExists(t.file('b.txt'))).toBe(false);
    // What force overwrote is kept: the rewind of the rewind brings it back.
    await ok(t.call('rewind', { checkpoint: (forced.data as RewindData).rewind_checkpoint }));
    expect(await read(t, 'b.txt')).toBe('by hand\n');
  });

  it('a checkpoint whose content before is gone is refused before anything changes', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'orig a\n');
    await fs.writeFile(t.file('b.txt'), 'orig b\n');
    await ok(t.call('write_file', { path: 'a.txt', content: 'A\n', ...(await version(t, 'a.txt')) }, turn('t')));
    const second = await ok(t.call('write_file', { path: 'b.txt', content: 'B\n', ...(await version(t, 'b.txt')) }, turn('t')));
    // The backup of b.txt's old content is lost (removed on the volume).
    const id = (second.data as { backup_id: string }).backup_id;
    await fs.rm(backupFile(path.join(t.root, '.toolgate'), id));
    const refused = await t.call('rewind', { turn: 't' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { paths: ['b.txt'], reason: 'pre_image_gone' } });
    expect(await read(t, 'a.txt')).toBe('A\n');
    expect(await read(t, 'b.txt')).toBe('B\n');
  });

  it('refuses more paths than TOOLGATE_PATCH_MAX_FILES before reading any; at the limit it rewinds', async () => {
    t = await makeApp({ TOOLGATE_PATCH_MAX_FILES: '3' });
    for (const n of ['1', '2', '3']) await ok(t.call('write_file', { path: `${n}.txt`, content: n }, turn('three')));
    await ok(t.call('rewind', { turn: 'three' }));
    expect(await snapshot(t)).toEqual({});
    for (const n of ['1', '2', '3', '4']) await ok(t.call('write_file', { path: `${n}.txt`, content: n }, turn('four')));
    const over = await t.call('rewind', { turn: 'four' });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'INVALID_PARAM', details: { files: 4, limit_files: 3 } });
    expect(Object.keys(await snapshot(t))).toEqual(['1.txt', '2.txt', '3.txt', '4.txt']);
  });

  it('NOT_FOUND for an unknown checkpoint or turn; INVALID_PARAM for neither or both', async () => {
    t = await makeApp();
    await ok(t.call('write_file', { path: 'a.txt', content: 'a' }, turn('t')));
    expect((await t.call('rewind', { turn: 'other' })).body.error?.code).toBe('NOT_FOUND');
    expect((await t.call('rewind', { checkpoint: '000000000-0000-000000' })).body.error?.code).toBe('NOT_FOUND');
    expect((await t.call('rewind', {})).body.error?.code).toBe('INVALID_PARAM');
    const id = (await list(t)).checkpoints[0]?.id;
    expect((await t.call('rewind', { checkpoint: id, turn: 't' })).body.error?.code).toBe('INVALID_PARAM');
  });
});

describe('rewind under a policy', () => {
  const POLICY = 'rules:\n  - paths: [SOUL.md]\n    risks: [write, destructive]\n    action: ask\n  - paths: [locked/**]\n    risks: [write, destructive]\n    action: deny\n';

  it('asks for approval with every change it would make, and runs once approved', async () => {
    const app = await makePolicyApp(POLICY);
    t = app;
    await fs.writeFile(app.file('SOUL.md'), 'kind\n');
    // The agent's edit of SOUL.md was approved before; now it is taken back.
    await fs.writeFile(app.file('notes.txt'), 'n\n');
    const w = await app.as(agent, 'write_file', { path: 'notes.txt', content: 'agent\n', expected_sha256: await sha256OfFile(app.file('notes.txt')) }, turn('t'));
    expect(w.status).toBe(200);
    await fs.writeFile(app.file('SOUL.md'), 'kind\n');
    const asked0 = await app.as(agent, 'write_file', { path: 'SOUL.md', content: 'cruel\n', expected_sha256: await sha256OfFile(app.file('SOUL.md')) }, turn('t'));
    const id0 = approvalOf(asked0.body).id;
    expect((await app.decide(person, id0, 'approve')).status).toBe(200);
    expect((await app.as(agent, 'write_file', { path: 'SOUL.md', content: 'cruel\n', expected_sha256: await sha256OfFile(app.file('SOUL.md')), approval_id: id0 }, turn('t'))).status).toBe(200);

    const asked = await app.as(agent, 'rewind', { turn: 't' });
    expect(asked.status).toBe(202);
    const approval = (asked.body.data as { approval: { id: string; changes: { path: string; op: string; diff: string }[] } }).approval;
    expect(approval.changes.map((c) => [c.path, c.op])).toEqual(expect.arrayContaining([['SOUL.md', 'update'], ['notes.txt', 'update']]));
    expect(approval.changes.find((c) => c.path === 'SOUL.md')?.diff).toContain('+kind');
    expect(await fs.readFile(app.file('SOUL.md'), 'utf8')).toBe('cruel\n');
    expect((await app.decide(person, approval.id, 'approve')).status).toBe(200);
    const done = await app.as(agent, 'rewind', { turn: 't', approval_id: approval.id });
    expect(done.status, JSON.stringify(done.body.error)).toBe(200);
    expect(await fs.readFile(app.file('SOUL.md'), 'utf8')).toBe('kind\n');
    expect(await fs.readFile(app.file('notes.txt'), 'utf8')).toBe('n\n');
  });

  it('a path the policy denies refuses the whole rewind, changing nothing', async () => {
    // The turn was made before the rule came: the rewind is decided by the rules in force now.
    t = await makeApp();
    await ok(t.call('write_file', { path: 'free.txt', content: 'f\n' }, turn('t')));
    await ok(t.call('write_file', { path: 'locked/y.txt', content: 'y\n' }, turn('t')));
    const policy = path.join(t.root, '..', 'policy.yaml');
    await fs.writeFile(policy, POLICY);
    const ruled = await buildApp(loadConfig({ TOOLGATE_ROOT: t.root, TOOLGATE_POLICY: policy, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }));
    try {
      const res = await ruled.inject({ method: 'POST', url: '/v1/tools/rewind', payload: { turn: 't' } });
      expect(res.statusCode).toBe(403);
      expect((res.json() as Envelope).error?.code).toBe('ACCESS_DENIED');
    } finally {
      await ruled.close();
    }
    expect(await read(t, 'free.txt')).toBe('f\n');
    expect(await read(t, 'locked/y.txt')).toBe('y\n');
  });
});

describe('retention and the volume', () => {
  it('keeps TOOLGATE_CHECKPOINT_MAX_TURNS checkpoints, says how many went, and keeps the backups kept ones need beyond TOOLGATE_BACKUP_KEEP', async () => {
    t = await makeApp({ TOOLGATE_CHECKPOINT_MAX_TURNS: '3', TOOLGATE_BACKUP_KEEP: '1' });
    await fs.writeFile(t.file('a.txt'), '0\n');
    for (let i = 1; i <= 5; i++) await ok(t.call('write_file', { path: 'a.txt', content: `${i}\n`, ...(await version(t, 'a.txt')) }, turn(`r-${i}`)));
    const data = await list(t);
    expect(data.checkpoints.map((c) => c.turn)).toEqual(['r-5', 'r-4', 'r-3']);
    expect(data.pruned.count).toBe(2);
    expect(data.pruned.before).toEqual(expect.any(String));
    expect((await t.call('rewind', { turn: 'r-2' })).body.error?.code).toBe('NOT_FOUND');
    // Three backups of a.txt stay (one per kept checkpoint) though TOOLGATE_BACKUP_KEEP is 1: the oldest kept turn rewinds.
    await ok(t.call('rewind', { turn: 'r-3' }));
    expect(await read(t, 'a.txt')).toBe('2\n');
  });

  it('the bytes bound still holds: a backup a checkpoint needed goes, and with it that checkpoint and older ones, as list_checkpoints says', async () => {
    t = await makeApp({ TOOLGATE_BACKUP_MAX_BYTES: '1000', TOOLGATE_REQUIRE_VERSION: 'never' });
    for (let i = 0; i < 6; i++) {
      await fs.writeFile(t.file(`f${i}.txt`), 'x'.repeat(300));
      await ok(t.call('write_file', { path: `f${i}.txt`, content: 'y' }, turn(`b-${i}`)));
    }
    const data = await list(t);
    expect(data.checkpoints.map((c) => c.turn)).toEqual(['b-5', 'b-4', 'b-3']);
    expect(data.pruned.count).toBe(3);
    const backups = (await t.call('list_backups', {})).body.data as { backups: { size_bytes: number }[] };
    expect(backups.backups.reduce((n, b) => n + b.size_bytes, 0)).toBeLessThanOrEqual(1000);
    // Every checkpoint still listed rewinds: the oldest one takes back all three.
    await ok(t.call('rewind', { turn: 'b-3' }));
    for (const i of [3, 4, 5]) expect(await read(t, `f${i}.txt`)).toBe('x'.repeat(300));
  });

  it('two replicas on one volume see the same checkpoints, and a restart keeps them', async () => {
    t = await makeApp();
    await ok(t.call('write_file', { path: 'a.txt', content: 'from one\n' }, turn('shared')));
    const other = await buildApp(loadConfig({ TOOLGATE_ROOT: t.root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }));
    try {
      const call = async (tool: string, body: unknown, headers: Record<string, string> = {}) => {
        const res = await other.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body as object, headers });
        return { status: res.statusCode, body: res.json() as Envelope };
      };
      await ok(call('write_file', { path: 'b.txt', content: 'from two\n' }, turn('shared')));
      const seen = (await call('list_checkpoints', {})).body.data as ListData;
      expect(seen.checkpoints).toHaveLength(1);
      expect(seen.checkpoints[0]?.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
      expect((await list(t)).checkpoints[0]?.calls).toBe(2);
    } finally {
      await other.close();
    }
    const restarted = await buildApp(loadConfig({ TOOLGATE_ROOT: t.root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }));
    try {
      const res = await restarted.inject({ method: 'POST', url: '/v1/tools/rewind', payload: { turn: 'shared' } });
      expect(res.statusCode, res.body).toBe(200);
      expect(await snapshot(t)).toEqual({});
    } finally {
      await restarted.close();
    }
  });
});
