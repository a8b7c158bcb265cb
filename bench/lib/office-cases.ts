// What bench/office.ts (the readers alone) and bench/office-tools.ts (the tools over the app) share: the
// large documents, one fresh process per case (RSS never shrinks much, so an earlier case or generating
// the files would hide a reader's share), and the peak RSS growth during one case.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { largeDocx, largeXlsx } from '../../test/office/fixtures.js';

const MiB = 1024 * 1024;
export const mib = (n: number): string => `${(n / MiB).toFixed(1)} MiB`;

/** Time and peak RSS growth of `fn`, RSS sampled every 5 ms (a parser worker is a thread: it counts). */
export async function measurePeak<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number; rssGrowth: number; peak: number }> {
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const t0 = performance.now();
  try {
    const result = await fn();
    return { result, ms: performance.now() - t0, rssGrowth: peak - rss0, peak };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * With `<case> <file>` arguments runs that case here; otherwise writes the ~20 MB .docx and the 50,000-row
 * .xlsx and runs every case in a fresh process of this script (docx cases are those named "docx").
 */
export async function runOfficeCases(script: string, cases: readonly string[], measure: (label: string, file: string) => Promise<void>): Promise<void> {
  const [label, file] = process.argv.slice(2);
  if (label && file) return measure(label, file);
  const dir = mkdtempSync(path.join(tmpdir(), 'office-bench-'));
  try {
    const docx = path.join(dir, 'large.docx');
    const xlsx = path.join(dir, 'large.xlsx');
    writeFileSync(docx, await largeDocx(18 * MiB, 2000));
    writeFileSync(xlsx, await largeXlsx(50_000));
    for (const name of cases) execFileSync(process.execPath, [...process.execArgv, script, name, name.includes('docx') ? docx : xlsx], { stdio: 'inherit' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
