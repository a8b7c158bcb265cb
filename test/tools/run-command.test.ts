// run_command through the real HTTP door (docs/run-command.md): off by default, the risk class `execute`,
// the answer (exit code, output head and tail, files_changed), the checks on env and cwd, the audit line,
// the start-up probe, and the example policies' `commands:` rules.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { auditCollector, makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { makeToken } from '../ops/ops-helpers.js';
import { makePolicyApp, type PolicyApp } from '../approvals/approval-helpers.js';
import { killAllRuns } from '../../src/exec/settings.js';
import { hostProcesses, signalSandbox, until } from '../exec/host-processes.js';

interface RunData {
  command: string;
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  stopped_by: string | null;
  stdout: string;
  stderr: string;
  stdout_bytes: number;
  stdout_omitted_bytes: number;
  files_changed: { path: string; change: string; kind: string; size: number | null }[];
  files_changed_truncated: boolean;
}

const runner = makeToken('runner', { risks: ['read', 'write', 'execute'] });
const writer = makeToken('writer', { risks: ['read', 'write', 'destructive'] });

describe('run_command off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(async () => t.close());

  it('is not listed and a call answers NOT_FOUND naming the setting', async () => {
    const list = await t.app.inject({ method: 'GET', url: '/v1/tools' });
    expect(JSON.stringify(list.json())).not.toContain('run_command');
    const r = await t.call('run_command', { command: 'true' });
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe('NOT_FOUND');
    expect(r.body.error?.message).toMatch(/not offered/);
  });
});

