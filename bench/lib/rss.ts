// Resident memory of a child process from /proc: current RSS, and the peak over an interval. The
// peak uses the kernel's high-water mark (VmHWM), reset through /proc/<pid>/clear_refs when the
// kernel allows it, and falls back to sampling VmRSS every 10 ms.
import { readFileSync, writeFileSync } from 'node:fs';

function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    throw new Error(`process ${pid} is gone: it exited during the run (see the logs in the cache directory)`);
  }
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  if (!m) throw new Error(`no ${field} for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/** Current resident set size in bytes. */
export function rssOf(pid: number): number {
  return statusField(pid, 'VmRSS');
}

function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface PeakWatch {
  /** RSS when the watch started (bytes). */
  readonly before: number;
  /** Stops watching; the peak RSS in bytes since start. */
  stop(): number;
  readonly method: 'VmHWM' | 'sampling';
}

export function watchPeak(pid: number): PeakWatch {
  const before = rssOf(pid);
  if (resetPeak(pid)) {
    return { before, method: 'VmHWM', stop: () => Math.max(statusField(pid, 'VmHWM'), before) };
  }
  let peak = before;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // The process went away; keep the peak seen so far.
    }
  }, 10);
  return {
    before,
    method: 'sampling',
    stop: () => {
      clearInterval(timer);
      try {
        peak = Math.max(peak, rssOf(pid));
      } catch {
        // ignore
      }
      return peak;
    },
  };
}
