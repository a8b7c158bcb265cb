// Per-run cgroups (docs/run-command.md, "Isolation"): where the service can create them, each run gets its
// own cgroup whose pids.max bounds its processes and whose memory limit bounds the total memory of all its
// processes. cgroup v2 (the unified hierarchy, pure or hybrid) first, the v1 pids and memory controllers
// otherwise. As root a pids cgroup is required (the kernel does not apply RLIMIT_NPROC to root's user
// namespaces); otherwise a run without one is bounded by rlimits only.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/** Where the cgroup file systems and this process's own cgroups are read (tests point it at a tree of their own). */
export interface CgroupFs {
  root: string;
  selfCgroup: string;
}

export const SYSTEM_CGROUP_FS: CgroupFs = { root: '/sys/fs/cgroup', selfCgroup: '/proc/self/cgroup' };

/** Where the runs' cgroups are created, and which controllers each has. */
export type CgroupPlan =
  | { kind: 'v2'; base: string; pids: boolean; memory: boolean }
  | { kind: 'v1'; pids: string | null; memory: string | null };

/** One base per app (a process may hold several apps, each releasing its own base at close). */
const baseName = () => `toolgate-${process.pid}-${randomBytes(3).toString('hex')}`;

const errCode = (e: unknown) => (e as NodeJS.ErrnoException).code ?? 'error';

/** This process's cgroup paths: the v2 one ('' key) and one per v1 controller. */
function ownPaths(fs: CgroupFs): Map<string, string> {
  const out = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(fs.selfCgroup, 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(\/.*)$/.exec(line);
    if (!m) continue;
    const [, controllers = '', p = '/'] = m;
    if (controllers === '') out.set('', p);
    for (const c of controllers.split(',')) if (c) out.set(c, p);
  }
  return out;
}

function readWords(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * Prepares cgroup v2 under this process's own cgroup: the controllers enabled for its children (when the
 * cgroup holds processes the kernel refuses that, so they are first moved into a leaf `toolgate-service`,
 * as a delegated unit is expected to do), then a base cgroup for the runs.
 */
