// Hostile documents through read_docx / read_excel on the real app: each is an envelope error, the service
// keeps answering (a read_file after each), and the process stays within a memory budget.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/envelope.js';
import { makeApp, type TestApp } from '../helpers.js';
import { deflatedZeros, entry, rawZip, sampleDocx, sampleXlsx, withEntries } from './fixtures.js';

const MiB = 1024 * 1024;
const RSS_BUDGET = 96 * MiB;
const ZEROS = 200 * MiB;

const LAUGHS = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;"><!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;"><!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&lol6;</w:t></w:r></w:p></w:body></w:document>`;

let t: TestApp;
let rssBefore = 0;
const cases: Array<{ name: string; file: string; tool: 'read_docx' | 'read_excel'; code: ErrorCode; office: string }> = [];

beforeAll(async () => {
  // Worker pools and the parsers' code are loaded by the first good read, not counted as growth.
  t = await makeApp({ TOOLGATE_TOOL_TIMEOUT_MS: '60000' });
  const good = await sampleDocx();
  await fs.writeFile(t.file('ok.txt'), 'still here\n');
  await fs.writeFile(t.file('good.docx'), good);
  const zeros = await deflatedZeros(ZEROS);
  const docx = (...extra: Parameters<typeof entry>[]) => rawZip([entry('[Content_Types].xml', '<Types/>'), entry('word/document.xml', '<w:document/>'), ...extra.map((args) => entry(...args))]);
  const files: Record<string, [Buffer, 'read_docx' | 'read_excel', ErrorCode, string]> = {
    'zeros.docx': [docx(['word/media/zeros.png', Buffer.alloc(0), { data: zeros.data, crc: zeros.crc, compressedSize: zeros.data.length, uncompressedSize: ZEROS }]), 'read_docx', 'FILE_TOO_LARGE', 'ARCHIVE_TOO_LARGE'],
    'lying.docx': [docx(['word/media/image1.png', Buffer.alloc(0), { data: zeros.data, crc: zeros.crc, compressedSize: zeros.data.length, uncompressedSize: 1000 }]), 'read_docx', 'ENCODING_ERROR', 'ARCHIVE_UNSAFE'],
    'lying-local.docx': [
      docx(['word/media/image1.png', Buffer.alloc(0), { data: zeros.data, crc: zeros.crc, compressedSize: zeros.data.length, uncompressedSize: 1000, localUncompressedSize: ZEROS }]),
      'read_docx',
      'ENCODING_ERROR',
      'ARCHIVE_UNSAFE',
    ],
    'many.docx': [rawZip(Array.from({ length: 100_000 }, (_, i) => entry(`word/e${i}.xml`, ''))), 'read_docx', 'FILE_TOO_LARGE', 'ARCHIVE_TOO_LARGE'],
    'nested.docx': [withEntries(good, { 'word/media/image9.png': good }), 'read_docx', 'ENCODING_ERROR', 'ARCHIVE_UNSAFE'],
    'not-a-zip.docx': [Buffer.from('# Markdown\n'.repeat(100)), 'read_docx', 'ENCODING_ERROR', 'NOT_AN_ARCHIVE'],
    'truncated.docx': [good.subarray(0, Math.floor(good.length / 2)), 'read_docx', 'ENCODING_ERROR', 'ARCHIVE_CORRUPT'],
    'laughs.docx': [withEntries(good, { 'word/document.xml': LAUGHS }), 'read_docx', 'ENCODING_ERROR', 'ARCHIVE_UNSAFE'],
    'laughs.xlsx': [withEntries(await sampleXlsx(), { 'xl/sharedStrings.xml': LAUGHS }), 'read_excel', 'ENCODING_ERROR', 'ARCHIVE_UNSAFE'],
    'zeros.xlsx': [docx(['xl/worksheets/sheet1.xml', Buffer.alloc(0), { data: zeros.data, crc: zeros.crc, compressedSize: zeros.data.length, uncompressedSize: ZEROS }]), 'read_excel', 'FILE_TOO_LARGE', 'ARCHIVE_TOO_LARGE'],
  };
  for (const [file, [bytes, tool, code, office]] of Object.entries(files)) {
    await fs.writeFile(t.file(file), bytes);
    cases.push({ name: file, file, tool, code, office });
  }
  expect((await t.call('read_docx', { path: 'good.docx' })).body.status).toBe('success');
  global.gc?.();
  rssBefore = process.memoryUsage().rss;
}, 120_000);
afterAll(() => t?.close());

describe('hostile documents over HTTP', () => {
  it('each answers an envelope error, and the service keeps answering after it', async () => {
    for (const c of cases) {
      const res = await t.call(c.tool, { path: c.file });
      expect(res.body.status, c.name).toBe('error');
      expect(res.body.error?.code, `${c.name}: ${res.body.error?.message}`).toBe(c.code);
      expect(res.body.error?.details, c.name).toMatchObject({ office_code: c.office });
      expect(res.status, c.name).toBeLessThan(500);
      expect(JSON.stringify(res.body), c.name).not.toContain(t.root);
      const after = await t.call('read_file', { path: 'ok.txt' });
      expect((after.body.data as { content: string }).content, `after ${c.name}`).toBe('still here\n');
    }
    expect((await t.call('read_docx', { path: 'good.docx' })).body.status).toBe('success');
  }, 120_000);

  it('keeps the process within its memory budget', () => {
    global.gc?.();
    const growth = process.memoryUsage().rss - rssBefore;
    // The figure for the report; the assertion is the budget.
    console.log(`hostile documents over HTTP: ${cases.length} files, RSS growth ${(growth / MiB).toFixed(1)} MiB (budget ${RSS_BUDGET / MiB} MiB)`);
    expect(growth).toBeLessThan(RSS_BUDGET);
  });
});
