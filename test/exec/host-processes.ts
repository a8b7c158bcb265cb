// What the run_command tests look for on the host: the processes a command left running, polled until gone.
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';

/** Host processes whose command line holds `marker`. */
export function hostProcesses(marker: string): number {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker)).length;
}

/** Polls `check` every 100 ms, `tries` times; its last answer. */
export async function until(check: () => boolean, tries = 100): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

/**
 * Drops a file into the /tmp of the running sandbox whose command line holds `marker`: a command sees the project
 * as it was when it started, so a test tells it to go on through its own /tmp (reached through /proc). False
 * while no such sandbox runs yet.
 */
export function signalSandbox(marker: string, name: string): boolean {
  const pids = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker))
    .map((l) => l.trim().split(/\s+/)[0] as string);
  for (const pid of pids) {
    const root = `/proc/${pid}/root`;
    if (!existsSync(`${root}/workspace`)) continue;
    try {
      writeFileSync(`${root}/tmp/${name}`, 'go\n');
      return true;
    } catch {
      // Gone meanwhile, or not the sandbox's /tmp.
    }
  }
  return false;
}
