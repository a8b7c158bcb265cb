// Run by lazy-load.test.ts in a process of its own (under tsx): builds the app, lists the office packages
// Node has loaded, makes one read_excel call through the app, and lists them again, as JSON on stdout.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { EXAMPLE_XLSX_BASE64 } from '../../src/tools/documents/examples.js';

const OFFICE_PACKAGES = /node_modules\/(yauzl|exceljs|mammoth|saxes|jszip|turndown|@joplin\/turndown-plugin-gfm)\//;
const require = createRequire(import.meta.url);
const loaded = () => [...new Set(Object.keys(require.cache).flatMap((k) => OFFICE_PACKAGES.exec(k.replaceAll('\\', '/'))?.[1] ?? []))].sort();

const root = mkdtempSync(path.join(tmpdir(), 'toolgate-lazy-'));
try {
  const app = await buildApp(loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false' }));
  await app.ready();
  const atStart = loaded();
  writeFileSync(path.join(root, 'book.xlsx'), Buffer.from(EXAMPLE_XLSX_BASE64, 'base64'));
  const res = await app.inject({ method: 'POST', url: '/v1/tools/read_excel', payload: { path: 'book.xlsx' } });
  const afterCall = loaded();
  await app.close();
  process.stdout.write(JSON.stringify({ atStart, afterCall, status: res.statusCode }));
} finally {
  rmSync(root, { recursive: true, force: true });
}
