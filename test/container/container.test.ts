// The container image, built and run for real (`npm run test:container`, also the last step of .ci/run;
// not part of `npm test`). It builds the stand-in base image (../shared/container/make-base-image.sh),
// builds toolgate's image from the Dockerfile with podman (../shared/container/podman.sh, --format docker
// so the HEALTHCHECK is kept), runs it the way the README's "Run the container" says (read-only root, tmpfs /tmp, a host
// directory owned by uid 1000 at /workspace, a read-only tokens file) on the host network, and drives
// it over HTTP from the host: write, read, edit, a CONFLICT, /metrics, /readyz; then the process's
// identity and file-system limits, and SIGTERM -> a clean exit 0 with the audit chain on the volume.
// A second container runs with TOOLGATE_EXEC=sandboxed and the security settings the Helm chart gives a pod
// with exec.enabled (read from helm/toolgate/values.yaml), and runs commands for real in bubblewrap, with
// the network on; without those settings the service refuses to start and says why.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { hashToken } from '../../src/ops/auth.js';
import { verifyAuditFile } from '../../src/ops/audit-verify.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SHARED = path.resolve(REPO, '../shared/container');
const PODMAN = path.join(SHARED, 'podman.sh');
const MAKE_BASE = path.join(SHARED, 'make-base-image.sh');
const IMAGE = 'toolgate:test';
const NODE_MAJOR = '24';
const INSTANCE = 'container-test';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; output is kept (and appended to `log` when given). */
function run(cmd: string, args: string[], opts: { cwd?: string; timeoutMs?: number; log?: string } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const logged: Promise<void>[] = [];
    const keep = (d: Buffer, into: 'out' | 'err') => {
      if (into === 'out') stdout += d.toString();
      else stderr += d.toString();
      if (opts.log) logged.push(fs.appendFile(opts.log, d));
    };
    child.stdout.on('data', (d: Buffer) => keep(d, 'out'));
    child.stderr.on('data', (d: Buffer) => keep(d, 'err'));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${cmd}: ${err.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      void Promise.all(logged).then(() => resolve({ code, stdout, stderr }));
    });
  });
}

const tail = (text: string, lines = 40) => text.trimEnd().split('\n').slice(-lines).join('\n');

