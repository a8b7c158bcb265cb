// run_command against an attacker who knows how it works (docs/run-command.md, "Isolation" and "What a command
// changes"), through the real HTTP door: descriptors the service inherited, paths past any walk's depth or
// count, names that are not UTF-8, set-ID files, FIFOs swapped in, the quota at depth, egress to platform
// addresses, a spoofed approval text and host paths inside the sandbox. Each case counts what got through:
// nothing.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METADATA_V4, METADATA_V6, egressRules } from '../../src/exec/network.js';
import { compiled, REPO } from '../compiled.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';

interface RunData {
  exit_code: number | null;
  stopped_by: string | null;
  stdout: string;
  stderr: string;
  files_changed: { path: string; change: string }[];
  changes_discarded: number;
  not_landed: { path: string; why: string }[];
}

const SECRET = `pemsecret_${randomBytes(8).toString('hex')}`;
const QUOTA = 16 * 1024 * 1024;
const figures: { case: string; leaked: boolean; note: string }[] = [];

function record(name: string, leaked: boolean, note: string): void {
  figures.push({ case: name, leaked, note });
}

/** A path `depth` directories deep (short names, so that the whole path stays under PATH_MAX). */
function deep(depth: number): string {
  return Array.from({ length: depth }, (_, i) => `d${i % 10}`).join('/');
}

