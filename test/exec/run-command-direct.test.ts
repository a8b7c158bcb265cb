// Where an overlay cannot be mounted (docs/run-command.md, "Direct mode"), through the real HTTP door: with
// TOOLGATE_EXEC=sandboxed the service starts, says why in its log and does not offer run_command; with
// TOOLGATE_EXEC=direct commands run on the project itself and the answer names what that gives up. The kernel's
// answer for a missing overlayfs is had by mounting a filesystem type it does not know (ENODEV either way).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makePolicyApp } from '../approvals/approval-helpers.js';
import { auditCollector, makeApp, type TestApp } from '../helpers.js';

const NO_OVERLAY = { overlayFsType: 'toolgate-no-such-fs' };

interface RunData {
  exit_code: number | null;
  applied: boolean;
  stopped_by: string | null;
  files_changed: Array<{ path: string; change: string; backup_id: string | null; version: unknown }>;
}

describe('run_command where no overlay can be mounted', () => {
  let t: TestApp | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it('TOOLGATE_EXEC=sandboxed: the service starts, logs why, and does not offer run_command', async () => {
    const log = auditCollector();
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' }, { ...NO_OVERLAY, logger: { level: 'info', stream: log.stream } });
    const warning = log.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('run_command is not offered'));
    expect(warning, JSON.stringify(log.lines)).toBeDefined();
    expect(warning?.msg).toContain('TOOLGATE_EXEC=direct');
    expect(warning?.level).toBe(40);
    const tools = await t.app.inject({ method: 'GET', url: '/v1/tools' });
    expect(tools.body).not.toContain('run_command');
    const r = await t.call('run_command', { command: 'echo hi > a.txt' });
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe('NOT_FOUND');
    expect(await fs.stat(t.file('a.txt')).catch(() => null)).toBeNull();
    // The other tools work as ever.
    expect((await t.call('write_file', { path: 'b.txt', content: 'b\n' })).status).toBe(200);
  });

  it('TOOLGATE_EXEC=direct: a command changes the project as it runs; the answer says what that gives up', async () => {
    t = await makeApp({ TOOLGATE_EXEC: 'direct' }, NO_OVERLAY);
    await fs.writeFile(t.file('old.txt'), 'old\n');
    await fs.writeFile(t.file('keep.txt'), 'v1\n');
    const r = await t.call('run_command', { command: 'echo new > new.txt && rm old.txt && echo v2 > keep.txt' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const data = r.body.data as RunData;
    expect(data.exit_code).toBe(0);
    expect(data.files_changed.map((c) => `${c.change} ${c.path}`)).toEqual(['changed keep.txt', 'created new.txt', 'removed old.txt']);
    expect(data.files_changed.every((c) => c.backup_id === null && c.version === null)).toBe(true);
    expect(r.body.text).toContain('Direct mode (TOOLGATE_EXEC=direct)');
    expect(r.body.text).toContain('without backups or undo');
    expect(await fs.readFile(t.file('keep.txt'), 'utf8')).toBe('v2\n');
    expect((await t.call('list_backups', { path: 'keep.txt' })).body.text).toMatch(/No backups/i);
  });

  it('TOOLGATE_EXEC=direct: a stopped command leaves what it wrote, and says so; dry_run is refused', async () => {
    t = await makeApp({ TOOLGATE_EXEC: 'direct' }, NO_OVERLAY);
    const r = await t.call('run_command', { command: 'echo partial > p.txt; sleep 30', timeout_s: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((r.body.data as RunData).stopped_by).toBe('timeout');
    expect(r.body.text).toContain('What it wrote before it was stopped stays.');
    expect(await fs.readFile(t.file('p.txt'), 'utf8')).toBe('partial\n');
    const dry = await t.call('run_command', { command: 'echo x > d.txt', dry_run: true });
    expect(dry.body.error?.code).toBe('INVALID_PARAM');
    expect(await fs.stat(t.file('d.txt')).catch(() => null)).toBeNull();
  });

  it('TOOLGATE_EXEC=direct: a policy with rules on writes refuses every command (they could not be decided)', async () => {
    const p = await makePolicyApp(['rules:', '  - name: writes', '    risks: [write]', "    paths: ['src/**']", '    action: ask', ''].join('\n'), { TOOLGATE_EXEC: 'direct' }, false);
    try {
      const r = await p.as(null, 'run_command', { command: 'echo x > src.txt' });
      expect(r.status).toBe(403);
      expect(r.body.error?.code).toBe('ACCESS_DENIED');
      expect(r.body.error?.message).toContain('direct mode');
      expect(await fs.stat(path.join(p.root, 'src.txt')).catch(() => null)).toBeNull();
    } finally {
      await p.close();
    }
  });
});
