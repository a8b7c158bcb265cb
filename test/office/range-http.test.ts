// read_excel with a range over the real app: the streaming reader (src/office/xlsx-stream.ts) gives exactly
// the cells asked for, reads as the whole-sheet reader does, and stops at the range's last row: a sheet
// damaged after the range still answers the range, while the whole sheet reports the damage.
import fs from 'node:fs/promises';
import { deflateRawSync, crc32 } from 'node:zlib';
import ExcelJS from 'exceljs';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers.js';
import { deflatedZeros, entry, largeXlsx, rawZip, withEntries } from './fixtures.js';

interface ExcelData {
  content: string;
  truncated: boolean;
  sheets: Array<{ index: number; name: string; state: string; dimensions: string | null }>;
  truncated_at: { sheet: string; row: number } | null;
}

const ROWS = 5000;
const SHEET = 'xl/worksheets/sheet1.xml';

/** The row largeXlsx writes for item i (sheet row i + 1), as read_excel shows it. */
function line(i: number): string {
  const date = new Date(Date.UTC(2024, 0, 1 + (i % 365))).toISOString().slice(0, 10);
  return `| ${i + 1} | ${i} | Artikel ${i} ü | ${i % 97} | ${(i % 13) * 1.25} | ${(i % 97) * (i % 13) * 1.25} | ${date} |`;
}
const HEADER = '|  | A | B | C | D | E | F |\n|---|---|---|---|---|---|---|';

/** A workbook whose zip holds every entry of `book`, the sheet replaced by `sheetData` deflated as given. */
function rezip(book: Buffer, sheet: Buffer, deflated: Buffer): Buffer {
  const files = unzipSync(book);
  return rawZip(
    Object.entries(files).map(([name, data]) =>
      name === SHEET ? { name, data: deflated, method: 8 as const, crc: crc32(sheet), compressedSize: deflated.length, uncompressedSize: sheet.length } : entry(name, Buffer.from(data)),
    ),
  );
}

let t: TestApp;
let sheetXml: string;

beforeAll(async () => {
  t = await makeApp({ TOOLGATE_TOOL_TIMEOUT_MS: '60000' });
  const book = await largeXlsx(ROWS);
  await fs.writeFile(t.file('big.xlsx'), book);
  sheetXml = Buffer.from(unzipSync(book)[SHEET] as Uint8Array).toString('utf8');

  // The XML cut inside row 200 and never closed: not well-formed from there on.
  const cut = sheetXml.indexOf('<row r="200"');
  await fs.writeFile(t.file('cut-xml.xlsx'), withEntries(book, { [SHEET]: `${sheetXml.slice(0, cut)}<row r="200"><c r="A200"><v>1</v></c></ro` }));

  // The deflate stream damaged from three quarters on: inflating the whole sheet fails.
  const raw = Buffer.from(sheetXml, 'utf8');
  const deflated = deflateRawSync(raw);
  deflated.fill(0xff, Math.floor(deflated.length * 0.75));
  await fs.writeFile(t.file('cut-deflate.xlsx'), rezip(book, raw, deflated));

  // Values of every kind, a hyperlink, a merged range and a shared formula, written by exceljs; then an
  // inline rich string and a phonetic run added to the XML by hand (exceljs writes neither).
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Kinds');
  ws.getCell('A1').value = { text: 'Seite', hyperlink: 'https://example.com/a' };
  ws.getCell('B1').value = { richText: [{ text: 'fett ' }, { font: { bold: true }, text: 'und | mehr' }] };
  ws.getCell('C1').value = 'verbunden';
  ws.mergeCells('C1:D1');
  ws.getCell('A2').value = true;
  ws.getCell('B2').value = { error: '#N/A' };
  ws.getCell('C2').value = 2;
  ws.getCell('D2').value = { formula: 'C2*2', result: 4, shareType: 'shared', ref: 'D2:D4' } as ExcelJS.CellValue;
  ws.getCell('C3').value = 0;
  ws.getCell('D3').value = { sharedFormula: 'D2', result: 0 } as ExcelJS.CellValue;
  ws.getCell('C4').value = 5;
  ws.getCell('D4').value = { sharedFormula: 'D2', result: 10 } as ExcelJS.CellValue;
  ws.getCell('A5').value = new Date(Date.UTC(2024, 1, 29, 8, 15));
  ws.getCell('B5').value = 'zwei\nZeilen';
  const kinds = Buffer.from(await wb.xlsx.writeBuffer());
  const kindsXml = Buffer.from(unzipSync(kinds)[SHEET] as Uint8Array).toString('utf8');
  const inline = '<row r="6"><c r="A6" t="inlineStr"><is><r><t>in</t></r><r><t xml:space="preserve">line &amp; </t></r></is></c></row>';
  await fs.writeFile(t.file('kinds.xlsx'), withEntries(kinds, { [SHEET]: kindsXml.replace('</sheetData>', `${inline}</sheetData>`) }));
  // A phonetic reading (Japanese workbooks) is not part of the text.
  const phonetic = '<row r="6"><c r="A6" t="inlineStr"><is><t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></is></c></row>';
  await fs.writeFile(t.file('phonetic.xlsx'), withEntries(kinds, { [SHEET]: kindsXml.replace('</sheetData>', `${phonetic}</sheetData>`) }));
}, 120_000);
afterAll(() => t?.close());