/** podman through shared/container/podman.sh (runc runtime, explicit ulimits); throws on a non-zero exit. */
async function podman(args: string[], timeoutMs = 60_000): Promise<string> {
  const r = await run(PODMAN, args, { timeoutMs });
  if (r.code !== 0) throw new Error(`podman ${args.join(' ')} exited ${r.code}:\n${tail(r.stderr || r.stdout)}`);
  return r.stdout.trim();
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

interface Envelope {
  status: string;
  data: Record<string, unknown> & { version?: { sha256: string } };
  error?: { code: string; message: string };
}

const token = `tg_container_${randomBytes(16).toString('hex')}`;
const name = `toolgate-test-${process.pid}-${randomBytes(3).toString('hex')}`;
let work = '';
let ws = '';
let port = 0;
let base = '';
let started = false;

async function call(tool: string, body: unknown, auth = true): Promise<{ status: number; body: Envelope }> {
  const res = await fetch(`${base}/v1/tools/${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Envelope };
}

async function logs(): Promise<string> {
  const r = await run(PODMAN, ['logs', name], { timeoutMs: 20_000 });
  return `${r.stdout}${r.stderr}`;
}

/** The node process inside the container (tini is PID 1): its PID in the container's namespace. */
async function nodePid(): Promise<number> {
  const out = await podman(['top', name, 'pid', 'args']);
  const line = out.split('\n').find((l) => /\bnode dist\/main\.js/.test(l) && !/tini/.test(l));
  if (!line) throw new Error(`no node process in the container:\n${out}`);
  return Number(line.trim().split(/\s+/)[0]);
}

async function exec(args: string[], user?: string): Promise<Ran> {
  return run(PODMAN, ['exec', ...(user ? ['--user', user] : []), name, ...args], { timeoutMs: 30_000 });
}

beforeAll(async () => {
  for (const f of [PODMAN, MAKE_BASE]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: the container test needs the shared/ checkout beside the repository (../shared).`);
  }
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-container-'));
  await fs.chmod(work, 0o755);
  const buildLog = path.join(work, 'build.log');

  // 1. The base image (a local stand-in for node:24-bookworm-slim; a no-op when it exists).
  const baseImage = await run(MAKE_BASE, [NODE_MAJOR], { timeoutMs: 15 * 60_000, log: buildLog });
  if (baseImage.code !== 0) throw new Error(`make-base-image.sh ${NODE_MAJOR} failed (${baseImage.code}):\n${tail(await fs.readFile(buildLog, 'utf8'), 60)}`);

  // 2. toolgate's image. --format docker keeps the HEALTHCHECK (OCI images have no such field).
  const previous = await run(PODMAN, ['image', 'inspect', '--format', '{{.Id}}', IMAGE], { timeoutMs: 30_000 });
  const t0 = Date.now();
  const build = await run(PODMAN, ['build', '--pull=never', '--network=host', '--format', 'docker', '-t', IMAGE, '.'], { timeoutMs: 15 * 60_000, log: buildLog });
  if (build.code !== 0) throw new Error(`podman build failed (${build.code}):\n${tail(await fs.readFile(buildLog, 'utf8'), 80)}`);
  console.log(`[container] built ${IMAGE} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // The image this build replaced would stay behind untagged on every change of the sources: drop it.
  const oldId = previous.code === 0 ? previous.stdout.trim() : '';
  if (oldId && oldId !== (await podman(['image', 'inspect', '--format', '{{.Id}}', IMAGE]))) await run(PODMAN, ['rmi', oldId], { timeoutMs: 60_000 });

  // 3. A workspace directory owned by the image's user, and a tokens file readable by it.
  ws = path.join(work, 'ws');
  await fs.mkdir(ws, { mode: 0o755 });
  await fs.chown(ws, 1000, 1000);
  const tokens = path.join(work, 'tokens.yaml');
  await fs.writeFile(tokens, `- id: container-agent\n  sha256: ${hashToken(token)}\n  projects: ["*"]\n  risks: [read, write, destructive]\n`, { mode: 0o644 });

  port = await freePort();
  base = `http://127.0.0.1:${port}`;
  await podman([
    'run', '-d', '--name', name,
    '--read-only', '--tmpfs', '/tmp:rw,size=64m',
    '--network=host',
    '-v', `${ws}:/workspace`,
    '-v', `${tokens}:/etc/toolgate/tokens.yaml:ro`,
    '-e', 'TOOLGATE_TOKENS_FILE=/etc/toolgate/tokens.yaml',
    '-e', `TOOLGATE_PORT=${port}`,
    '-e', `TOOLGATE_INSTANCE_ID=${INSTANCE}`,
    '-e', 'TOOLGATE_AUDIT_STDOUT=false',
    IMAGE,
  ]);
  started = true;

  // 4. Ready: /readyz answers 200 (the volume is writable).
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = await podman(['inspect', '--format', '{{.State.Status}}', name]);
    if (state !== 'running') throw new Error(`the container is ${state} before it was ready:\n${tail(await logs())}`);
    const ok = await fetch(`${base}/readyz`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`/readyz not 200 within 30 s:\n${tail(await logs())}`);
    await sleep(200);
  }
});

afterAll(async () => {
  if (started) {
    const r = await run(PODMAN, ['rm', '-f', '-t', '0', name], { timeoutMs: 60_000 });
    if (r.code !== 0) console.error(`[container] could not remove ${name}: ${r.stderr}`);
  }
  // The volume's files belong to uid 1000; the test runs as root (podman needs it), so rm works.
  if (work) await fs.rm(work, { recursive: true, force: true });
});