/** Every file below `dir` (any depth, any name) whose mode has a set-ID bit. */
function setIdFiles(dir: string): string[] {
  const out = execFileSync('find', [dir, '-type', 'f', '-perm', '/6000', '-print0'], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  return out.toString('latin1').split('\0').filter(Boolean);
}

let t: TestApp;
let base: string;

beforeAll(async () => {
  base = await makeTempDir('toolgate-exec-attack-');
  const policy = path.join(base, 'policy.yaml');
  await fs.writeFile(policy, ['rules:', '  - name: keys', '    risks: [read]', "    paths: ['**/*.pem', 'vault', 'vault/**']", '    action: deny', '  - name: commands', '    tools: [run_command]', '    action: allow', ''].join('\n'));
  t = await makeApp({
    TOOLGATE_EXEC: 'sandboxed',
    TOOLGATE_POLICY: policy,
    TOOLGATE_STATE_DIR: path.join(base, 'state'),
    TOOLGATE_EXEC_QUOTA_BYTES: String(QUOTA),
    TOOLGATE_EXEC_MAX_FILE_BYTES: String(4 * 1024 * 1024),
    TOOLGATE_EXEC_MIN_FREE_BYTES: '0',
    TOOLGATE_EXEC_TIMEOUT_S: '60',
    TOOLGATE_TOOL_TIMEOUT_MS: '90000',
  });
});

afterAll(async () => {
  console.log(`run_command attack suite: ${figures.filter((f) => f.leaked).length} of ${figures.length} got through\n${figures.map((f) => `  ${f.leaked ? 'LEAK' : 'held'}  ${f.case}: ${f.note}`).join('\n')}`);
  await t?.close();
  if (base) await fs.rm(base, { recursive: true, force: true });
});

async function run(body: Record<string, unknown>): Promise<{ status: string; data: RunData; error?: { code: string; message: string } }> {
  const r = await t.call('run_command', body);
  return { status: r.body.status as string, data: r.body.data as RunData, ...(r.body.error && { error: r.body.error as { code: string; message: string } }) };
}

describe('run_command against an attacker', () => {
  it('a denied key 70 directories deep, or under a name that is not UTF-8, is hidden like one at the top', async () => {
    const d = deep(70);
    await fs.mkdir(t.file(d), { recursive: true });
    await fs.writeFile(t.file(`${d}/key.pem`), SECRET);
    // A name of bytes that are not UTF-8: the sandbox cannot decide a rule on it, so it hides it.
    const raw = Buffer.concat([Buffer.from(`${t.root}/`), Buffer.from([0xff, 0xfe]), Buffer.from('.pem')]);
    await fs.writeFile(raw, SECRET);
    await fs.writeFile(t.file('top.pem'), SECRET);
    const r = await run({ command: `cat top.pem ${d}/key.pem; cat ./*.pem; grep -rs ${SECRET.slice(0, 12)} . ; echo end` });
    const leaked = r.data.stdout.includes(SECRET) || r.data.stderr.includes(SECRET);
    record('denied key deep, denied key with a non-UTF-8 name', leaked, `exit ${r.data.exit_code}`);
    expect(r.status, JSON.stringify(r)).not.toBe('error');
    expect(leaked).toBe(false);
    expect((await t.call('read_file', { path: `${d}/key.pem` })).body.error?.code).toBe('ACCESS_DENIED');
    await fs.rm(t.file('d0'), { recursive: true });
    await fs.rm(raw);
  });

  it('no set-ID file survives: deep, under a denied path made during the run, with a non-UTF-8 name, past 50,000 entries', async () => {
    const d = deep(70);
    const cmd = [
      `mkdir -p ${d} && cp /bin/sh ${d}/sh && chmod 4755 ${d}/sh`,
      'mkdir -p vault && cp /bin/sh vault/sh && chmod 6755 vault/sh',
      `cp /bin/sh "$(printf 'x\\377')" && chmod 4755 "$(printf 'x\\377')"`,
      'mkdir many && cd many && seq 1 50100 | xargs touch && cp /bin/sh zz-sh && chmod 4755 zz-sh && cd ..',
      'echo made',
    ].join('; ');
    const r = await run({ command: cmd, timeout_s: 60 });
    const left = setIdFiles(t.root);
    const leaked = left.length > 0;
    record('set-ID files deep, under a denied path, non-UTF-8 name, past 50,000 entries', leaked, `${left.length} left; not landed ${r.data.not_landed?.map((n) => n.path).join(', ')}`);
    expect(r.data.stdout).toBe('made\n');
    expect(leaked).toBe(false);
    expect(r.data.not_landed.some((n) => n.why === 'name is not UTF-8')).toBe(true);
    await fs.rm(t.file('d0'), { recursive: true, force: true });
    await fs.rm(t.file('vault'), { recursive: true, force: true });
    await fs.rm(t.file('many'), { recursive: true, force: true });
  });

  it('a path swapped between a set-ID file and a FIFO by other runs holds no call and no exec slot', async () => {
    const swap = 'for i in $(seq 1 200); do rm -f x; cp /bin/sh x; chmod 4755 x; rm -f x; mkfifo x; done; rm -f x; cp /bin/sh x; chmod 4755 x; mkfifo y';
    const calls = Array.from({ length: 6 }, () => run({ command: swap, timeout_s: 30 }).catch((e: unknown) => ({ status: 'thrown', data: { exit_code: null } as RunData, error: { code: String(e), message: '' } })));
    const settled = await Promise.all(calls);
    const answered = settled.filter((c) => c.status !== 'thrown').length;
    const after = await run({ command: 'true' });
    const left = setIdFiles(t.root);
    const leaked = answered !== 6 || after.status !== 'success' || left.length > 0;
    record('set-ID file and FIFO swapped by concurrent runs', leaked, `${answered} of 6 answered (${settled.map((c) => c.error?.code ?? c.status).join(', ')}); then a run: ${after.status}; set-ID left ${left.length}`);
    expect(leaked).toBe(false);
    await fs.rm(t.file('x'), { force: true });
  });

  it('the quota holds for a writer 67 levels deep', async () => {
    const d = deep(67);
    const r = await run({ command: `mkdir -p ${d} && i=0; while true; do head -c 3000000 /dev/zero > ${d}/fill$i.bin; i=$((i+1)); done`, timeout_s: 60 });
    const written = Number(execFileSync('du', ['-sb', t.root], { encoding: 'utf8' }).split('\t')[0]);
    const leaked = r.data.stopped_by !== 'quota_exceeded' || written > QUOTA;
    record('quota at depth 67', leaked, `stopped_by ${r.data.stopped_by}, ${r.data.changes_discarded} changes discarded, project ${written} bytes`);
    expect(leaked).toBe(false);
  });

  it('no host path shows inside: /proc/1/cmdline, mountinfo, environ', async () => {
    const r = await run({ command: 'tr "\\0" " " < /proc/1/cmdline; cat /proc/self/mountinfo /proc/1/mountinfo; tr "\\0" "\\n" < /proc/1/environ; tr "\\0" "\\n" < /proc/self/environ; pwd -P' });
    const all = r.data.stdout + r.data.stderr;
    const leaked = all.includes(t.root) || all.includes(base) || all.includes(REPO);
    record('host paths in /proc', leaked, `${all.length} characters read`);
    expect(r.data.exit_code).toBe(0);
    expect(leaked).toBe(false);
  });

  it('a hidden directory takes no memory: it is read-only', async () => {
    await fs.mkdir(t.file('vault'), { recursive: true });
    const r = await run({ command: 'dd if=/dev/zero of=vault/fill bs=1M count=64 2>&1; grep " /workspace/vault " /proc/self/mountinfo' });
    const leaked = !/Read-only file system/.test(r.data.stdout) || !/ \/workspace\/vault ro,/.test(r.data.stdout);
    record('write into a hidden directory', leaked, r.data.stdout.split('\n')[0] ?? '');
    expect(leaked).toBe(false);
  });

  it('the egress rules refuse every listed platform address (installed in a namespace of the test, no packet sent)', () => {
    // The rules a run gets, installed as the launcher installs them, then listed back.
    const listed = execFileSync('unshare', ['--user', '--map-root-user', '--net', '--', 'sh', '-c', 'nft -f - && nft list ruleset'], { input: egressRules(), encoding: 'utf8' });
    const missing = [...METADATA_V4, ...METADATA_V6].filter((a) => !listed.includes(a.replace(/\/32$/, '')));
    record('egress to platform addresses', missing.length > 0 || !listed.includes('100.100.100.200'), missing.join(', ') || `${METADATA_V4.length + METADATA_V6.length} addresses refused`);
    expect(missing).toEqual([]);
    expect(listed).toMatch(/100\.100\.100\.200[^\n]*\}? reject|reject/);
  });
});

