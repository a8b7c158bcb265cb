// The policy decides on what a call does, not on how it is spelled (docs/policy.md), each attack tried over
// the real HTTP door with a real policy file, counting what got through: a rule naming a tool alias, a
// directory moved onto a protected path, a dry run or a walk that shows content a read would have to ask
// for, backups listed for a denied file, and an approval recorded in the project the call came from rather
// than the one whose file changes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Envelope } from '../../src/envelope.js';
import { makeApp, makeTempDir, sha256OfFile, type TestApp } from '../helpers.js';
import { makeToken, type TestToken } from '../ops/ops-helpers.js';
import { agent, approvalOf, makePolicyApp, person, type PolicyApp } from '../approvals/approval-helpers.js';

let t: PolicyApp | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const SECRET = 'TOPSECRET-7f3a9';

/** Answers that carry the secret (beyond the caller's own arguments echoed in context): what got through. */
function leaks(answers: { status: number; body: Envelope }[]): { status: number; body: Envelope }[] {
  return answers.filter((a) => JSON.stringify({ ...a.body, context: null }).includes(SECRET));
}

describe('a rule naming a tool alias', () => {
  const POLICY = `
rules:
  - name: soul
    paths: [SOUL.md]
    tools: [text_editor, write, edit, Write, file-write]
    action: deny
`;

  it('matches every call of that tool, whatever name the call uses: nothing gets through', async () => {
    t = await makePolicyApp(POLICY);
    await fs.writeFile(t.file('SOUL.md'), 'I am kind.\n');
    const sha = await sha256OfFile(t.file('SOUL.md'));
    const tries = [
      await t.as(agent, 'str_replace_based_edit_tool', { command: 'str_replace', path: 'SOUL.md', old_str: 'kind', new_str: 'cruel' }),
      await t.as(agent, 'text_editor', { command: 'str_replace', path: 'SOUL.md', old_str: 'kind', new_str: 'cruel' }),
      await t.as(agent, 'write_file', { path: 'SOUL.md', content: 'I am cruel.\n', expected_sha256: sha }),
      await t.as(agent, 'write', { path: 'SOUL.md', content: 'I am cruel.\n', expected_sha256: sha }),
      await t.as(agent, 'Write', { path: 'SOUL.md', content: 'I am cruel.\n', expected_sha256: sha }),
      await t.as(agent, 'edit_file', { path: 'SOUL.md', old_text: 'kind', new_text: 'cruel' }),
      await t.as(agent, 'edit', { path: 'SOUL.md', old_text: 'kind', new_text: 'cruel' }),
    ];
    expect(tries.filter((r) => r.status !== 403 || r.body.error?.code !== 'ACCESS_DENIED')).toEqual([]);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\n');
    // Other tools are not covered: the rule names these three.
    expect((await t.as(agent, 'read_file', { path: 'SOUL.md' })).status).toBe(200);
  });

  it('an unknown tool name stops start-up, naming it; an alias does not', async () => {
    const dir = await makeTempDir('toolgate-policy-');
    const file = path.join(dir, 'policy.yaml');
    await fs.writeFile(file, 'rules:\n  - tools: [edit, rm_rf]\n    action: deny\n');
    await expect(makeApp({ TOOLGATE_POLICY: file, TOOLGATE_STATE_DIR: path.join(dir, 'state') })).rejects.toThrow(/policy\.yaml:2:\d+: unknown tool 'rm_rf'/);
    await fs.rm(dir, { recursive: true, force: true });
  });
});

