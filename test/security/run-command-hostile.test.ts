// Hostile commands under the real sandbox, through the real HTTP door with a token that has `execute`
// (docs/run-command.md, "Isolation"). Each case is a real command trying to get out; the suite counts what
// got through (it must be nothing) and checks after each case that the service still answers a read.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { hashToken } from '../../src/ops/auth.js';
import { listenOn, makeTempDir } from '../helpers.js';

interface RunData {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  stopped_by: string | null;
  stdout: string;
  stderr: string;
  stdout_bytes: number;
  files_changed: { path: string; change: string }[];
}

const SECRET_ENV = `envsecret_${randomBytes(8).toString('hex')}`;
const FILE_SECRET = `filesecret_${randomBytes(8).toString('hex')}`;
const TOKEN = `tg_runner_${randomBytes(16).toString('hex')}`;
const OUTPUT_MAX = 4096;
const FSIZE = 4 * 1024 * 1024;
const QUOTA = 16 * 1024 * 1024;

let base: string;
let p1: string;
let p2: string;
let app: FastifyInstance;
let url: string;
let listener: net.Server;
let listenerPort: number;
let listenerHits = 0;
const figures: { case: string; leaked: boolean; note: string }[] = [];

async function run(body: Record<string, unknown>): Promise<{ status: number; envelope: Record<string, unknown>; data: RunData }> {
  const res = await fetch(`${url}/v1/projects/p1/tools/run_command`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const envelope = (await res.json()) as Record<string, unknown>;
  return { status: res.status, envelope, data: envelope.data as RunData };
}

/** The service still answers a read after the case. */
async function answersRead(): Promise<boolean> {
  const res = await fetch(`${url}/v1/projects/p1/tools/read_file`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ path: 'hello.txt' }) });
  return res.status === 200;
}

function record(name: string, leaked: boolean, note: string): void {
  figures.push({ case: name, leaked, note });
}

function leaksSecret(d: RunData | undefined): boolean {
  const all = `${d?.stdout ?? ''}${d?.stderr ?? ''}`;
  return all.includes(SECRET_ENV) || all.includes(FILE_SECRET) || all.includes(hashToken(TOKEN));
}

/** Processes on the host whose command line holds `marker` (the sandbox's must all be gone). */
function hostProcesses(marker: string): number {
  const out = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(marker) && !l.includes('ps -eo')).length;
}

async function until(check: () => boolean, tries = 100): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

