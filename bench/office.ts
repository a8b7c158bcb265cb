// Time and memory of the office readers on large documents: a ~20 MB .docx (text and incompressible
// images) and a 50,000-row .xlsx. Run: npx tsx bench/office.ts. Each case runs in a fresh process (RSS
// never shrinks much, so generating the files first would hide the reader's share); it prints wall time
// and the peak RSS growth of that process, the parser worker's included (a worker is a thread).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readDocx, readExcel, type OfficeReadResult } from '../src/office/run.js';
import { largeDocx, largeXlsx } from '../test/office/fixtures.js';

const MiB = 1024 * 1024;
const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

const CASES: Record<string, (file: Buffer) => Promise<OfficeReadResult>> = {
  'docx 20 MB': (f) => readDocx(f),
  'xlsx 50,000 rows (output capped at 256 KiB)': (f) => readExcel(f),
  'xlsx 50,000 rows (range A49990:F50001)': (f) => readExcel(f, { range: 'A49990:F50001' }),
};

async function measure(label: string, file: string): Promise<void> {
  const data = readFileSync(file);
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const t0 = performance.now();
  const result = await (CASES[label] as (f: Buffer) => Promise<OfficeReadResult>)(data);
  const ms = performance.now() - t0;
  clearInterval(sampler);
  console.log(`${label}: file ${mib(data.length)}, ${ms.toFixed(0)} ms, RSS +${mib(peak - rss0)} (peak ${mib(peak)}), output ${(Buffer.byteLength(result.text) / 1024).toFixed(0)} KiB, truncated ${result.truncated}, attachments ${result.attachments.length}`);
}

const [label, file] = process.argv.slice(2);
if (label && file) {
  await measure(label, file);
} else {
  const dir = mkdtempSync(path.join(tmpdir(), 'office-bench-'));
  try {
    const docx = path.join(dir, 'large.docx');
    const xlsx = path.join(dir, 'large.xlsx');
    writeFileSync(docx, await largeDocx(18 * MiB, 2000));
    writeFileSync(xlsx, await largeXlsx(50_000));
    for (const name of Object.keys(CASES)) {
      const input = name.startsWith('docx') ? docx : xlsx;
      execFileSync(process.execPath, [...process.execArgv, import.meta.filename, name, input], { stdio: 'inherit' });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
