// A command's changes land through the commit path's records (docs/run-command.md, "What a command changes"),
// through the real HTTP door: what they replace or remove is kept as a backup (undo_edit and restore_backup
// bring it back, a removal too), each landed file answers its version, the audit line has each change's sha256
// before and after, bulk directories land without backups and say so, and a stopped command lands nothing.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER_RECORD } from '../../src/workspace/process-owner.js';
import { auditCollector, makeApp, type TestApp } from '../helpers.js';

interface Change {
  path: string;
  change: string;
  kind: string;
  version: { sha256: string | null; size_bytes: number } | null;
  backup_id: string | null;
}
interface RunData {
  exit_code: number | null;
  stopped_by: string | null;
  files_changed: Change[];
  changes_discarded: number;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe("run_command's changes", () => {
  let t: TestApp;
  let audit: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const { stream, lines } = auditCollector();
    audit = lines;
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed', TOOLGATE_AUDIT_STDOUT: 'true' }, { auditStream: stream });
  });
  afterAll(async () => t.close());

  const run = async (body: Record<string, unknown>) => {
    const r = await t.call('run_command', body);
    expect(r.body.status, JSON.stringify(r.body)).not.toBe('error');
    return { body: r.body, data: r.body.data as RunData };
  };

  it('keeps what a command replaced: list_backups shows it, undo_edit brings it back, the audit has sha256 before and after', async () => {
    await fs.writeFile(t.file('a.txt'), 'v1\n');
    const r = await run({ command: 'sed -i s/v1/v2/ a.txt && echo new > b.txt' });
    const a = r.data.files_changed.find((c) => c.path === 'a.txt');
    const b = r.data.files_changed.find((c) => c.path === 'b.txt');
    expect(a).toMatchObject({ change: 'changed', version: { sha256: sha('v2\n'), size_bytes: 3 } });
    expect(a?.backup_id).toEqual(expect.any(String));
    expect(b).toMatchObject({ change: 'created', version: { sha256: sha('new\n') }, backup_id: null });
    for (let i = 0; i < 100 && !audit.some((l) => l.request_id === r.body.context.request_id); i++) await new Promise((res) => setTimeout(res, 20));
    const line = audit.find((l) => l.request_id === r.body.context.request_id) as { exec: { changes: { path: string; sha256_before: string | null; sha256_after: string | null }[] } };
    expect(line.exec.changes).toContainEqual(expect.objectContaining({ path: 'a.txt', sha256_before: sha('v1\n'), sha256_after: sha('v2\n') }));
    const backups = await t.call('list_backups', { path: 'a.txt' });
    expect(JSON.stringify(backups.body.data)).toContain(a?.backup_id as string);
    const undo = await t.call('str_replace_based_edit_tool', { command: 'undo_edit', path: 'a.txt' });
    expect(undo.body.status, JSON.stringify(undo.body)).toBe('success');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('v1\n');
  });

  it('a removal is undone: the file comes back with its content', async () => {
    await fs.writeFile(t.file('gone.txt'), 'keep me\n');
    const r = await run({ command: 'rm gone.txt' });
    expect(r.data.files_changed).toEqual([expect.objectContaining({ path: 'gone.txt', change: 'removed', backup_id: expect.any(String) })]);
    expect(await fs.stat(t.file('gone.txt')).catch(() => null)).toBeNull();
    const undo = await t.call('str_replace_based_edit_tool', { command: 'undo_edit', path: 'gone.txt' });
    expect(undo.body.status, JSON.stringify(undo.body)).toBe('success');
    expect(await fs.readFile(t.file('gone.txt'), 'utf8')).toBe('keep me\n');
  });