async function readExcel(args: Record<string, unknown>): Promise<ExcelData> {
  const res = await t.call('read_excel', args);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.status, JSON.stringify(res.body.error)).toBe('success');
  return res.body.data as ExcelData;
}

describe('read_excel of a range', () => {
  it('returns exactly the rows and cells of the range from a large workbook', async () => {
    const data = await readExcel({ path: 'big.xlsx', range: 'B2500:D2503' });
    const rows = [2499, 2500, 2501, 2502].map((i) => `| ${i + 1} | Artikel ${i} ü | ${i % 97} | ${(i % 13) * 1.25} |`);
    expect(data.content).toBe(['## Sheet 1: Daten', '', '|  | B | C | D |', '|---|---|---|---|', ...rows, ''].join('\n'));
    expect(data.truncated).toBe(false);
    expect(data.sheets).toEqual([{ index: 1, name: 'Daten', state: 'visible', dimensions: `A1:F${ROWS + 1}` }]);
  });

  it('reads the first rows, the header row included', async () => {
    const data = await readExcel({ path: 'big.xlsx', range: 'A1:F4' });
    expect(data.content).toBe(['## Sheet 1: Daten', '', HEADER, '| 1 | id | name | menge | preis | summe | datum |', line(1), line(2), line(3), ''].join('\n'));
  });

  it('reads the last rows, and says when a range lies past the end of the sheet', async () => {
    const last = await readExcel({ path: 'big.xlsx', range: `A${ROWS - 1}:F${ROWS + 40}` });
    expect(last.content).toBe(['## Sheet 1: Daten', '', HEADER, line(ROWS - 2), line(ROWS - 1), line(ROWS), ''].join('\n'));
    const past = await readExcel({ path: 'big.xlsx', range: `A${ROWS + 10}:C${ROWS + 20}` });
    expect(past.content).toBe(`## Sheet 1: Daten\n\n(no values in A${ROWS + 10}:C${ROWS + 20}; the sheet's used range is A1:F${ROWS + 1})\n`);
  });

  it('resolves shared strings, rich and inline text, booleans, errors, dates, links and shared formulas as a whole-sheet read does', async () => {
    const range = await readExcel({ path: 'kinds.xlsx', range: 'A1:D6', formulas: true });
    expect(range.content).toBe(
      [
        '## Sheet 1: Kinds',
        '',
        '|  | A | B | C | D |',
        '|---|---|---|---|---|',
        '| 1 | [Seite](https://example.com/a) | fett und \\| mehr | verbunden |  |',
        '| 2 | TRUE | #N/A | 2 | 4 (=C2*2) |',
        '| 3 |  |  | 0 | 0 (=C3*2) |',
        '| 4 |  |  | 5 | 10 (=C4*2) |',
        '| 5 | 2024-02-29T08:15:00 | zwei<br>Zeilen |  |  |',
        '| 6 | inline &  |  |  |  |',
        '',
      ].join('\n'),
    );
    const whole = await readExcel({ path: 'kinds.xlsx', sheet: 1, formulas: true });
    expect(whole.content).toBe(range.content);
    const phonetic = await readExcel({ path: 'phonetic.xlsx', range: 'A6:B6' });
    expect(phonetic.content).toBe('## Sheet 1: Kinds\n\n|  | A | B |\n|---|---|---|\n| 6 | 東京 |  |\n');
  });

  it('stops reading at the last row of the range: XML broken after it does not matter, the whole sheet reports it', async () => {
    const range = await readExcel({ path: 'cut-xml.xlsx', range: 'A10:C12' });
    expect(range.content).toBe(['## Sheet 1: Daten', '', '|  | A | B | C |', '|---|---|---|---|', ...[9, 10, 11].map((i) => `| ${i + 1} | ${i} | Artikel ${i} ü | ${i % 97} |`), ''].join('\n'));
    const whole = await t.call('read_excel', { path: 'cut-xml.xlsx' });
    expect(whole.body.status).toBe('error');
    expect(whole.body.error?.code).toBe('ENCODING_ERROR');
    expect(whole.body.error?.details).toMatchObject({ office_code: 'DOCUMENT_INVALID' });
    // A range that reaches the broken row reads into it and reports it too.
    const into = await t.call('read_excel', { path: 'cut-xml.xlsx', range: 'A150:C250' });
    expect(into.body.error?.details).toMatchObject({ office_code: 'DOCUMENT_INVALID' });
  });

  it('stops inflating at the last row of the range: a deflate stream damaged after it does not matter', async () => {
    const range = await readExcel({ path: 'cut-deflate.xlsx', range: 'A2:F3' });
    expect(range.content).toBe(['## Sheet 1: Daten', '', HEADER, line(1), line(2), ''].join('\n'));
    for (const args of [{ path: 'cut-deflate.xlsx' }, { path: 'cut-deflate.xlsx', range: `A${ROWS}:B${ROWS + 1}` }]) {
      const res = await t.call('read_excel', args);
      expect(res.body.status, JSON.stringify(args)).toBe('error');
      expect(res.body.error?.details, JSON.stringify(args)).toMatchObject({ office_code: 'ARCHIVE_CORRUPT' });
    }
  });

  it('holds a worksheet it inflates itself to the size its headers declare (a lying zip bomb)', async () => {
    const book = await fs.readFile(t.file('big.xlsx'));
    const zeros = await deflatedZeros(8 * 1024 * 1024);
    const files = unzipSync(book);
    const lying = rawZip(
      Object.entries(files).map(([name, data]) =>
        name === SHEET ? { name, data: zeros.data, method: 8 as const, crc: zeros.crc, compressedSize: zeros.data.length, uncompressedSize: 1000 } : entry(name, Buffer.from(data)),
      ),
    );
    await fs.writeFile(t.file('lying.xlsx'), lying);
    const res = await t.call('read_excel', { path: 'lying.xlsx', range: 'A1:B2' });
    expect(res.body.error?.code).toBe('ENCODING_ERROR');
    expect(res.body.error?.details).toMatchObject({ office_code: 'ARCHIVE_UNSAFE' });
    expect(res.body.error?.message).toContain('inflates past the 1000 bytes its header declares');
  });

  it('refuses a DTD in a worksheet it streams, as the guard does for parts it inflates', async () => {
    const book = await fs.readFile(t.file('big.xlsx'));
    const laughs = sheetXml.replace('<worksheet', '<!DOCTYPE w [<!ENTITY a "aaaa">]><worksheet');
    await fs.writeFile(t.file('dtd.xlsx'), withEntries(book, { [SHEET]: laughs }));
    const res = await t.call('read_excel', { path: 'dtd.xlsx', range: 'A1:B2' });
    expect(res.body.error?.details).toMatchObject({ office_code: 'ARCHIVE_UNSAFE' });
  });
});
