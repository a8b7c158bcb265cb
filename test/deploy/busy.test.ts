// scripts/busy.mjs, the load for the proof runs (docs/development.md): runs a command under busy loops as
// many times as asked, reports each run and exits with the first failure; the loops end with it.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/busy.mjs', import.meta.url));
const busy = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });
/** Whether a process with this id still exists. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('scripts/busy.mjs', () => {
  it('runs the command the asked number of times under the loops, then stops them', () => {
    const res = busy('--loops', '2', '--runs', '2', '--', process.execPath, '-e', 'process.exit(0)');
    expect(res.status).toBe(0);
    expect(res.stderr).toContain('busy: 2 busy loop(s) running');
    expect(res.stderr).toMatch(/run 1\/2 .*: exit 0 in/);
    expect(res.stderr).toMatch(/summary with 2 busy loop\(s\): run 1 exit 0 [\d.]+ s; run 2 exit 0 [\d.]+ s/);
    const pids = /pids ([\d, ]+)\)/.exec(res.stderr)![1]!.split(', ').map(Number);
    expect(pids.filter(alive)).toEqual([]);
  });

  it('exits with the failing run status, and refuses a bad count', () => {
    expect(busy('--loops', '1', '--', process.execPath, '-e', 'process.exit(3)').status).toBe(3);
    const bad = busy('--loops', '0', '--', 'true');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('--loops 0: a whole number of at least 1');
  });
});