describe('run_command sandboxed', () => {
  let t: TestApp;
  let audit: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const { stream, lines } = auditCollector();
    audit = lines;
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed', TOOLGATE_EXEC_OUTPUT_MAX_BYTES: '2048', TOOLGATE_AUDIT_STDOUT: 'true' }, { tokens: [runner.entry, writer.entry], auditStream: stream });
  });
  afterAll(async () => t.close());

  const run = async (body: Record<string, unknown>) => {
    const r = await t.call('run_command', body, runner.header);
    return { ...r, data: r.body.data as RunData };
  };

  it('is listed for a token with execute, and refused to a token without it', async () => {
    const mine = await t.app.inject({ method: 'GET', url: '/v1/tools', headers: runner.header });
    expect(JSON.stringify(mine.json())).toContain('run_command');
    const theirs = await t.app.inject({ method: 'GET', url: '/v1/tools', headers: writer.header });
    expect(JSON.stringify(theirs.json())).not.toContain('run_command');
    const r = await t.call('run_command', { command: 'true' }, writer.header);
    expect(r.body.error?.code).toBe('ACCESS_DENIED');
    expect(r.body.error?.message).toMatch(/execute/);
  });

  it('runs a shell line in /workspace and answers exit code, output and the files it changed', async () => {
    await fs.writeFile(t.file('keep.txt'), 'old');
    await fs.writeFile(t.file('gone.txt'), 'x');
    const r = await run({ command: 'pwd; echo oops >&2; echo new > made.txt; echo changed >> keep.txt; rm gone.txt; mkdir dir; exit 3' });
    expect(r.status).toBe(200);
    expect(r.body.context.risk).toBe('execute');
    expect(r.data.exit_code).toBe(3);
    expect(r.data.stdout).toBe('/workspace\n');
    expect(r.data.stderr).toBe('oops\n');
    expect(r.data.timed_out).toBe(false);
    expect(r.data.files_changed).toEqual([
      { path: 'dir', change: 'created', kind: 'directory', size: null, version: null, backup_id: null },
      { path: 'gone.txt', change: 'removed', kind: 'file', size: null, version: null, backup_id: expect.any(String) },
      { path: 'keep.txt', change: 'changed', kind: 'file', size: 11, version: expect.objectContaining({ size_bytes: 11 }), backup_id: expect.any(String) },
      { path: 'made.txt', change: 'created', kind: 'file', size: 4, version: expect.objectContaining({ size_bytes: 4 }), backup_id: null },
    ]);
    expect(await fs.readFile(t.file('made.txt'), 'utf8')).toBe('new\n');
    const line = audit.find((a) => a.request_id === r.body.context.request_id);
    expect(line?.exec).toMatchObject({ exit_code: 3, files_changed_count: 4, command: expect.stringContaining('pwd; echo oops') });
  });

  it('runs argv without a shell, in cwd, with stdin and checked env', async () => {
    await fs.mkdir(t.file('sub'), { recursive: true });
    const r = await run({ argv: ['/bin/sh', '-c', 'pwd; cat; echo "$GREETING"; env | sort | cut -d= -f1 | tr "\\n" " "', 'x;y'], cwd: 'sub', stdin: 'in\n', env: ['GREETING=hello'] });
    expect(r.data.exit_code).toBe(0);
    // Under memory pressure the command is the first the kernel kills, never the service.
    expect((await run({ command: 'cat /proc/self/oom_score_adj' })).data.stdout).toBe('1000\n');
    expect(r.data.stdout).toBe('/workspace/sub\nin\nhello\nGREETING HOME LANG PATH PWD ');
  });

  it('refuses bad env names, loader variables, a cwd outside and both or neither of command and argv', async () => {
    for (const body of [{ command: 'true', env: ['1X=a'] }, { command: 'true', env: ['LD_PRELOAD=/tmp/x.so'] }, { command: 'true', env: ['NOEQUALS'] }, { command: 'true', argv: ['true'] }, {}]) {
      const r = await t.call('run_command', body, runner.header);
      expect(r.body.error?.code, JSON.stringify(body)).toBe('INVALID_PARAM');
    }
    const out = await t.call('run_command', { command: 'true', cwd: '../..' }, runner.header);
    expect(out.body.status).toBe('error');
    expect(out.body.error?.code).not.toBe('EXECUTION_ERROR');
  });

  it('keeps the head and the tail of long output and says how much was left out', async () => {
    const r = await run({ command: 'echo START; seq 1 20000; echo END' });
    expect(r.body.status).toBe('partial');
    expect(r.data.stdout.startsWith('START\n')).toBe(true);
    expect(r.data.stdout.endsWith('20000\nEND\n')).toBe(true);
    expect(r.data.stdout_omitted_bytes).toBe(r.data.stdout_bytes - 2048);
    expect(r.data.stdout).toContain(`[… ${r.data.stdout_omitted_bytes} bytes left out …]`);
  });

  it('kills the command at its time limit', async () => {
    const r = await run({ command: 'sleep 60', timeout_s: 1 });
    expect(r.data.timed_out).toBe(true);
    expect(r.data.stopped_by).toBe('timeout');
    expect(r.data.signal).toBe('SIGKILL');
    expect(r.body.status).toBe('partial');
  });
});

describe('run_command concurrency', () => {
  it('one command more than TOOLGATE_EXEC_CONCURRENCY is refused with RATE_LIMITED', async () => {
    const t = await makeApp({ TOOLGATE_EXEC: 'sandboxed', TOOLGATE_EXEC_CONCURRENCY: '1' });
    try {
      const marker = `wait${Date.now()}`;
      const first = t.call('run_command', { command: `while [ ! -e /tmp/go ]; do sleep 0.05; done # ${marker}` });
      await until(() => hostProcesses(marker) > 1, 200);
      const second = await t.call('run_command', { command: 'true' });
      expect(second.body.error?.code).toBe('RATE_LIMITED');
      expect(await until(() => signalSandbox(marker, 'go'), 200)).toBe(true);
      expect((await first).body.status).toBe('success');
      expect((await t.call('run_command', { command: 'true' })).body.status).toBe('success');
    } finally {
      await t.close();
    }
  });
});