  it('a removed directory keeps each of its files; restore_backup brings one back', async () => {
    await fs.mkdir(t.file('old/sub'), { recursive: true });
    await fs.writeFile(t.file('old/sub/x.txt'), 'x\n');
    const r = await run({ command: 'rm -r old' });
    expect(r.data.files_changed).toEqual([expect.objectContaining({ path: 'old', change: 'removed', kind: 'directory' })]);
    const list = await t.call('list_backups', { path: 'old/sub/x.txt' });
    const id = JSON.stringify(list.body.data).match(/"backup_id":"([^"]+)"/)?.[1];
    expect(id).toBeDefined();
    const restored = await t.call('restore_backup', { backup_id: id });
    expect(restored.body.status, JSON.stringify(restored.body)).not.toBe('error');
    expect(await fs.readFile(t.file('old/sub/x.txt'), 'utf8')).toBe('x\n');
  });

  it('a bulk directory (node_modules) lands without backups, and the answer says so', async () => {
    await fs.mkdir(t.file('node_modules/dep'), { recursive: true });
    await fs.writeFile(t.file('node_modules/dep/index.js'), 'old\n');
    const r = await run({ command: 'echo new > node_modules/dep/index.js; mkdir -p node_modules/other && echo x > node_modules/other/a.js' });
    expect(r.body.text).toMatch(/landed without backups/);
    expect(r.data.files_changed.find((c) => c.path === 'node_modules/dep/index.js')).toMatchObject({ change: 'changed', backup_id: null, version: null });
    expect(await fs.readFile(t.file('node_modules/dep/index.js'), 'utf8')).toBe('new\n');
  });

  it('a command stopped at its time limit lands nothing and says how many changes it discarded', async () => {
    const r = await run({ command: 'echo partial > p.txt; echo more > q.txt; sleep 30', timeout_s: 2 });
    expect(r.data.stopped_by).toBe('timeout');
    expect(r.data.changes_discarded).toBe(2);
    expect(r.body.text).toMatch(/Nothing of it landed: the command was stopped \(timeout\); 2 changes discarded/);
    expect(await fs.stat(t.file('p.txt')).catch(() => null)).toBeNull();
  });

  it('a file another caller changed while the command ran is a CONFLICT naming it, and nothing lands', async () => {
    await fs.writeFile(t.file('shared.txt'), 'one\n');
    const marker = `conflict${Date.now()}`;
    const call = t.call('run_command', { command: `sleep 1; echo mine > shared.txt; echo also > other.txt # ${marker}` });
    await new Promise((r) => setTimeout(r, 300));
    await fs.writeFile(t.file('shared.txt'), 'theirs\n');
    const r = await call;
    expect(r.body.error?.code).toBe('CONFLICT');
    expect(r.body.error?.message).toContain('shared.txt');
    expect(await fs.readFile(t.file('shared.txt'), 'utf8')).toBe('theirs\n');
    expect(await fs.stat(t.file('other.txt')).catch(() => null)).toBeNull();
  });

  it('a dry run runs the command and answers its changes with diffs, landing nothing', async () => {
    await fs.writeFile(t.file('dry.txt'), 'one\ntwo\n');
    await fs.writeFile(t.file('drop.txt'), 'dropped content\n');
    const r = await t.call('run_command', { command: 'sed -i s/two/TWO/ dry.txt; echo hi > fresh.txt; rm drop.txt; echo ran', dry_run: true });
    expect(r.body.status).toBe('partial');
    const d = r.body.data as RunData & { applied: boolean; stdout: string; changes: { path: string; op: string; diff: string; content: string | null }[] };
    expect(d.stdout).toBe('ran\n');
    expect(d.applied).toBe(false);
    expect(r.body.text).toMatch(/^\[Dry Run\] 3 project entries would change/);
    const byPath = Object.fromEntries(d.changes.map((c) => [c.path, c]));
    expect(byPath['dry.txt']).toMatchObject({ op: 'update' });
    expect(byPath['dry.txt']?.diff).toContain('-two');
    expect(byPath['dry.txt']?.diff).toContain('+TWO');
    expect(byPath['fresh.txt']).toMatchObject({ op: 'create' });
    expect(byPath['drop.txt']).toMatchObject({ op: 'delete', content: 'dropped content\n' });
    expect(await fs.readFile(t.file('dry.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(await fs.stat(t.file('fresh.txt')).catch(() => null)).toBeNull();
    expect(await fs.readFile(t.file('drop.txt'), 'utf8')).toBe('dropped content\n');
  });

  it('a bulk directory made again (rm -rf node_modules, then install) is swapped whole: nothing of the old one stays', async () => {
    await fs.mkdir(t.file('node_modules/old-dep'), { recursive: true });
    await fs.writeFile(t.file('node_modules/old-dep/index.js'), 'old\n');
    await fs.mkdir(t.file('node_modules/kept'), { recursive: true });
    await fs.writeFile(t.file('node_modules/kept/index.js'), 'v1\n');
    const r = await run({ command: 'rm -rf node_modules && mkdir -p node_modules/kept node_modules/new-dep && echo v2 > node_modules/kept/index.js && echo n > node_modules/new-dep/index.js' });
    expect(r.body.status).toBe('success');
    expect(await fs.stat(t.file('node_modules/old-dep')).catch(() => null)).toBeNull();
    expect(await fs.readFile(t.file('node_modules/kept/index.js'), 'utf8')).toBe('v2\n');
    expect(await fs.readFile(t.file('node_modules/new-dep/index.js'), 'utf8')).toBe('n\n');
    expect(r.data.files_changed.map((c) => `${c.change} ${c.path}`)).toEqual(expect.arrayContaining(['removed node_modules/old-dep', 'changed node_modules/kept/index.js', 'created node_modules/new-dep']));
  });
});

describe('run_command with the state directory on another file system', () => {
  it('runs nothing, and says the state directory must be on the project volume', async () => {
    const state = await fs.mkdtemp('/dev/shm/toolgate-state-');
    const other = await makeApp({ TOOLGATE_EXEC: 'sandboxed', TOOLGATE_STATE_DIR: state });
    try {
      const r = await other.call('run_command', { command: 'echo x > ran.txt' });
      expect(r.body.error?.code).toBe('EXECUTION_ERROR');
      expect(r.body.error?.message).toMatch(/state directory on the project's volume/);
      expect(await fs.stat(other.file('ran.txt')).catch(() => null)).toBeNull();
    } finally {
      await other.close();
      await fs.rm(state, { recursive: true, force: true });
    }
  });
});

describe("run directories a crashed process left", () => {
  it('are removed before the next process runs its first command; a live owner keeps its own', async () => {
    const t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' });
    try {
      const execDir = path.join(t.root, '.toolgate', 'exec');
      // A process that has exited: its pid is dead on this host.
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
      const crashed = path.join(execDir, 'crashed-instance');
      await fs.mkdir(path.join(crashed, 'run1', 'upper', 'left'), { recursive: true });
      await fs.writeFile(path.join(crashed, 'run1', 'upper', 'left', 'big.bin'), 'x'.repeat(1000));
      await fs.writeFile(path.join(crashed, '.owner'), `${OWNER_RECORD.split(':')[0] as string}:${dead}:00ff`);
      const alive = path.join(execDir, 'live-instance');
      await fs.mkdir(path.join(alive, 'run1'), { recursive: true });
      await fs.writeFile(path.join(alive, '.owner'), OWNER_RECORD);
      const r = await t.call('run_command', { command: 'true' });
      expect(r.body.status, JSON.stringify(r.body)).toBe('success');
      expect(await fs.stat(crashed).catch(() => null)).toBeNull();
      expect(await fs.stat(path.join(alive, 'run1')).catch(() => null)).not.toBeNull();
    } finally {
      await t.close();
    }
  });
});