beforeAll(async () => {
  base = await makeTempDir('toolgate-hostile-exec-');
  const projects = path.join(base, 'projects');
  p1 = path.join(projects, 'p1');
  p2 = path.join(projects, 'p2');
  await fs.mkdir(p1, { recursive: true });
  await fs.mkdir(p2, { recursive: true });
  await fs.writeFile(path.join(p1, 'hello.txt'), 'hello\n');
  await fs.writeFile(path.join(p2, 'secret.txt'), FILE_SECRET);
  await fs.writeFile(path.join(base, 'outside-secret.txt'), FILE_SECRET);
  await fs.writeFile(path.join(base, 'outside-target.txt'), 'unchanged');
  // The tokens file inside the project (the worst place an operator could put it): the sandbox masks it.
  const tokensFile = path.join(p1, 'tokens.yaml');
  await fs.writeFile(tokensFile, `- id: runner\n  sha256: ${hashToken(TOKEN)}\n  projects: ['*']\n  risks: [read, write, execute]\n`);
  const policyFile = path.join(base, 'policy.yaml');
  await fs.writeFile(policyFile, 'rules: []\n');
  // A symlink in the project to a file outside it, planted before the command runs.
  await fs.symlink(path.join(base, 'outside-target.txt'), path.join(p1, 'planted-link'));
  // A set-user-ID root copy of `id` in the project.
  await fs.copyFile('/usr/bin/id', path.join(p1, 'suid-id'));
  await fs.chmod(path.join(p1, 'suid-id'), 0o4755);

  process.env.TOOLGATE_HOSTILE_SECRET = SECRET_ENV;
  const config = loadConfig({
    TOOLGATE_ROOT: p1,
    TOOLGATE_PROJECTS_ROOT: projects,
    TOOLGATE_TOKENS_FILE: tokensFile,
    TOOLGATE_POLICY: policyFile,
    TOOLGATE_AUDIT_STDOUT: 'false',
    TOOLGATE_RATE_LIMIT: '0',
    TOOLGATE_EXEC: 'sandboxed',
    TOOLGATE_EXEC_OUTPUT_MAX_BYTES: String(OUTPUT_MAX),
    TOOLGATE_EXEC_MAX_FILE_BYTES: String(FSIZE),
    TOOLGATE_EXEC_MEMORY_BYTES: String(256 * 1024 * 1024),
    TOOLGATE_EXEC_MAX_PROCESSES: '32',
    TOOLGATE_EXEC_QUOTA_BYTES: String(QUOTA),
    TOOLGATE_EXEC_TMP_BYTES: String(8 * 1024 * 1024),
    TOOLGATE_EXEC_MIN_FREE_BYTES: '0',
  });
  app = await buildApp(config);
  url = await listenOn(app);
  listener = net.createServer((s) => {
    listenerHits++;
    s.end('LISTENER-ANSWER\n');
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  listenerPort = (listener.address() as net.AddressInfo).port;
  // The audit log exists before the cases try to read it.
  expect(await answersRead()).toBe(true);
});

afterAll(async () => {
  delete process.env.TOOLGATE_HOSTILE_SECRET;
  // The figures the report quotes: one line per case.
  console.log(`run_command hostile suite: ${figures.filter((f) => f.leaked).length} of ${figures.length} got through\n${figures.map((f) => `  ${f.leaked ? 'LEAK' : 'held'}  ${f.case}: ${f.note}`).join('\n')}`);
  await app?.close();
  await new Promise((r) => listener?.close(r));
  await fs.rm(base, { recursive: true, force: true });
});

describe('run_command against hostile commands', () => {
  it('cannot read the tokens file, the state directory, the audit log, the policy or another project', async () => {
    const stateDir = path.join(p1, '.toolgate');
    await fs.writeFile(path.join(stateDir, 'marker.txt'), FILE_SECRET);
    const r = await run({
      command: [
        'cat tokens.yaml',
        `cat ${path.join(p1, 'tokens.yaml')}`,
        'ls -la .toolgate; cat .toolgate/marker.txt; cat .toolgate/audit/* 2>&1 | head -c 300',
        `cat ${path.join(stateDir, 'marker.txt')}`,
        `cat ${path.join(base, 'policy.yaml')} ${path.join(base, 'projects', '.toolgate', 'approvals', '*')}`,
        `cat ../p2/secret.txt ${path.join(p2, 'secret.txt')} ${path.join(base, 'outside-secret.txt')}`,
        'grep -rs filesecret_ /workspace /tmp /etc /proc/1/environ 2>/dev/null | head -5',
      ].join('; '),
    });
    const audit = await fs.readdir(path.join(stateDir, 'audit'));
    const leaked = leaksSecret(r.data) || /"request_id"|"hash"/.test(r.data.stdout) || audit.length === 0;
    record('read tokens/state/audit/policy/other project', leaked, `exit ${r.data.exit_code}`);
    expect(leaked).toBe(false);
    expect(await answersRead()).toBe(true);
  });

  it("cannot see the service's environment or its /proc", async () => {
    const r = await run({ command: `env; cat /proc/${process.pid}/environ; cat /proc/1/environ; tr '\\0' '\\n' < /proc/self/environ; ls /proc | head -50; cat /proc/${process.pid}/cmdline` });
    const leaked = leaksSecret(r.data) || r.data.stdout.includes('TOOLGATE_');
    record('service env and /proc/<pid>/environ', leaked, `exit ${r.data.exit_code}`);
    expect(leaked).toBe(false);
    expect(await answersRead()).toBe(true);
  });

  it('cannot write outside /workspace', async () => {
    const marker = `escape-${randomBytes(4).toString('hex')}`;
    const targets = [path.join('/tmp', marker), path.join(base, marker), path.join(p2, marker), `/usr/${marker}`, `/etc/${marker}`];
    const r = await run({ command: targets.map((t) => `echo x > ${t}`).join('; ') + `; echo x > .toolgate/${marker}; echo x > ../${marker}` });
    const written = await Promise.all([...targets, path.join(p1, '.toolgate', marker), path.join(base, 'projects', marker)].map((t) => fs.stat(t).then(() => t, () => null)));
    const leaked = written.some((w) => w !== null);
    record('write outside /workspace', leaked, written.filter(Boolean).join(', ') || `exit ${r.data.exit_code}`);
    expect(leaked).toBe(false);
    expect(await answersRead()).toBe(true);
  });

  it("cannot connect to a listener on 127.0.0.1 or to the service's port", async () => {
    const servicePort = new URL(url).port;
    const py = (port: string | number) => `python3 -c "import socket; s=socket.create_connection(('127.0.0.1', ${port}), 2); print('CONNECTED'); print(s.recv(100))"`;
    const before = listenerHits;
    const r = await run({ command: `${py(listenerPort)}; ${py(servicePort)}; python3 -c "import socket; socket.create_connection(('169.254.169.254', 80), 2); print('CONNECTED')"` });
    const leaked = r.data.stdout.includes('CONNECTED') || listenerHits !== before;
    record('connect to 127.0.0.1 listener, service port, metadata', leaked, r.data.stderr.split('\n').filter((l) => l.includes('Error')).slice(0, 1).join('') || `exit ${r.data.exit_code}`);
    expect(leaked).toBe(false);
    expect(await answersRead()).toBe(true);
  });

  it("with the network on (TOOLGATE_EXEC_NETWORK), cannot reach the host's loopback, the service's port on any host address or the metadata address", async () => {
    const tokensFile = path.join(p1, 'tokens.yaml');
    const netApp = await buildApp(
      loadConfig({ TOOLGATE_ROOT: p1, TOOLGATE_PROJECTS_ROOT: path.join(base, 'projects'), TOOLGATE_TOKENS_FILE: tokensFile, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_EXEC: 'sandboxed', TOOLGATE_EXEC_NETWORK: 'true', TOOLGATE_EXEC_MIN_FREE_BYTES: '0' }),
    );
    try {
      await netApp.listen({ host: '0.0.0.0', port: 0 });
      const netPort = (netApp.server.address() as net.AddressInfo).port;
      const host = Object.values(os.networkInterfaces()).flatMap((l) => l ?? []).find((a) => !a.internal && a.family === 'IPv4')?.address ?? '127.0.0.1';
      const targets: [string, number][] = [['127.0.0.1', listenerPort], ['10.0.2.2', listenerPort], ['127.0.0.1', netPort], ['10.0.2.2', netPort], [host, netPort], [host, Number(new URL(url).port)], ['169.254.169.254', 80]];
      const py = ([h, p]: [string, number]) => `python3 -c "import socket; socket.create_connection(('${h}', ${p}), 2); print('CONNECTED ${h}:${p}')"`;
      const before = listenerHits;
      const res = await fetch(`http://127.0.0.1:${netPort}/v1/projects/p1/tools/run_command`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ command: `nft flush ruleset; ${targets.map(py).join('; ')}; grep -c tap0 /proc/net/route` }) });
      const d = ((await res.json()) as { data: RunData }).data;
      const leaked = d.stdout.includes('CONNECTED') || listenerHits !== before || !/^[1-9]/m.test(d.stdout) || !/Operation not permitted/.test(d.stderr);
      record('network on: host loopback, service port on host addresses, metadata', leaked, `${d.stderr.split('\n').filter((l) => /Errno|timed out/.test(l)).length} of ${targets.length} connections refused, nft flush refused`);
      expect(leaked).toBe(false);
    } finally {
      await netApp.close();
    }
    expect(await answersRead()).toBe(true);
  });

  it('cannot signal or ptrace the service', async () => {
    const r = await run({ command: `kill -9 ${process.pid}; kill -STOP ${process.pid}; strace -p ${process.pid} -o /dev/null & sleep 1; kill %1; gdb -p ${process.pid} -batch -ex 'call (int)kill(${process.pid}, 9)' 2>&1 | tail -2; echo done` });
    const leaked = !(await answersRead());
    record('signal or ptrace the service', leaked, `exit ${r.data.exit_code}`);
    expect(leaked).toBe(false);
  });

  it('a fork bomb stops at the process limit and dies at the time limit', async () => {
    const marker = `bomb${randomBytes(3).toString('hex')}`;
    await fs.writeFile(path.join(p1, `${marker}.sh`), `f() { f | f & }; f; sleep 30\n`);
    const r = await run({ command: `sh ${marker}.sh`, timeout_s: 3 });
    const gone = await until(() => hostProcesses(marker) === 0);
    const leaked = !gone || !(await answersRead());
    record('fork bomb', leaked, `stopped_by ${r.data.stopped_by}, host processes left ${hostProcesses(marker)}`);
    expect(leaked).toBe(false);
    expect(r.envelope.status).not.toBe('error');
  });

  it('a memory hog fails at its memory limit', async () => {
    const r = await run({ command: `python3 -c "a=[]\nwhile True: a.append(bytearray(10**7))"`, timeout_s: 20 });
    const leaked = r.data.exit_code === 0 || r.data.timed_out;
    record('memory hog', leaked, `exit ${r.data.exit_code}, ${r.data.stderr.trim().split('\n').pop() ?? ''}`);
    expect(leaked).toBe(false);
    expect(await answersRead()).toBe(true);
  });

  it('endless output is kept to its head and tail', async () => {
    const r = await run({ command: 'yes', timeout_s: 2 });
    const leaked = r.data.stdout.length > OUTPUT_MAX + 100 || !r.data.timed_out;
    record('endless output', leaked, `${r.data.stdout_bytes} bytes written, ${r.data.stdout.length} kept`);
    expect(leaked).toBe(false);
    expect(await answersRead()).toBe(true);
  });

  it('a sleep past the limit with children that ignore SIGTERM: the whole tree dies', async () => {
    const marker = `hang${randomBytes(3).toString('hex')}`;
    // A sleep of its own length, so that no other process of the host (a plain `sleep 300`) is counted as the command's.
    const sleep = `sleep 300.${randomBytes(3).readUIntBE(0, 3)}`;
    await fs.writeFile(path.join(p1, `${marker}.sh`), `trap '' TERM HUP\n(trap '' TERM HUP; ${sleep}) &\n(setsid sh -c "trap '' TERM HUP; ${sleep}" </dev/null >/dev/null 2>&1 &)\n${sleep}\n`);
    const r = await run({ command: `sh ${marker}.sh`, timeout_s: 1 });
    expect(r.data.timed_out).toBe(true);
    const gone = await until(() => hostProcesses(marker) === 0 && hostProcesses(sleep) === 0);
    record('sleep past the limit, children ignoring SIGTERM', !gone, `timed_out ${r.data.timed_out}`);
    expect(gone).toBe(true);
    expect(await answersRead()).toBe(true);
  });

  it('a symlink in the project pointing outside is not written through', async () => {
    const r = await run({ command: `echo pwned > planted-link; ln -s ${path.join(base, 'outside-target.txt')} made-link; echo pwned > made-link; cat planted-link` });
    const content = await fs.readFile(path.join(base, 'outside-target.txt'), 'utf8');
    const leaked = content !== 'unchanged';
    record('symlink pointing outside, written through', leaked, `exit ${r.data.exit_code}`);
    expect(leaked).toBe(false);
    expect(await answersRead()).toBe(true);
  });

  it('a set-user-ID binary gains nothing, and one the command makes loses its bit', async () => {
    const r = await run({ command: './suid-id -u; mount -t tmpfs none /tmp; grep NoNewPrivs /proc/self/status; unshare -U true && echo NESTED; cp /usr/bin/id made-suid; chmod 6755 made-suid' });
    const made = await fs.stat(path.join(p1, 'made-suid'));
    const leaked = /^0$/m.test(r.data.stdout) || r.data.stdout.includes('NESTED') || (made.mode & 0o6000) !== 0;
    record('set-user-ID binary, mount, nested namespace', leaked, r.data.stdout.trim().replace(/\n/g, ' | '));
    expect(leaked).toBe(false);
    expect(await answersRead()).toBe(true);
  });

  it('filling the disk stops at the file size limit, the /tmp size and the project quota', async () => {
    const one = await run({ command: 'dd if=/dev/zero of=big.bin bs=1M count=64 2>&1; ls -l big.bin; dd if=/dev/zero of=/tmp/big bs=1M count=64 2>&1 | tail -1' });
    const big = await fs.stat(path.join(p1, 'big.bin'));
    const many = await run({ command: 'i=0; while true; do head -c 3000000 /dev/zero > fill$i.bin; i=$((i+1)); sleep 0.1; done', timeout_s: 60 });
    let filled = 0;
    for (const f of await fs.readdir(p1)) if (f.startsWith('fill')) filled += (await fs.stat(path.join(p1, f))).size;
    const leaked = big.size > FSIZE || many.data.stopped_by !== 'quota_exceeded';
    record('fill the disk', leaked, `one file stopped at ${big.size} bytes; many files stopped by ${many.data.stopped_by} at ${filled} bytes (quota ${QUOTA})`);
    expect(one.envelope.status).not.toBe('error');
    expect(leaked).toBe(false);
    expect(await answersRead()).toBe(true);
  });

  it('got through: nothing', () => {
    expect(figures.filter((f) => f.leaked)).toEqual([]);
  });
});