describe('a move decides every path it creates at its destination', () => {
  const policy = (action: string) => `
rules:
  - name: prod-env
    paths: [deploy/prod.env]
    action: ${action}
`;

  it('deny: a directory moved onto a protected path whose parent does not exist yet is refused', async () => {
    t = await makePolicyApp(policy('deny'));
    expect((await t.as(agent, 'write_file', { path: 'stage/prod.env', content: 'KEY=1\n' })).status).toBe(200);
    const tries = [
      await t.as(agent, 'move_file', { path: 'stage', destination: 'deploy' }),
      await t.as(agent, 'move_file', { path: 'stage/prod.env', destination: 'deploy/prod.env' }),
    ];
    expect(tries.map((r) => r.body.error?.code)).toEqual(['ACCESS_DENIED', 'ACCESS_DENIED']);
    expect(tries[0]?.body.error?.message).toMatch(/deploy\/prod\.env/);
    await expect(fs.stat(t.file('deploy'))).rejects.toThrow();
    expect(await fs.readFile(t.file('stage/prod.env'), 'utf8')).toBe('KEY=1\n');
  });

  it('deny: deeper, and through a directory that already exists', async () => {
    t = await makePolicyApp(policy('deny'));
    await fs.mkdir(t.file('deploy'));
    await fs.mkdir(t.file('x/y'), { recursive: true });
    await fs.writeFile(t.file('x/y/prod.env'), 'KEY=1\n');
    const r = await t.as(agent, 'move_file', { path: 'x', destination: 'deploy/x' });
    expect(r.status).toBe(200); // deploy/x/y/prod.env is not the protected path
    const moved = await t.as(agent, 'move_file', { path: 'deploy/x/y', destination: 'deploy/y2' });
    expect(moved.status).toBe(200);
    await fs.mkdir(t.file('z'));
    await fs.writeFile(t.file('z/prod.env'), 'KEY=2\n');
    await fs.rm(t.file('deploy'), { recursive: true });
    expect((await t.as(agent, 'move_file', { path: 'z', destination: 'deploy' })).body.error?.code).toBe('ACCESS_DENIED');
  });

  it('a file another process writes into the directory during the move is decided too: nothing lands on the protected path', async () => {
    t = await makePolicyApp(policy('deny'));
    const app = t;
    const exists = (rel: string) => fs.stat(app.file(rel)).then(() => true, () => false);
    let escaped = 0;
    let undone = 0;
    for (let round = 0; round < 24; round++) {
      await fs.rm(app.file('stage'), { recursive: true, force: true });
      await fs.rm(app.file('deploy'), { recursive: true, force: true });
      await fs.mkdir(app.file('stage'));
      // Entries enough that the check of the destination walks for a while.
      await Promise.all(Array.from({ length: 300 }, (_, i) => fs.writeFile(app.file(`stage/f${i}`), 'x')));
      const move = app.as(agent, 'move_file', { path: 'stage', destination: 'deploy' });
      // The other writer comes at another moment each round: before, during and after the check.
      for (let i = 0; i < round * 4; i++) await new Promise(setImmediate);
      const wrote = await fs.writeFile(app.file('stage/prod.env'), 'KEY=1\n').then(() => true, () => false);
      const r = await move;
      if (await exists('deploy/prod.env')) escaped++;
      if (wrote && r.status !== 200) {
        undone++;
        // Refused: the directory is back where it was, with everything in it.
        expect(await exists('stage/f0')).toBe(true);
        expect(await exists('deploy')).toBe(false);
      }
    }
    expect(escaped).toBe(0);
    expect(undone).toBeGreaterThan(0);
  });

  it('a directory whose files the rule does not name moves as before', async () => {
    t = await makePolicyApp(policy('deny'));
    await fs.mkdir(t.file('stage'));
    await fs.writeFile(t.file('stage/README'), 'hello\n');
    expect((await t.as(agent, 'move_file', { path: 'stage', destination: 'deploy' })).status).toBe(200);
    expect(await fs.readFile(t.file('deploy/README'), 'utf8')).toBe('hello\n');
  });

  it('ask: the move asks (nothing moved), the approved repeat moves', async () => {
    t = await makePolicyApp(policy('ask'));
    expect((await t.as(agent, 'write_file', { path: 'stage/prod.env', content: 'KEY=1\n' })).status).toBe(200);
    const asked = await t.as(agent, 'move_file', { path: 'stage', destination: 'deploy' });
    expect(asked.status).toBe(202);
    await expect(fs.stat(t.file('deploy'))).rejects.toThrow();
    const id = approvalOf(asked.body).id;
    expect((await t.decide(person, id, 'approve')).status).toBe(200);
    const done = await t.as(agent, 'move_file', { path: 'stage', destination: 'deploy', approval_id: id });
    expect(done.status).toBe(200);
    expect(await fs.readFile(t.file('deploy/prod.env'), 'utf8')).toBe('KEY=1\n');
  });

  it('a tree larger than the walk bound is refused, not moved unchecked', async () => {
    t = await makePolicyApp(policy('deny'), { TOOLGATE_SEARCH_MAX_FILES: '5' });
    await fs.mkdir(t.file('stage'));
    for (let i = 0; i < 8; i++) await fs.writeFile(t.file(`stage/f${i}`), 'x');
    const r = await t.as(agent, 'move_file', { path: 'stage', destination: 'deploy' });
    expect(r.body.error?.code).toBe('ACCESS_DENIED');
    expect(r.body.error?.message).toMatch(/TOOLGATE_SEARCH_MAX_FILES/);
    await expect(fs.stat(t.file('deploy'))).rejects.toThrow();
    // Where no rule can match inside the destination there is nothing to walk: the move goes ahead.
    expect((await t.as(agent, 'move_file', { path: 'stage', destination: 'elsewhere' })).status).toBe(200);
  });

  it('a file is decided as it arrives: an executable moved under an executable-only rule', async () => {
    t = await makePolicyApp('rules:\n  - name: bin\n    paths: [bin]\n    executable: true\n    action: deny\n');
    await fs.writeFile(t.file('run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await fs.mkdir(t.file('tools'));
    await fs.writeFile(t.file('tools/go.sh'), '#!/bin/sh\n', { mode: 0o755 });
    const tries = [
      await t.as(agent, 'move_file', { path: 'run.sh', destination: 'bin/run' }),
      await t.as(agent, 'move_file', { path: 'tools', destination: 'bin' }),
      await t.as(agent, 'apply_patch', { patch: '*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run2\n@@\n-echo hi\n+echo ho\n*** End Patch' }),
    ];
    expect(tries.map((r) => r.body.error?.code)).toEqual(['ACCESS_DENIED', 'ACCESS_DENIED', 'ACCESS_DENIED']);
    await expect(fs.stat(t.file('bin'))).rejects.toThrow();
    await fs.writeFile(t.file('plain.txt'), 'text\n');
    expect((await t.as(agent, 'move_file', { path: 'plain.txt', destination: 'bin/plain.txt' })).status).toBe(200);
  });

  it('a tree deeper than the walk goes is refused', async () => {
    t = await makePolicyApp(policy('deny'));
    await fs.mkdir(t.file(`deep/${'d/'.repeat(70)}`), { recursive: true });
    const r = await t.as(agent, 'move_file', { path: 'deep', destination: 'deploy' });
    expect(r.body.error?.code).toBe('ACCESS_DENIED');
    expect(r.body.error?.message).toMatch(/levels deep/);
    await expect(fs.stat(t.file('deploy'))).rejects.toThrow();
  });
});

describe('a dry run is gated like a read of the content it shows', () => {
  const ASK = `
rules:
  - name: secrets
    paths: [secrets]
    action: ask
  - name: notes
    paths: [notes.txt]
    risks: [write, destructive]
    action: ask
`;
  const READS_DENIED = `
rules:
  - name: no-reading
    paths: [secrets]
    risks: [read]
    action: deny
`;

  async function arrange(policy: string): Promise<PolicyApp> {
    const app = await makePolicyApp(policy);
    await fs.mkdir(app.file('secrets'));
    await fs.writeFile(app.file('secrets/key.txt'), `api_key=${SECRET}\nother=1\n`);
    await fs.writeFile(app.file('notes.txt'), 'notes\n');
    return app;
  }

  const dryRuns = (sha: string): [string, Record<string, unknown>][] => [
    ['replace_in_file', { path: 'secrets/key.txt', old: 'api_key=(.*)', new: 'x=$1', regex: true, dry_run: true }],
    ['replace_in_file', { path: 'secrets/key.txt', old: 'other', new: 'o', dry_run: true }],
    ['append_to_file', { path: 'secrets/key.txt', content: 'more\n', dry_run: true }],
    ['edit_file', { path: 'secrets/key.txt', old_text: 'other=1', new_text: 'other=2', dry_run: true }],
    ['write_file', { path: 'secrets/key.txt', content: 'gone\n', expected_sha256: sha, dry_run: true }],
    ['apply_patch', { patch: '*** Begin Patch\n*** Update File: secrets/key.txt\n@@\n-other=1\n+other=2\n*** End Patch', dry_run: true }],
  ];

  it('under ask it asks instead of revealing: no answer carries the content', async () => {
    t = await arrange(ASK);
    const sha = await sha256OfFile(t.file('secrets/key.txt'));
    const answers = [];
    for (const [tool, body] of dryRuns(sha)) answers.push(await t.as(agent, tool, body));
    // The real change asks too, and its 202 shows the caller nothing of the file either.
    answers.push(await t.as(agent, 'replace_in_file', { path: 'secrets/key.txt', old: 'other', new: 'o' }));
    // A repeat while the request is still pending shows no more.
    answers.push(await t.as(agent, 'replace_in_file', { path: 'secrets/key.txt', old: 'other', new: 'o', approval_id: approvalOf(answers[6]!.body).id }));
    // A patch that asks first for a file the caller may read, and also changes the secret one.
    answers.push(await t.as(agent, 'apply_patch', { patch: '*** Begin Patch\n*** Update File: notes.txt\n@@\n-notes\n+notes 2\n*** Update File: secrets/key.txt\n@@\n-other=1\n+other=2\n*** End Patch' }));
    answers.push(await t.as(agent, 'apply_patch', { patch: '*** Begin Patch\n*** Update File: notes.txt\n@@\n-notes\n+notes 2\n*** Update File: secrets/key.txt\n@@\n-other=1\n+other=2\n*** End Patch', approval_id: approvalOf(answers[8]!.body).id }));
    expect(leaks(answers)).toEqual([]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    expect(approvalOf(answers[8]!.body).path).toBe('notes.txt');
    // Nor does the caller's own view of its requests.
    const own = [await t.get(agent, '/v1/approvals'), ...(await Promise.all(answers.map((a) => t!.get(agent, `/v1/approvals/${approvalOf(a.body).id}`))))];
    expect(own.filter((r) => r.status !== 200 || JSON.stringify(r.json).includes(SECRET))).toEqual([]);
    // The person deciding sees the diff; after approval the dry run shows it to the caller.
    const first = approvalOf(answers[1]!.body);
    const record = await t.get(person, `/v1/approvals/${first.id}`);
    expect(JSON.stringify(record.json)).toContain('other');
    expect((await t.decide(person, first.id, 'approve')).status).toBe(200);
    const shown = await t.as(agent, 'replace_in_file', { ...dryRuns(sha)[1]![1], approval_id: first.id });
    expect(shown.status).toBe(200);
    expect(await fs.readFile(t.file('secrets/key.txt'), 'utf8')).toBe(`api_key=${SECRET}\nother=1\n`);
  });

  it('under a deny on reading it is denied', async () => {
    t = await arrange(READS_DENIED);
    const sha = await sha256OfFile(t.file('secrets/key.txt'));
    const answers = [];
    for (const [tool, body] of dryRuns(sha)) answers.push(await t.as(agent, tool, body));
    expect(leaks(answers)).toEqual([]);
    expect(answers.map((a) => a.body.error?.code)).toEqual(answers.map(() => 'ACCESS_DENIED'));
    // A dry run of a file reading may see still works.
    expect((await t.as(agent, 'append_to_file', { path: 'notes.txt', content: 'x\n', dry_run: true })).status).toBe(200);
  });
});

describe('reads, searches and walks honour ask rules as they do deny rules', () => {
  const POLICY = `
switches:
  vault: { default: off }
rules:
  - name: secrets
    paths: [secrets]
    when: { vault: off }
    action: ask
`;

  async function arrange(): Promise<PolicyApp> {
    const app = await makePolicyApp(POLICY);
    await fs.mkdir(app.file('secrets/deeper'), { recursive: true });
    await fs.writeFile(app.file('secrets/key.txt'), `api_key=${SECRET}\n`);
    await fs.writeFile(app.file('secrets/deeper/key2.txt'), `again ${SECRET}\n`);
    await fs.writeFile(app.file('notes.txt'), `not the ${'TOPSECRET'} itself\n`);
    return app;
  }

  it('search (content and name), list_directory, disk_usage, find_large_files, ls -R leave the entries out', async () => {
    t = await arrange();
    const answers = [
      await t.as(agent, 'search_files', { path: '.', query: '7f3a9', mode: 'content' }),
      await t.as(agent, 'search_files', { path: '.', query: 'TOPSECRET', mode: 'both' }),
      await t.as(agent, 'search_files', { path: '.', query: 'api_key=(.*)', regex: true }),
      await t.as(agent, 'search_files', { path: '.', query: 'key', mode: 'name' }),
      await t.as(agent, 'list_directory', { path: '.', depth: 5 }),
      await t.as(agent, 'find_large_files', { path: '.', min_size_bytes: 1 }),
      await t.as(agent, 'disk_usage', { path: '.' }),
      await t.as(agent, 'shell_readonly', { command: 'ls -R .' }),
    ];
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(leaks(answers)).toEqual([]);
    const named = answers.filter((a) => /secrets|key2?\.txt/.test(JSON.stringify(a.body.data)));
    expect(named).toEqual([]);
    // With the switch on the same searches find them.
    const on = await t.as(agent, 'search_files', { path: '.', query: '7f3a9', mode: 'content' }, { 'x-toolgate-switches': 'vault=on' });
    expect(leaks([on])).toHaveLength(1);
  });

  it("the text editor's view is a read: it asks, and its directory view leaves the entries out", async () => {
    t = await arrange();
    const view = (path: string) => t!.as(agent, 'str_replace_based_edit_tool', { command: 'view', path });
    const answers = [await view('secrets/key.txt'), await view('.'), await view('secrets')];
    expect(leaks(answers)).toEqual([]);
    expect(answers.map((a) => a.status)).toEqual([202, 200, 202]);
    expect(JSON.stringify(answers[1]!.body.data)).not.toMatch(/secrets|key\.txt/);
    // A rule on reading alone denies the view too.
    await t.close();
    t = await makePolicyApp('rules:\n  - paths: [secrets]\n    risks: [read]\n    action: deny\n');
    await fs.mkdir(t.file('secrets'));
    await fs.writeFile(t.file('secrets/key.txt'), `api_key=${SECRET}\n`);
    const denied = await t.as(agent, 'text_editor', { command: 'view', path: 'secrets/key.txt' });
    expect(denied.body.error?.code).toBe('ACCESS_DENIED');
    const root = await t.as(agent, 'text_editor', { command: 'view', path: '.' });
    expect(leaks([denied, root])).toEqual([]);
    expect(JSON.stringify(root.body.data)).not.toMatch(/secrets/);
  });

  it('read_multiple_files asks for the whole call rather than failing with an IO error', async () => {
    t = await arrange();
    const asked = await t.as(agent, 'read_multiple_files', { paths: ['notes.txt', 'secrets/key.txt'] });
    expect(asked.status).toBe(202);
    expect(leaks([asked])).toEqual([]);
    const id = approvalOf(asked.body).id;
    expect((await t.decide(person, id, 'approve')).status).toBe(200);
    const read = await t.as(agent, 'read_multiple_files', { paths: ['notes.txt', 'secrets/key.txt'], approval_id: id });
    expect(read.status).toBe(200);
    const files = (read.body.data as { files: { status: string; data: { content: string } | null }[] }).files;
    expect(files.map((f) => f.status)).toEqual(['success', 'success']);
    expect(files[1]?.data?.content).toContain(SECRET);
  });

  it('an approved search of the asking directory shows what is in it', async () => {
    t = await arrange();
    const asked = await t.as(agent, 'search_files', { path: 'secrets', query: '7f3a9', mode: 'content' });
    expect(asked.status).toBe(202);
    expect(leaks([asked])).toEqual([]);
    const id = approvalOf(asked.body).id;
    expect((await t.decide(person, id, 'approve')).status).toBe(200);
    const found = await t.as(agent, 'search_files', { path: 'secrets', query: '7f3a9', mode: 'content', approval_id: id });
    expect((found.body.data as { results: unknown[] }).results).toHaveLength(2);
  });

  it('list_backups leaves out backups of files the caller may not see (deny and ask)', async () => {
    const policy = `
switches:
  memory: { default: off }
  vault: { default: off }
rules:
  - name: memory-off
    paths: [USER.md]
    when: { memory: off }
    action: deny
  - name: secrets
    paths: [secrets]
    when: { vault: off }
    action: ask
`;
    t = await makePolicyApp(policy);
    await fs.writeFile(t.file('USER.md'), 'Name: Ann\n');
    await fs.mkdir(t.file('secrets'));
    await fs.writeFile(t.file('secrets/key.txt'), 'k=1\n');
    await fs.writeFile(t.file('notes.txt'), 'n\n');
    const on = { 'x-toolgate-switches': 'memory=on, vault=on' };
    expect((await t.as(agent, 'edit_file', { path: 'USER.md', old_text: 'Ann', new_text: 'Bob' }, on)).status).toBe(200);
    expect((await t.as(agent, 'edit_file', { path: 'secrets/key.txt', old_text: 'k=1', new_text: 'k=2' }, on)).status).toBe(200);
    expect((await t.as(agent, 'edit_file', { path: 'notes.txt', old_text: 'n', new_text: 'm' })).status).toBe(200);
    const paths = (r: { body: Envelope }) => ((r.body.data as { backups: { path: string }[] }).backups ?? []).map((b) => b.path).sort();
    expect(paths(await t.as(agent, 'list_backups', {}, on))).toEqual(['USER.md', 'notes.txt', 'secrets/key.txt']);
    const off = await t.as(agent, 'list_backups', {});
    expect(paths(off)).toEqual(['notes.txt']);
    expect(JSON.stringify(off.body)).not.toMatch(/USER\.md|secrets/);
    expect((await t.as(agent, 'list_backups', { path: 'USER.md' })).body.error?.code).toBe('ACCESS_DENIED');
    expect((await t.as(agent, 'list_backups', { path: 'secrets/key.txt' })).status).toBe(202);
  });
});

describe('an approval belongs to the project whose file changes', () => {
  const POLICY = `
rules:
  - name: soul
    paths: [SOUL.md]
    risks: [write, destructive]
    action: ask
`;
  const caller = makeToken('caller', { projects: ['a', 'b'], risks: ['read', 'write'] });
  const approverA = makeToken('approver-a', { projects: ['a'], risks: ['read', 'approve'] });
  const approverB = makeToken('approver-b', { projects: ['b'], risks: ['read', 'approve'] });
  let app: TestApp | null = null;
  let dir = '';
  afterEach(async () => {
    await app?.close();
    app = null;
    await fs.rm(dir, { recursive: true, force: true });
  });

  const auditLines = async (project: string): Promise<Record<string, unknown>[]> => {
    const auditDir = path.join(dir, 'projects', project, '.toolgate', 'audit');
    const files = await fs.readdir(auditDir).catch(() => [] as string[]);
    const lines: Record<string, unknown>[] = [];
    for (const f of files) for (const l of (await fs.readFile(path.join(auditDir, f), 'utf8')).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
    return lines;
  };

  it('"[b]/SOUL.md" called in project a is recorded with b, decided only by b, audited in b', async () => {
    dir = await makeTempDir('toolgate-xproj-');
    for (const p of ['a', 'b']) {
      await fs.mkdir(path.join(dir, 'projects', p), { recursive: true });
      await fs.writeFile(path.join(dir, 'projects', p, 'SOUL.md'), 'I am kind.\n');
    }
    await fs.writeFile(path.join(dir, 'policy.yaml'), POLICY);
    const quiet = new Writable({ write: (_c, _e, done) => done() });
    app = await makeApp(
      { TOOLGATE_PROJECTS_ROOT: path.join(dir, 'projects'), TOOLGATE_POLICY: path.join(dir, 'policy.yaml') },
      { tokens: [caller, approverA, approverB].map((x: TestToken) => x.entry), auditStream: quiet },
    );
    const post = async (url: string, body: unknown, token: TestToken) => {
      const res = await app!.app.inject({ method: 'POST', url, payload: body as object, headers: token.header });
      return { status: res.statusCode, json: res.json() as Record<string, unknown> };
    };
    const edit = { path: '[b]/SOUL.md', old_text: 'kind', new_text: 'cruel' };
    const asked = await post('/v1/projects/a/tools/edit_file', edit, caller);
    expect(asked.status).toBe(202);
    const id = approvalOf(asked.json as unknown as Envelope).id;

    // The approver of project a neither sees nor decides it.
    const seenByA = await app.app.inject({ method: 'GET', url: `/v1/approvals/${id}`, headers: approverA.header });
    expect(seenByA.statusCode).toBe(404);
    const listedForA = await app.app.inject({ method: 'GET', url: '/v1/approvals', headers: approverA.header });
    expect(JSON.stringify(listedForA.json())).not.toContain(id);
    const byA = await post(`/v1/approvals/${id}/approve`, {}, approverA);
    expect(byA.status).not.toBe(200);
    const stillPending = await post('/v1/projects/a/tools/edit_file', { ...edit, approval_id: id }, caller);
    expect(stillPending.status).toBe(202);
    expect(await fs.readFile(path.join(dir, 'projects', 'b', 'SOUL.md'), 'utf8')).toBe('I am kind.\n');

    // Project b's approver sees it as b's and decides it; the repeat runs.
    const seenByB = await app.app.inject({ method: 'GET', url: `/v1/approvals/${id}`, headers: approverB.header });
    expect(seenByB.statusCode).toBe(200);
    expect((seenByB.json() as { approval: { project: string } }).approval.project).toBe('b');
    expect((await post(`/v1/approvals/${id}/approve`, {}, approverB)).status).toBe(200);
    const done = await post('/v1/projects/a/tools/edit_file', { ...edit, approval_id: id }, caller);
    expect(done.status).toBe(200);
    expect(await fs.readFile(path.join(dir, 'projects', 'b', 'SOUL.md'), 'utf8')).toBe('I am cruel.\n');

    const events = (lines: Record<string, unknown>[]) => lines.filter((l) => l.approval_id === id).map((l) => l.event);
    // A project's audit line is queued once its state directory is looked up: wait for the three.
    await vi.waitFor(
      async () => {
        await app!.app.toolgate.audit.flush();
        expect(events(await auditLines('b'))).toEqual(['approval_requested', 'approval_approved', 'approval_used']);
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(events(await auditLines('a'))).toEqual([]);
  });
});
