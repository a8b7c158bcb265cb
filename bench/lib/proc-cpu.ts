// CPU time from Linux's /proc: a process (/proc/<pid>/stat) or one of its threads (/proc/<pid>/task/<tid>/stat).
import fs from 'node:fs/promises';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** User and system CPU time in ms from a /proc stat file; NaN for both when it cannot be read. */
export async function procCpuMs(statFile: string): Promise<{ user: number; system: number }> {
  const stat = await fs.readFile(statFile, 'utf8').catch(() => '');
  // The command name may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: (Number(fields[11]) * 1000) / TICKS, system: (Number(fields[12]) * 1000) / TICKS };
}
