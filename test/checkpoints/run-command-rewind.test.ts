// A command's landed changes are recorded under its turn and rewound like any tool's (issue 35 point 1):
// run_command in its sandbox (TOOLGATE_EXEC=sandboxed), through the REST door.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeApp, pathExists, sha256OfFile, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' });
});
afterAll(async () => t.close());

it("records what a command changed under the call's turn; rewind takes it back, the directories it made and removed included", async () => {
  await fs.writeFile(t.file('a.txt'), 'before a\n');
  await fs.writeFile(t.file('c.txt'), 'before c\n');
  await fs.mkdir(t.file('old/deep'), { recursive: true });
  await fs.writeFile(t.file('old/one.txt'), 'one\n');
  await fs.writeFile(t.file('old/deep/two.txt'), 'two\n');
  const cmd = 'echo changed > a.txt && echo new > b.txt && rm c.txt && mkdir d && echo x > d/e.txt && rm -r old';
  const ran = await t.call('run_command', { command: cmd }, { 'toolgate-turn': 'cmd-turn' });
  expect(ran.status, JSON.stringify(ran.body.error)).toBe(200);
  const listed = (await t.call('list_checkpoints', {})).body.data as { checkpoints: { turn: string; tools: string[]; files: { path: string; op: string; kind: string }[] }[] };
  expect(listed.checkpoints[0]).toMatchObject({ turn: 'cmd-turn', tools: ['run_command'] });
  expect(listed.checkpoints[0]?.files.map((f) => [f.path, f.op, f.kind]).sort()).toEqual([
    ['a.txt', 'update', 'file'],
    ['b.txt', 'create', 'file'],
    ['c.txt', 'delete', 'file'],
    ['d', 'create', 'directory'],
    ['d/e.txt', 'create', 'file'],
    ['old', 'delete', 'directory'],
    ['old/deep/two.txt', 'delete', 'file'],
    ['old/one.txt', 'delete', 'file'],
  ]);
  const dry = await t.call('rewind', { turn: 'cmd-turn', dry_run: true });
  expect((dry.body.data as { changes: { path: string; diff: string }[] }).changes.find((c) => c.path === 'a.txt')?.diff).toContain('-changed\n+before a');
  const done = await t.call('rewind', { turn: 'cmd-turn' });
  expect(done.status, JSON.stringify(done.body.error)).toBe(200);
  expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('before a\n');
  expect(await fs.readFile(t.file('c.txt'), 'utf8')).toBe('before c\n');
  expect(await pathExists(t.file('b.txt'))).toBe(false);
  expect(await pathExists(t.file('d'))).toBe(false);
  expect(await fs.readFile(t.file('old/one.txt'), 'utf8')).toBe('one\n');
  expect(await fs.readFile(t.file('old/deep/two.txt'), 'utf8')).toBe('two\n');
});

it('the files of a directory a command removed are held by its checkpoint: later writes that prune backups leave them', async () => {
  const kept = await makeApp({ TOOLGATE_EXEC: 'sandboxed', TOOLGATE_BACKUP_KEEP: '1' });
  try {
    await fs.mkdir(kept.file('tree'));
    await fs.writeFile(kept.file('tree/x.txt'), 'orig\n');
    const ran = await kept.call('run_command', { command: 'rm -r tree' }, { 'toolgate-turn': 'rm-turn' });
    expect(ran.status, JSON.stringify(ran.body.error)).toBe(200);
    // Three writes of the same path: with one backup kept per file, the removal's backup would be pruned.
    for (const v of ['n1', 'n2', 'n3']) {
      const prior = (await pathExists(kept.file('tree/x.txt'))) ? { expected_sha256: await sha256OfFile(kept.file('tree/x.txt')) } : {};
      const w = await kept.call('write_file', { path: 'tree/x.txt', content: `${v}\n`, ...prior }, { 'toolgate-turn': `w-${v}` });
      expect(w.status, JSON.stringify(w.body.error)).toBe(200);
    }
    const done = await kept.call('rewind', { turn: 'rm-turn' });
    expect(done.status, JSON.stringify(done.body.error)).toBe(200);
    expect(await fs.readFile(kept.file('tree/x.txt'), 'utf8')).toBe('orig\n');
  } finally {
    await kept.close();
  }
});
