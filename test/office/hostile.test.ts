// Hostile documents, generated here: each must answer a typed error, the reader must keep working after
// it, and the process must not grow past a memory budget while refusing them.
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OfficeError, type OfficeErrorCode } from '../../src/office/errors.js';
import { readDocx, readExcel } from '../../src/office/run.js';
import { checkZip, storedZip } from '../../src/office/zip-guard.js';
import { deflatedZeros, entry, rawZip, sampleDocx, sampleXlsx, withEntries } from './fixtures.js';

const MiB = 1024 * 1024;
const RSS_BUDGET = 64 * MiB;
const ZEROS = 200 * MiB;

const BILLION_LAUGHS = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>`;

async function code(p: Promise<unknown>): Promise<OfficeErrorCode> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OfficeError);
  return (err as OfficeError).code;
}

const hostile: Record<string, Buffer> = {};
let good: Buffer;
let rssBefore = 0;

beforeAll(async () => {
  good = await sampleDocx();
  const zeros = await deflatedZeros(ZEROS);
  const docx = (extra: Parameters<typeof entry>[]) => rawZip([entry('[Content_Types].xml', '<Types/>'), entry('word/document.xml', '<w:document/>'), ...extra.map((args) => entry(...args))]);
  // Honest headers: 200 MiB of zeros in ~200 KiB.
  hostile.zeros = docx([['word/media/zeros.bin.png', Buffer.alloc(0), { data: zeros.data, crc: zeros.crc, compressedSize: zeros.data.length, uncompressedSize: ZEROS }]]);
  // Both headers claim 1000 bytes; the data inflates to 200 MiB.
  hostile.lyingSizes = docx([['word/media/image1.png', Buffer.alloc(0), { data: zeros.data, crc: zeros.crc, compressedSize: zeros.data.length, uncompressedSize: 1000 }]]);
  // The central directory says 1000 bytes, the local header 200 MiB: two readers, two answers.
  hostile.lyingLocalHeader = docx([['word/media/image1.png', Buffer.alloc(0), { data: zeros.data, crc: zeros.crc, compressedSize: zeros.data.length, uncompressedSize: 1000, localUncompressedSize: ZEROS }]]);
  hostile.manyEntries = rawZip(Array.from({ length: 100_000 }, (_, i) => entry(`word/e${i}.xml`, '')));
  hostile.nestedByContent = withEntries(good, { 'word/media/image9.png': withEntries(good, {}) });
  hostile.nestedByName = withEntries(good, { 'word/inner.zip': Buffer.from('not even a zip') });
  hostile.notAZip = Buffer.from('# Just Markdown\n\nNamed report.docx, but text.\n'.repeat(100));
  hostile.truncated = good.subarray(0, Math.floor(good.length / 2));
  hostile.billionLaughs = withEntries(good, { 'word/document.xml': BILLION_LAUGHS });
  hostile.traversal = docx([['../../etc/cron.d/evil', 'x']]);
  hostile.encrypted = docx([['word/media/image1.png', 'x', { flags: 1 }]]);
  hostile.duplicate = docx([['word/document.xml', '<w:document/>']]);
  // Baseline after the fixtures exist, so that only the reading of them is measured.
  global.gc?.();
  rssBefore = process.memoryUsage().rss;
});

describe('hostile documents answer a typed error', () => {
  const cases: Array<[string, OfficeErrorCode]> = [
    ['zeros', 'ARCHIVE_TOO_LARGE'],
    ['lyingSizes', 'ARCHIVE_UNSAFE'],
    ['lyingLocalHeader', 'ARCHIVE_UNSAFE'],
    ['manyEntries', 'ARCHIVE_TOO_LARGE'],
    ['nestedByContent', 'ARCHIVE_UNSAFE'],
    ['nestedByName', 'ARCHIVE_UNSAFE'],
    ['notAZip', 'NOT_AN_ARCHIVE'],
    ['truncated', 'ARCHIVE_CORRUPT'],
    ['billionLaughs', 'ARCHIVE_UNSAFE'],
    ['traversal', 'ARCHIVE_UNSAFE'],
    ['encrypted', 'ARCHIVE_UNSAFE'],
    ['duplicate', 'ARCHIVE_UNSAFE'],
  ];
  it.each(cases)('%s → %s, and a good document still reads after it', async (name, expected) => {
    expect(await code(readDocx(hostile[name] as Buffer))).toBe(expected);
    expect((await readDocx(good)).text).toContain('# Quarterly Überblick');
  });

  it('refuses the zeros by ratio when the size limits would let them through', async () => {
    const limits = { maxEntryBytes: 512 * MiB, maxTotalBytes: 512 * MiB };
    expect(await code(checkZip(hostile.zeros as Buffer, { limits }))).toBe('ARCHIVE_UNSAFE');
  });

  it('stops the lying entry at its declared size, without inflating the rest', async () => {
    const err = await checkZip(hostile.lyingSizes as Buffer).catch((e: unknown) => e as OfficeError);
    expect(err).toBeInstanceOf(OfficeError);
    expect((err as OfficeError).message).toContain('inflates past the 1000 bytes its header declares');
  });

  it('stops at the total limit while inflating, even with honest per-entry sizes', async () => {
    const big = Buffer.alloc(3 * MiB, 'a');
    const zip = rawZip([entry('a.xml', big), entry('b.xml', big)]);
    const limits = { maxTotalBytes: 5 * MiB, maxRatio: 100_000 };
    // The declared total is caught before inflating; a lie about it is caught by the counter.
    expect(await code(checkZip(zip, { limits }))).toBe('ARCHIVE_TOO_LARGE');
    const lying = rawZip([entry('a.xml', big), entry('b.xml', big, { uncompressedSize: 10 })]);
    expect(await code(checkZip(lying, { limits: { maxTotalBytes: 3 * MiB + 5, maxRatio: 100_000 } }))).toBe('ARCHIVE_TOO_LARGE');
  });

  it('refuses the billion laughs also in a workbook part', async () => {
    const book = withEntries(await sampleXlsx(), { 'xl/sharedStrings.xml': BILLION_LAUGHS });
    expect(await code(readExcel(book))).toBe('ARCHIVE_UNSAFE');
  });

  it('tells a password-protected or legacy file from other non-zips', async () => {
    const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]);
    const err = await checkZip(ole).catch((e: unknown) => e as OfficeError);
    expect((err as OfficeError).code).toBe('NOT_AN_ARCHIVE');
    expect((err as OfficeError).message).toContain('password-protected');
  });

  it('keeps process memory within budget across the suite', () => {
    global.gc?.();
    const growth = process.memoryUsage().rss - rssBefore;
    expect(growth).toBeLessThan(RSS_BUDGET);
  });
});

describe('checkZip', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'office-guard-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('returns the inflated entries and rebuilds a stored zip with the same contents', async () => {
    const zip = rawZip([entry('[Content_Types].xml', '<Types/>'), entry('word/document.xml', '<w:document>ü</w:document>'), entry('word/', '')]);
    const checked = await checkZip(zip);
    expect([...checked.entries.keys()]).toEqual(['[Content_Types].xml', 'word/document.xml']);
    expect(checked.entries.get('word/document.xml')?.toString('utf8')).toBe('<w:document>ü</w:document>');
    const again = await checkZip(storedZip(checked));
    expect(again.entries).toEqual(checked.entries);
  });

  it('reads from a file descriptor', async () => {
    const file = path.join(dir, 'doc.docx');
    writeFileSync(file, good);
    const fd = openSync(file, 'r');
    try {
      const checked = await checkZip({ fd });
      expect(checked.entries.has('word/document.xml')).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it('skips entries the caller does not need without inflating them', async () => {
    const checked = await checkZip(hostile.zeros as Buffer, { skip: (n) => n.startsWith('word/media/') });
    expect(checked.skipped).toEqual(['word/media/zeros.bin.png']);
    expect(checked.entries.has('word/media/zeros.bin.png')).toBe(false);
  });

  it('refuses an entry name over the byte limit', async () => {
    const zip = rawZip([entry(`${'a'.repeat(300)}.xml`, 'x')]);
    expect(await code(checkZip(zip, { limits: { maxNameBytes: 255 } }))).toBe('ARCHIVE_UNSAFE');
  });
});
