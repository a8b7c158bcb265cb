// Time and memory of read_docx / read_excel through the real app (HTTP inject): the ~20 MB .docx and the
// 50,000-row .xlsx of bench/office.ts, plus the sandboxed open, the attachments written to the state
// directory and the envelope. Run: npx tsx bench/office-tools.ts. One fresh process per case, as there.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { largeDocx, largeXlsx } from '../test/office/fixtures.js';

const MiB = 1024 * 1024;
const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

const CASES: Record<string, { file: string; tool: string; args: Record<string, unknown> }> = {
  'read_docx 20 MB': { file: 'large.docx', tool: 'read_docx', args: {} },
  'read_excel 50,000 rows (output capped at 256 KiB)': { file: 'large.xlsx', tool: 'read_excel', args: {} },
  'read_excel 50,000 rows (range A49990:F50001)': { file: 'large.xlsx', tool: 'read_excel', args: { range: 'A49990:F50001' } },
};

async function measure(label: string, source: string): Promise<void> {
  const c = CASES[label] as (typeof CASES)[string];
  const root = mkdtempSync(path.join(tmpdir(), 'office-tools-bench-ws-'));
  copyFileSync(source, path.join(root, c.file));
  const app = await buildApp(loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }));
  try {
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const t0 = performance.now();
    const res = await app.inject({ method: 'POST', url: `/v1/tools/${c.tool}`, payload: { path: c.file, ...c.args } });
    const ms = performance.now() - t0;
    clearInterval(sampler);
    const body = res.json() as { status: string; data: { content: string; truncated: boolean; attachments: unknown[] } };
    console.log(`${label}: HTTP ${res.statusCode} ${body.status}, ${ms.toFixed(0)} ms, RSS +${mib(peak - rss0)} (peak ${mib(peak)}), output ${(Buffer.byteLength(body.data.content) / 1024).toFixed(0)} KiB, truncated ${body.data.truncated}, attachments ${body.data.attachments.length}`);
  } finally {
    await app.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const [label, file] = process.argv.slice(2);
if (label && file) {
  await measure(label, file);
} else {
  const dir = mkdtempSync(path.join(tmpdir(), 'office-tools-bench-'));
  try {
    const docx = path.join(dir, 'large.docx');
    const xlsx = path.join(dir, 'large.xlsx');
    writeFileSync(docx, await largeDocx(18 * MiB, 2000));
    writeFileSync(xlsx, await largeXlsx(50_000));
    for (const name of Object.keys(CASES)) {
      execFileSync(process.execPath, [...process.execArgv, import.meta.filename, name, name.includes('docx') ? docx : xlsx], { stdio: 'inherit' });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