function planV2(fs: CgroupFs, own: Map<string, string>): CgroupPlan | string {
  const mount = existsSync(path.join(fs.root, 'cgroup.controllers')) ? fs.root : existsSync(path.join(fs.root, 'unified', 'cgroup.controllers')) ? path.join(fs.root, 'unified') : null;
  const rel = own.get('');
  if (!mount || rel === undefined) return 'no cgroup v2 hierarchy';
  const dir = path.join(mount, rel);
  const available = readWords(path.join(dir, 'cgroup.controllers'));
  const wanted = ['pids', 'memory'].filter((c) => available.includes(c));
  if (wanted.length === 0) return `cgroup v2 at ${dir} offers neither the pids nor the memory controller`;
  const enable = () => {
    const on = readWords(path.join(dir, 'cgroup.subtree_control'));
    const missing = wanted.filter((c) => !on.includes(c));
    if (missing.length > 0) writeFileSync(path.join(dir, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' '));
  };
  try {
    try {
      enable();
    } catch (e) {
      if (errCode(e) !== 'EBUSY') throw e;
      const leaf = path.join(dir, 'toolgate-service');
      mkdirSync(leaf, { recursive: true });
      for (const pid of readWords(path.join(dir, 'cgroup.procs'))) {
        try {
          writeFileSync(path.join(leaf, 'cgroup.procs'), pid);
        } catch (err) {
          if (errCode(err) !== 'ESRCH') throw err;
        }
      }
      enable();
    }
    const base = path.join(dir, baseName());
    mkdirSync(base, { recursive: true });
    writeFileSync(path.join(base, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
    return { kind: 'v2', base, pids: wanted.includes('pids'), memory: wanted.includes('memory') };
  } catch (e) {
    return `cgroup v2 at ${dir} is not delegated to this process (${errCode(e)})`;
  }
}

/** cgroup v1: a base directory under this process's own cgroup in the pids and the memory hierarchies. */
function planV1(fs: CgroupFs, own: Map<string, string>): CgroupPlan | string {
  const name = baseName();
  const base = (controller: string): string | null => {
    const mount = path.join(fs.root, controller);
    const rel = own.get(controller);
    if (rel === undefined || !existsSync(path.join(mount, 'cgroup.procs'))) return null;
    const dir = path.join(mount, rel, name);
    try {
      mkdirSync(dir, { recursive: true });
      return dir;
    } catch {
      return null;
    }
  };
  const plan = { kind: 'v1' as const, pids: base('pids'), memory: base('memory') };
  return plan.pids || plan.memory ? plan : 'no writable cgroup v1 pids or memory hierarchy';
}

/** The cgroups the runs get here, or why none (v2 tried first, then v1). */
export function planCgroups(fs: CgroupFs): { plan: CgroupPlan | null; why: string } {
  const own = ownPaths(fs);
  const v2 = planV2(fs, own);
  if (typeof v2 !== 'string') return { plan: v2, why: '' };
  const v1 = planV1(fs, own);
  if (typeof v1 !== 'string') return { plan: v1, why: '' };
  return { plan: null, why: `${v2}; ${v1}` };
}

export const hasPidsCgroup = (plan: CgroupPlan | null): boolean => (plan?.kind === 'v2' ? plan.pids : Boolean(plan?.pids));

// Process-wide on purpose: every service's runs are made in this process's one cgroup, where names must differ.
let runSeq = 0;

/**
 * Creates one run's cgroups with its limits; returns their cgroup.procs files (the run's first process
 * joins them before it becomes bwrap) and their directories (removed when the run ends).
 */
export function makeRunCgroups(plan: CgroupPlan, limits: { maxProcesses: number; memoryBytes: number }): { procs: string[]; dirs: string[] } {
  const name = `run-${++runSeq}`;
  // A few processes more than the command's own: the launcher and bwrap's init.
  const pidsMax = String(limits.maxProcesses + 3);
  const memMax = String(limits.memoryBytes);
  const dirs: string[] = [];
  // The optional files (swap accounting) may be missing; the others exist once the controller is on.
  const make = (parent: string, files: [string, string][], optional: [string, string][] = []) => {
    const dir = path.join(parent, name);
    mkdirSync(dir);
    dirs.push(dir);
    for (const [file, value] of files) writeFileSync(path.join(dir, file), value);
    for (const [file, value] of optional) if (existsSync(path.join(dir, file))) writeFileSync(path.join(dir, file), value);
  };
  try {
    if (plan.kind === 'v2') {
      const files: [string, string][] = [];
      if (plan.pids) files.push(['pids.max', pidsMax]);
      if (plan.memory) files.push(['memory.max', memMax]);
      // No swap: the limit is on memory the run really holds.
      make(plan.base, files, plan.memory ? [['memory.swap.max', '0']] : []);
    } else {
      if (plan.pids) make(plan.pids, [['pids.max', pidsMax]]);
      if (plan.memory) make(plan.memory, [['memory.limit_in_bytes', memMax]], [['memory.memsw.limit_in_bytes', memMax]]);
    }
  } catch (e) {
    removeCgroups(dirs);
    throw e;
  }
  return { procs: dirs.map((d) => path.join(d, 'cgroup.procs')), dirs };
}

/** A run's cgroups go once its processes are gone (they die with bwrap; a few tries while the kernel reaps them). */
export function removeCgroups(dirs: readonly string[], tries = 20): void {
  const left = dirs.filter((d) => !removeDir(d));
  if (left.length > 0 && tries > 0) setTimeout(() => removeCgroups(left, tries - 1), 100).unref();
}

/** rmdir on a cgroup file system; a plain directory (a test's tree) is removed with its files. */
function removeDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (e) {
    if (errCode(e) === 'ENOENT') return true;
    if (errCode(e) === 'ENOTEMPTY') {
      rmSync(dir, { recursive: true, force: true });
      return true;
    }
    return false;
  }
}

/** The base cgroups of the plan (app close), once the runs' own are gone: tried a few times. */
export async function releaseCgroups(plan: CgroupPlan): Promise<void> {
  const bases = plan.kind === 'v2' ? [plan.base] : [plan.pids, plan.memory].filter((b): b is string => b !== null);
  for (let i = 0; i < 50; i++) {
    let left = 0;
    for (const base of bases) {
      try {
        for (const e of readdirSync(base, { withFileTypes: true })) if (e.isDirectory()) removeDir(path.join(base, e.name));
      } catch {
        // Gone already.
      }
      if (!removeDir(base)) left++;
    }
    if (left === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