describe('toolgate container image', () => {
  it('keeps the HEALTHCHECK (/livez), runs as user node, and reports its size', async () => {
    const [image] = JSON.parse(await podman(['image', 'inspect', IMAGE])) as {
      Size: number;
      Healthcheck?: { Test?: string[] };
      Config?: { User?: string; Entrypoint?: string[] };
    }[];
    expect(image).toBeDefined();
    console.log(`[container] image ${IMAGE}: ${image!.Size} bytes (${(image!.Size / 1e6).toFixed(0)} MB)`);
    expect(image!.Size).toBeGreaterThan(0);
    expect(image!.Healthcheck?.Test?.join(' ')).toMatch(/\/livez/);
    expect(image!.Config?.User).toBe('node');
    expect(image!.Config?.Entrypoint).toEqual(['/usr/bin/tini', '--']);
    // The image's own HEALTHCHECK command passes against the running service.
    const hc = await run(PODMAN, ['healthcheck', 'run', name], { timeoutMs: 30_000 });
    expect(hc.code, `podman healthcheck run: ${hc.stdout}${hc.stderr}`).toBe(0);
  });

  it('serves the tools over HTTP from the host: auth, write, read, edit, CONFLICT', async () => {
    const anonymous = await call('read_file', { path: 'notes.txt' }, false);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error?.code).toBe('UNAUTHORIZED');

    const created = await call('write_file', { path: 'docs/notes.txt', content: 'alpha\nbeta\n' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.data.applied).toBe(true);

    const read = await call('read_file', { path: 'docs/notes.txt' });
    expect(read.status).toBe(200);
    expect(read.body.data.content).toBe('alpha\nbeta\n');
    const v1 = read.body.data.version?.sha256;
    expect(v1).toMatch(/^[0-9a-f]{64}$/);

    const edited = await call('edit_file', { path: 'docs/notes.txt', old_text: 'beta', new_text: 'gamma', expected_sha256: v1 });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.data.applied).toBe(true);

    // A writer that still holds the old version loses.
    const stale = await call('write_file', { path: 'docs/notes.txt', content: 'lost update\n', expected_sha256: v1 });
    expect(stale.status).toBe(409);
    expect(stale.body.error?.code).toBe('CONFLICT');

    // The write went to the volume on the host, owned by the container's user.
    const onHost = path.join(ws, 'docs/notes.txt');
    expect(await fs.readFile(onHost, 'utf8')).toBe('alpha\ngamma\n');
    expect((await fs.stat(onHost)).uid).toBe(1000);
    // The sandbox holds inside the container too.
    const escape = await call('write_file', { path: '../../etc/evil', content: 'x' });
    expect(escape.status).toBeGreaterThanOrEqual(400);
    expect(escape.body.status).toBe('error');
  });

  it('serves /metrics, /readyz and /healthz without a token', async () => {
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toMatch(/^toolgate_tool_calls_total\{tool="write_file",status="success"\} [1-9]/m);
    expect(text).toMatch(/^toolgate_tool_calls_total\{tool="edit_file",status="success"\} 1$/m);
    expect(text).toMatch(/^toolgate_conflicts_total\{tool="write_file"\} 1$/m);
    // A request without a token is refused at the /v1 door, before any tool runs: HTTP metrics only.
    expect(text).toMatch(/^toolgate_http_request_duration_seconds_count\{method="POST",route="\/v1\/tools\/read_file",status_code="401"\} 1$/m);
    expect(text).toMatch(/^toolgate_http_request_duration_seconds_count\{method="POST",route="\/v1\/tools\/write_file",status_code="409"\} 1$/m);
    expect(text).toMatch(/^toolgate_build_info\{version="[^"]+",node="v24\./m);

    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    const health = (await (await fetch(`${base}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'ok', instance: INSTANCE, auth: 'tokens', workspace: { writable: true } });
  });

  it('runs node as uid/gid 1000 with no capabilities, under tini', async () => {
    expect((await exec(['id', '-u'])).stdout.trim()).toBe('1000');
    const pid = await nodePid();
    expect(pid).not.toBe(1); // tini is PID 1 and forwards signals
    const status = (await exec(['cat', `/proc/${pid}/status`])).stdout;
    expect(status).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
    expect(status).toMatch(/^Gid:\s+1000\s+1000\s+1000\s+1000$/m);
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    const init = (await exec(['cat', '/proc/1/cmdline'])).stdout.split('\0')[0];
    expect(init).toBe('/usr/bin/tini');
  });

  it('cannot write outside the volume: the root file system is read-only', async () => {
    for (const target of ['/app/x', '/etc/x', '/usr/local/x', '/home/node/x']) {
      const r = await exec(['sh', '-c', `touch ${target}`]);
      expect(r.code, `touch ${target} should fail`).not.toBe(0);
      expect(r.stderr).toMatch(/Read-only file system/);
    }
    // Read-only, not just permissions: root inside the container cannot write /app either.
    const asRoot = await exec(['sh', '-c', 'touch /app/x'], '0');
    expect(asRoot.code).not.toBe(0);
    expect(asRoot.stderr).toMatch(/Read-only file system/);

    const inVolume = await exec(['sh', '-c', 'touch /workspace/probe && rm /workspace/probe']);
    expect(inVolume.code, inVolume.stderr).toBe(0);
    const inTmp = await exec(['sh', '-c', 'touch /tmp/probe && rm /tmp/probe']);
    expect(inTmp.code, inTmp.stderr).toBe(0);
  });

  it('SIGTERM (podman stop): shuts down cleanly with exit code 0; the audit chain on the volume verifies', async () => {
    const stop = await run(PODMAN, ['stop', '-t', '20', name], { timeoutMs: 60_000 });
    expect(stop.code, stop.stderr).toBe(0);
    const exit = await podman(['inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', name]);
    const out = await logs();
    expect(exit, tail(out)).toBe('exited 0');
    expect(out).toMatch(/"signal":"SIGTERM"/);
    expect(out).toMatch(/shut down cleanly/);

    const auditDir = path.join(ws, '.toolgate', 'audit');
    const files = (await fs.readdir(auditDir)).filter((f) => f.startsWith(`${INSTANCE}-`));
    expect(files.length).toBeGreaterThan(0);
    let lines = 0;
    for (const f of files) {
      const result = await verifyAuditFile(path.join(auditDir, f));
      expect(result, f).toMatchObject({ ok: true });
      lines += result.lines;
    }
    // One line per tool call: the request without a token (refused at the door), write, read, edit, the
    // CONFLICT and the refused escape.
    expect(lines).toBe(6);
  });
});

interface ChartSecurity {
  securityContext: { runAsUser: number; runAsGroup: number; readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean; capabilities: { drop: string[]; add?: string[] } };
  exec: { seccompProfile: { type: string }; appArmorProfile: { type: string }; procMount: string };
}

/**
 * The podman flags that give a container what the chart gives the pod with exec.enabled (its
 * securityContext with exec's seccomp, AppArmor and procMount settings): non-root, read-only, no
 * capabilities, no privilege escalation, and the three settings the sandbox needs (docs/run-command.md).
 */
/**
 * The TUN device to give the container: podman passes a device with its host node's mode, and a host whose
 * /dev/net/tun is root's alone (0600, made without udev) would refuse the container's uid 1000. The test then
 * makes a node of its own for the same device, 0666 as udev makes it, in its work directory.
 */
async function tunDevice(): Promise<string> {
  const st = await fs.stat('/dev/net/tun');
  if ((st.mode & 0o006) === 0o006) return '/dev/net/tun';
  const own = path.join(work, 'tun');
  const made = await run('mknod', ['-m', '0666', own, 'c', String(Math.floor(st.rdev / 256)), String(st.rdev % 256)]);
  if (made.code !== 0) throw new Error(`cannot make a TUN node for the container: ${made.stderr}`);
  return own;
}

async function chartExecFlags(): Promise<string[]> {
  const values = parseYaml(await fs.readFile(path.join(REPO, 'helm/toolgate/values.yaml'), 'utf8')) as ChartSecurity;
  const sc = values.securityContext;
  const flags = ['--user', `${sc.runAsUser}:${sc.runAsGroup}`];
  if (sc.readOnlyRootFilesystem) flags.push('--read-only');
  flags.push(...sc.capabilities.drop.flatMap((c) => ['--cap-drop', c]), ...(sc.capabilities.add ?? []).flatMap((c) => ['--cap-add', c]));
  if (!sc.allowPrivilegeEscalation) flags.push('--security-opt', 'no-new-privileges');
  if (values.exec.seccompProfile.type === 'Unconfined') flags.push('--security-opt', 'seccomp=unconfined');
  if (values.exec.appArmorProfile.type === 'Unconfined') flags.push('--security-opt', 'apparmor=unconfined');
  if (values.exec.procMount === 'Unmasked') flags.push('--security-opt', 'unmask=/proc/*');
  return flags;
}

describe('run_command in the container, with the chart\'s exec settings', () => {
  const execName = `${name}-exec`;
  const runner = `tg_container_runner_${randomBytes(16).toString('hex')}`;
  let execWs = '';
  let execBase = '';
  let execStarted = false;

  const execLogs = async () => {
    const r = await run(PODMAN, ['logs', execName], { timeoutMs: 20_000 });
    return `${r.stdout}${r.stderr}`;
  };

  async function runCommand(body: unknown): Promise<{ status: number; body: Envelope }> {
    const res = await fetch(`${execBase}/v1/tools/run_command`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${runner}` }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Envelope };
  }

  beforeAll(async () => {
    execWs = path.join(work, 'exec-ws');
    await fs.mkdir(execWs, { mode: 0o755 });
    await fs.chown(execWs, 1000, 1000);
    const tokens = path.join(work, 'exec-tokens.yaml');
    await fs.writeFile(tokens, `- id: container-runner\n  sha256: ${hashToken(runner)}\n  projects: ["*"]\n  risks: [read, write, execute]\n`, { mode: 0o644 });
    const execPort = await freePort();
    execBase = `http://127.0.0.1:${execPort}`;
    const common = [
      '--tmpfs', '/tmp:rw,size=64m',
      '--network=host',
      '-v', `${execWs}:/workspace`,
      '-v', `${tokens}:/etc/toolgate/tokens.yaml:ro`,
      '-e', 'TOOLGATE_TOKENS_FILE=/etc/toolgate/tokens.yaml',
      '-e', `TOOLGATE_PORT=${execPort}`,
      '-e', 'TOOLGATE_AUDIT_STDOUT=false',
      '-e', 'TOOLGATE_EXEC=sandboxed',
    ];

    // Without the chart's settings: the start-up probe fails and the service refuses to start, naming why.
    const refused = await run(PODMAN, ['run', '--rm', '--read-only', ...common, IMAGE], { timeoutMs: 60_000 });
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/TOOLGATE_EXEC=sandboxed: bwrap could not create the sandbox/);

    // The network needs the TUN device for slirp4netns (docs/run-command.md, "Deployment").
    await podman(['run', '-d', '--name', execName, ...(await chartExecFlags()), '--device', `${await tunDevice()}:/dev/net/tun`, ...common, '-e', 'TOOLGATE_EXEC_NETWORK=true', IMAGE]);
    execStarted = true;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const state = await podman(['inspect', '--format', '{{.State.Status}}', execName]);
      if (state !== 'running') throw new Error(`the exec container is ${state} before it was ready:\n${tail(await execLogs())}`);
      if (await fetch(`${execBase}/readyz`).then((r) => r.status === 200, () => false)) break;
      if (Date.now() > deadline) throw new Error(`/readyz not 200 within 30 s:\n${tail(await execLogs())}`);
      await sleep(200);
    }
  });

  afterAll(async () => {
    if (execStarted) await run(PODMAN, ['rm', '-f', '-t', '0', execName], { timeoutMs: 60_000 });
  });

  it('runs a command in bubblewrap: the project at /workspace, uid 1000, its own PID namespace, the file on the volume', async () => {
    const r = await runCommand({ command: 'echo made > made.txt; id -u; pwd; cat /proc/1/cmdline | tr "\\0" " "; echo; ls /proc | grep -c "^[0-9]"' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.status).toBe('success');
    const data = r.body.data as { exit_code: number; stdout: string; files_changed: { path: string; change: string }[] };
    expect(data.exit_code).toBe(0);
    const [uid, cwd, init] = data.stdout.split('\n');
    expect(uid).toBe('1000');
    expect(cwd).toBe('/workspace');
    // PID 1 is bwrap's own init, not tini or the service: the service's processes are not visible.
    expect(init).not.toMatch(/tini|node/);
    expect(data.files_changed).toEqual([expect.objectContaining({ path: 'made.txt', change: 'created' })]);
    expect(await fs.readFile(path.join(execWs, 'made.txt'), 'utf8')).toBe('made\n');
    expect((await fs.stat(path.join(execWs, 'made.txt'))).uid).toBe(1000);
  });

  it("a command's change lands with its backup, and undo_edit takes it back (the overlay works under the chart's settings)", async () => {
    await fs.writeFile(path.join(execWs, 'config.txt'), 'v1\n');
    await fs.chown(path.join(execWs, 'config.txt'), 1000, 1000);
    const r = await runCommand({ command: 'sed -i s/v1/v2/ config.txt; grep " /workspace " /proc/self/mountinfo' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const data = r.body.data as { stdout: string; files_changed: { path: string; change: string; backup_id: string | null }[] };
    expect(data.stdout).toMatch(/ overlay overlay .*lowerdir=lower/);
    expect(data.files_changed).toEqual([expect.objectContaining({ path: 'config.txt', change: 'changed', backup_id: expect.any(String) })]);
    expect(await fs.readFile(path.join(execWs, 'config.txt'), 'utf8')).toBe('v2\n');
    const res = await fetch(`${execBase}/v1/tools/str_replace_based_edit_tool`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${runner}` }, body: JSON.stringify({ command: 'undo_edit', path: 'config.txt' }) });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await fs.readFile(path.join(execWs, 'config.txt'), 'utf8')).toBe('v1\n');
  });

  it('gives the command a network that refuses the service\'s port and the metadata address', async () => {
    const port = new URL(execBase).port;
    const probe = (host: string, p: string | number) =>
      `node -e "require('net').connect(${p}, '${host}').on('connect', () => { console.log('OPEN ${host}'); process.exit(0); }).on('error', (e) => { console.log('SHUT ${host}', e.code); process.exit(0); })"`;
    // The container shares the host's network here: the service listens on the host's address too.
    const hostAddress = Object.values(os.networkInterfaces()).flatMap((l) => l ?? []).find((a) => !a.internal && a.family === 'IPv4')?.address ?? '127.0.0.1';
    const r = await runCommand({ command: `grep -c tap0 /proc/net/route; ${probe('127.0.0.1', port)}; ${probe('10.0.2.2', port)}; ${probe(hostAddress, port)}; ${probe('169.254.169.254', 80)}`, timeout_s: 20 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const out = (r.body.data as { stdout: string }).stdout;
    expect(Number(out.split('\n')[0])).toBeGreaterThan(0);
    expect(out).not.toContain('OPEN');
    expect(out.match(/SHUT/g)?.length).toBe(4);
  });
});
