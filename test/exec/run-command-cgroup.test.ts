// run_command's per-run cgroups (docs/run-command.md, "Isolation"), through the real HTTP door: the total
// memory of a run is capped by its cgroup, not only each process by RLIMIT_DATA; and a service running as
// root on a host with only cgroup v2 starts, creating each run's cgroup there with pids.max and memory.max.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planCgroups, SYSTEM_CGROUP_FS } from '../../src/exec/cgroup.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { signalSandbox, until } from './host-processes.js';

interface RunData {
  exit_code: number | null;
  stdout: string;
  stderr: string;
}

const MiB = 1024 * 1024;

describe('run_command memory cap on this host', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed', TOOLGATE_EXEC_MEMORY_BYTES: String(96 * MiB) });
  });
  afterAll(async () => t.close());

  it('this host lets the service make a memory cgroup per run (v2, or v1 here)', () => {
    const { plan, why } = planCgroups(SYSTEM_CGROUP_FS);
    expect(plan, why).not.toBeNull();
    expect(plan?.memory, JSON.stringify(plan)).toBeTruthy();
  });

  it('caps the total of a run: four processes of 40 MiB each do not all fit in 96 MiB', async () => {
    // Each process stays under its own RLIMIT_DATA (96 MiB); together they hold 160 MiB and more.
    const hold = `python3 -c "b = bytearray(40 * 2**20); b[::4096] = b'x' * len(b[::4096]); import time; time.sleep(2); print('held')"`;
    const r = await t.call('run_command', { command: `for i in 1 2 3 4; do ${hold} & done; wait; echo end`, timeout_s: 30 });
    const data = r.body.data as RunData;
    expect(r.body.status, JSON.stringify(r.body)).not.toBe('error');
    expect(data.stdout).toContain('end');
    const held = data.stdout.split('\n').filter((l) => l === 'held').length;
    expect(held, data.stdout + data.stderr).toBeLessThan(4);
    // One alone fits: the cap is on the total, not on each.
    const one = await t.call('run_command', { command: hold, timeout_s: 30 });
    expect((one.body.data as RunData).stdout).toContain('held');
  });
});

describe('run_command as root on a host with only cgroup v2', () => {
  let t: TestApp;
  let tree: string;
  beforeAll(async () => {
    // A v2-only layout (no v1 hierarchies) whose root is this process's cgroup, as in a container.
    tree = await makeTempDir('toolgate-cgroup2-');
    await fs.writeFile(path.join(tree, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n');
    await fs.writeFile(path.join(tree, 'cgroup.subtree_control'), '');
    await fs.writeFile(path.join(tree, 'cgroup.procs'), '');
    const self = path.join(tree, 'self-cgroup');
    await fs.writeFile(self, '0::/\n');
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed', TOOLGATE_EXEC_MAX_PROCESSES: '50', TOOLGATE_EXEC_MEMORY_BYTES: String(200 * MiB) }, { cgroupFs: { root: tree, selfCgroup: self } });
  });
  afterAll(async () => {
    await t?.close();
    if (tree) await fs.rm(tree, { recursive: true, force: true });
  });

  it('starts (it used to refuse, finding no v1 pids hierarchy) and gives each run a cgroup with pids.max and memory.max', async () => {
    expect(process.getuid?.()).toBe(0);
    expect((await fs.readFile(path.join(tree, 'cgroup.subtree_control'), 'utf8')).trim()).toBe('+pids +memory');
    const marker = `cgroupwait${process.pid}`;
    const call = t.call('run_command', { command: `while [ ! -e /tmp/go ]; do sleep 0.05; done; echo went # ${marker}`, timeout_s: 30 });
    const baseName = (await fs.readdir(tree)).find((e) => e.startsWith(`toolgate-${process.pid}-`));
    expect(baseName).toBeDefined();
    const base = path.join(tree, baseName as string);
    let run = '';
    for (let i = 0; i < 200 && !run; i++) {
      run = (await fs.readdir(base).catch(() => [])).find((e) => e.startsWith('run-')) ?? '';
      if (!run) await new Promise((r) => setTimeout(r, 50));
    }
    expect(run).not.toBe('');
    const dir = path.join(base, run);
    expect(await fs.readFile(path.join(dir, 'pids.max'), 'utf8')).toBe('53');
    expect(await fs.readFile(path.join(dir, 'memory.max'), 'utf8')).toBe(String(200 * MiB));
    // The run's first process joined it before it became bwrap.
    for (let i = 0; i < 100 && !(await fs.readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '')); i++) await new Promise((r) => setTimeout(r, 50));
    expect((await fs.readFile(path.join(dir, 'cgroup.procs'), 'utf8')).trim()).toMatch(/^\d+$/);
    expect(await until(() => signalSandbox(marker, 'go'), 200)).toBe(true);
    const r = await call;
    expect((r.body.data as RunData).stdout).toBe('went\n');
  });
});