describe('run_command at shutdown', () => {
  it('the service kills a running command when it closes; the call says shutdown', async () => {
    const t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' });
    const marker = `shutdown${Date.now()}`;
    await fs.writeFile(t.file(`${marker}.sh`), 'sleep 600\n');
    const call = t.call('run_command', { command: `sh ${marker}.sh` });
    await until(() => hostProcesses(`sh ${marker}.sh`) > 1, 200);
    await t.app.close();
    const r = await call;
    expect((r.body.data as RunData).stopped_by).toBe('shutdown');
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(marker));
    expect(left).toEqual([]);
    await fs.rm(path.dirname(t.root), { recursive: true, force: true });
  });

  it('a command whose sandbox starts after the close killed the running ones is killed at once', async () => {
    // The close's kill (killAllRuns) goes through the sandboxes running then; a call still preparing its own
    // spawns after it. Killing first and calling then puts the spawn in that window every time.
    const t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' });
    try {
      const exec = t.app.toolgate.workspace?.limits.exec;
      if (!exec) throw new Error('run_command is off');
      killAllRuns(exec);
      const r = await t.call('run_command', { command: 'echo ran > ran.txt' });
      const data = r.body.data as RunData;
      expect(data.stopped_by).toBe('shutdown');
      expect(data.exit_code).toBeNull();
      await expect(fs.stat(t.file('ran.txt'))).rejects.toThrow(/ENOENT/);
    } finally {
      await t.close();
    }
  });
});

describe('run_command start-up probe', () => {
  it('refuses to start, naming the cause, when bubblewrap cannot run', async () => {
    const dir = await makeTempDir();
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const config = loadConfig({ TOOLGATE_ROOT: dir, TOOLGATE_EXEC: 'sandboxed', TOOLGATE_AUDIT_STDOUT: 'false' });
      const err = await buildApp(config).then(
        async (app) => {
          await app.close();
          return null;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/TOOLGATE_EXEC=sandboxed: bwrap \(bubblewrap\) is not installed/);
    } finally {
      process.env.PATH = saved;
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('run_command under the example policy', () => {
  let t: PolicyApp;
  beforeAll(async () => {
    t = await makePolicyApp('ide.yaml', { TOOLGATE_EXEC: 'sandboxed' }, false);
    await fs.writeFile(path.join(t.root, 'package.json'), JSON.stringify({ scripts: { test: 'echo tested' } }));
  });
  afterAll(async () => t.close());

  it('runs a named command (npm test) without asking', async () => {
    const r = await t.as(null, 'run_command', { command: 'npm test' });
    expect(r.status).toBe(200);
    expect((r.body.data as RunData).stdout).toContain('tested');
  });

  it('asks before any other command, showing the command line; it runs once approved', async () => {
    const body = { command: 'npm test; echo more > more.txt', env: ['CI=1'] };
    const r = await t.as(null, 'run_command', body);
    expect(r.status).toBe(202);
    const approval = (r.body.data as { approval: { id: string; summary: string; diff_preview: string } }).approval;
    expect(approval.summary).toContain('npm test; echo more > more.txt');
    expect(approval.diff_preview).toContain('env CI=1');
    expect(await fs.stat(path.join(t.root, 'more.txt')).catch(() => null)).toBeNull();
    expect((await t.decide(null, approval.id, 'approve')).status).toBe(200);
    const again = await t.as(null, 'run_command', { ...body, approval_id: approval.id });
    expect(again.status).toBe(200);
    expect((again.body.data as RunData).files_changed.map((c) => c.path)).toEqual(['more.txt']);
  });

  it('a named command with env asks too (variables can change what it does)', async () => {
    const r = await t.as(null, 'run_command', { command: 'npm test', env: ['npm_config_script_shell=/bin/sh'] });
    expect(r.status).toBe(202);
  });
});

describe('run_command under the assistant example policy', () => {
  let t: PolicyApp;
  beforeAll(async () => {
    t = await makePolicyApp('assistant.yaml', { TOOLGATE_EXEC: 'sandboxed' }, false);
    await fs.writeFile(path.join(t.root, 'USER.md'), 'private\n');
  });
  afterAll(async () => t.close());

  it('denies commands while the memory switch is off (a command could read USER.md)', async () => {
    const off = await t.as(null, 'run_command', { command: 'cat USER.md' });
    expect(off.body.error?.code).toBe('ACCESS_DENIED');
    expect(JSON.stringify(off.body)).not.toContain('private');
    const on = await t.as(null, 'run_command', { command: 'cat USER.md' }, { 'x-toolgate-switches': 'memory=on' });
    expect(on.status).toBe(202);
  });
});