describe('run_command with descriptors the service inherited', () => {
  it('a command gets descriptors 0-2 only, whatever the service inherited', async () => {
    const dir = await makeTempDir('toolgate-exec-fds-');
    const credentials = path.join(dir, 'credentials');
    await fs.writeFile(credentials, SECRET);
    const log = path.join(dir, 'host.log');
    await fs.writeFile(log, '');
    await fs.mkdir(path.join(dir, 'project'));
    const credFd = openSync(credentials, 'r');
    const logFd = openSync(log, 'a');
    const stdio: (number | 'pipe' | 'ignore')[] = Array.from({ length: 301 }, () => 'ignore');
    stdio[0] = 'ignore';
    stdio[1] = 'pipe';
    stdio[2] = 'pipe';
    stdio[251] = logFd;
    stdio[300] = credFd;
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TOOLGATE_')) env[k] = v;
    const child = spawn(process.execPath, [compiled('src/main.ts')], { cwd: REPO, env: { ...env, TOOLGATE_ROOT: path.join(dir, 'project'), TOOLGATE_PORT: '0', TOOLGATE_EXEC: 'sandboxed', TOOLGATE_AUDIT_STDOUT: 'false' }, stdio });
    closeSync(credFd);
    closeSync(logFd);
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    try {
      for (let i = 0; i < 1200 && !/listening at http:\/\/127\.0\.0\.1:\d+/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      const port = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      expect(port, out).toBeDefined();
      const res = await fetch(`http://127.0.0.1:${port}/v1/tools/run_command`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ command: 'ls /proc/self/fd | tr "\\n" " "; echo; echo pwned >&251; cat <&300; for f in /proc/self/fd/*; do readlink $f; done' }),
      });
      const d = ((await res.json()) as { data: RunData }).data;
      const fds = (d.stdout.split('\n')[0] ?? '').trim().split(' ');
      const leaked = d.stdout.includes(SECRET) || (await fs.readFile(log, 'utf8')).includes('pwned') || fds.some((f) => Number(f) > 3);
      record('descriptors the service inherited (251: a log, 300: credentials)', leaked, `the command saw descriptors ${fds.join(' ')}`);
      expect(leaked).toBe(false);
      // ls itself holds 3 (its directory); nothing else.
      expect(fds).toEqual(['0', '1', '2', '3']);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('got through: nothing', () => {
    expect(figures.filter((f) => f.leaked)).toEqual([]);
  });
});
