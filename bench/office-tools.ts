// Time and memory of read_docx / read_excel through the real app (HTTP inject): the ~20 MB .docx and the
// 50,000-row .xlsx of bench/office.ts, plus the sandboxed open, the attachments written to the state
// directory and the envelope. Run: npx tsx bench/office-tools.ts. One fresh process per case, as there.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { measurePeak, mib, runOfficeCases } from './lib/office-cases.js';

const CASES: Record<string, { file: string; tool: string; args: Record<string, unknown> }> = {
  'read_docx 20 MB': { file: 'large.docx', tool: 'read_docx', args: {} },
  'read_excel 50,000 rows (output capped at 256 KiB)': { file: 'large.xlsx', tool: 'read_excel', args: {} },
  'read_excel 50,000 rows (range A49990:F50001)': { file: 'large.xlsx', tool: 'read_excel', args: { range: 'A49990:F50001' } },
  'read_excel 50,000 rows (range A1:F12, the first rows)': { file: 'large.xlsx', tool: 'read_excel', args: { range: 'A1:F12' } },
};

async function measure(label: string, source: string): Promise<void> {
  const c = CASES[label] as (typeof CASES)[string];
  const root = mkdtempSync(path.join(tmpdir(), 'office-tools-bench-ws-'));
  copyFileSync(source, path.join(root, c.file));
  const app = await buildApp(loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }));
  try {
    const { result: res, ms, rssGrowth, peak } = await measurePeak(() => app.inject({ method: 'POST', url: `/v1/tools/${c.tool}`, payload: { path: c.file, ...c.args } }));
    const body = res.json() as { status: string; data: { content: string; truncated: boolean; attachments: unknown[] } };
    console.log(`${label}: HTTP ${res.statusCode} ${body.status}, ${ms.toFixed(0)} ms, RSS +${mib(rssGrowth)} (peak ${mib(peak)}), output ${(Buffer.byteLength(body.data.content) / 1024).toFixed(0)} KiB, truncated ${body.data.truncated}, attachments ${body.data.attachments.length}`);
  } finally {
    await app.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await runOfficeCases(import.meta.filename, Object.keys(CASES), measure);
