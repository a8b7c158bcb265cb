// Time and memory of the office readers on large documents: a ~20 MB .docx (text and incompressible
// images) and a 50,000-row .xlsx. Run: npx tsx bench/office.ts. Each case runs in a fresh process (RSS
// never shrinks much, so generating the files first would hide the reader's share); it prints wall time
// and the peak RSS growth of that process, the parser worker's included (a worker is a thread).
import { readFileSync } from 'node:fs';
import { readDocx, readExcel, type OfficeReadResult } from '../src/office/run.js';
import { measurePeak, mib, runOfficeCases } from './lib/office-cases.js';

const CASES: Record<string, (file: Buffer) => Promise<OfficeReadResult>> = {
  'docx 20 MB': (f) => readDocx(f),
  'xlsx 50,000 rows (output capped at 256 KiB)': (f) => readExcel(f),
  'xlsx 50,000 rows (whole sheet, output cap 64 MiB)': (f) => readExcel(f, { maxOutputBytes: 64 * 1024 * 1024 }),
  'xlsx 50,000 rows (range A49990:F50001)': (f) => readExcel(f, { range: 'A49990:F50001' }),
  'xlsx 50,000 rows (range A1:F12, the first rows)': (f) => readExcel(f, { range: 'A1:F12' }),
};

async function measure(label: string, file: string): Promise<void> {
  const data = readFileSync(file);
  const { result, ms, rssGrowth, peak } = await measurePeak(() => (CASES[label] as (f: Buffer) => Promise<OfficeReadResult>)(data));
  console.log(`${label}: file ${mib(data.length)}, ${ms.toFixed(0)} ms, RSS +${mib(rssGrowth)} (peak ${mib(peak)}), output ${(Buffer.byteLength(result.text) / 1024).toFixed(0)} KiB, truncated ${result.truncated}, attachments ${result.attachments.length}`);
}

await runOfficeCases(import.meta.filename, Object.keys(CASES), measure);
