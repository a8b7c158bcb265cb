// What the run_command tests look for on the host: the processes a command left running, polled until gone.
import { execFileSync } from 'node:child_process';

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
