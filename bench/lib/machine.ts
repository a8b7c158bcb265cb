// The machine a run was measured on: CPU model, cores, RAM, Node, kernel, and the disk under the data.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

function sh(cmd: string, args: string[]): string | null {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  node: string;
  kernel: string;
  disk: string;
}

export function describeMachine(dataDir: string): Machine {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m?.[1]) cpu = m[1].trim();
  } catch {
    // not Linux
  }
  const hypervisor = sh('sh', ['-c', "lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor: *//p'"]);
  if (hypervisor) cpu += ` (${hypervisor} VM)`;
  // Disk: device, file system, size, and whether the kernel calls it rotational.
  let disk = 'unknown';
  const df = sh('df', ['-PT', dataDir])?.split('\n')[1]?.split(/\s+/);
  if (df) {
    const [dev, fstype, blocks] = df;
    const sizeGiB = Math.round(Number(blocks) / 1024 / 1024);
    const base = dev?.replace(/^\/dev\//, '').replace(/p?\d+$/, '') ?? '';
    let rot = '';
    try {
      rot = readFileSync(`/sys/block/${base}/queue/rotational`, 'utf8').trim() === '0' ? ', kernel: non-rotational' : ', kernel: rotational';
    } catch {
      // unknown
    }
    disk = `${dev ?? '?'} ${fstype ?? '?'}, ${sizeGiB} GiB${rot}`;
  }
  return {
    cpu,
    cores: os.availableParallelism?.() ?? os.cpus().length,
    ramGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    disk,
  };
}
