// read_excel without a range over the real app: the streaming default read (src/office/xlsx-first-rows.ts)
// answers exactly what the exceljs reader (XlsxText.fromExcelJS, the reader before it) answers for a corpus
// of workbooks, and stops inflating once it has its rows: a sheet damaged after them still answers.
import fs from 'node:fs/promises';
import { crc32, deflateRawSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XlsxText } from '../../src/office/xlsx.js';
import { makeApp, type TestApp } from '../helpers.js';
import { entry, largeXlsx, png, rawZip, withEntries } from './fixtures.js';

interface ExcelData {
  content: string;
  truncated: boolean;
  sheets: Array<{ index: number; name: string; state: string; dimensions: string | null }>;
  truncated_at: { sheet: string; row: number } | null;
  attachments: unknown[];
  images_omitted: number;
}

const SHEET = 'xl/worksheets/sheet1.xml';
const SMALL_CAP = 6000;

const sheetOf = (book: Buffer, part = SHEET) => Buffer.from(unzipSync(book)[part] as Uint8Array).toString('utf8');

/** A workbook whose sheet part is `xml`, deflated by hand as given (for damaged streams). */
function rezip(book: Buffer, xml: Buffer, deflated: Buffer): Buffer {
  return rawZip(
    Object.entries(unzipSync(book)).map(([name, data]) =>
      name === SHEET ? { name, data: deflated, method: 8 as const, crc: crc32(xml), compressedSize: deflated.length, uncompressedSize: xml.length } : entry(name, Buffer.from(data)),
    ),
  );
}

/** Every kind of cell exceljs writes, over three sheets (one hidden, one empty), with an image. */
async function kindsBook(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Kinds');
  ws.getCell('B2').value = { text: 'Seite', hyperlink: 'https://example.com/a' };
  ws.getCell('C2').value = { richText: [{ text: 'fett ' }, { font: { bold: true }, text: 'und | mehr' }] };
  ws.getCell('D2').value = 'verbunden';
  ws.mergeCells('D2:F3');
  ws.getCell('B3').value = true;
  ws.getCell('C3').value = { error: '#N/A' };
  ws.getCell('B5').value = 2;
  ws.getCell('C5').value = { formula: 'B5*2', result: 4, shareType: 'shared', ref: 'C5:C7' } as ExcelJS.CellValue;
  ws.getCell('B6').value = 0;
  ws.getCell('C6').value = { sharedFormula: 'C5', result: 0 } as ExcelJS.CellValue;
  ws.getCell('C7').value = { sharedFormula: 'C5', result: 10 } as ExcelJS.CellValue;
  ws.getCell('D7').value = { formula: 'NOW()' } as ExcelJS.CellValue;
  ws.getCell('B9').value = new Date(Date.UTC(2024, 1, 29, 8, 15));
  ws.getCell('C9').value = new Date(Date.UTC(2024, 1, 29));
  ws.getCell('D9').value = 'zwei\nZeilen \\ mit';
  ws.getCell('H12').value = '';
  ws.getCell('B12').value = 'Ende';
  const imageId = wb.addImage({ buffer: png() as unknown as ExcelJS.Buffer, extension: 'png' });
  ws.addImage(imageId, { tl: { col: 2, row: 3 }, ext: { width: 20, height: 20 } });
  const hidden = wb.addWorksheet('Versteckt', { state: 'hidden' });
  hidden.getCell('C3').value = 'innen';
  wb.addWorksheet('Leer');
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** A sparse sheet: text in its edge columns only far down, empty rows between, a second sheet after it. */
async function sparseBook(rows: number): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Dünn');
  for (let r = 3; r <= rows; r += 3) {
    ws.getCell(r, 3).value = `Zeile ${r}`;
    ws.getCell(r, 5).value = r * 1.5;
  }
  ws.getCell(rows - 1, 2).value = 'links unten';
  ws.getCell(rows - 2, 9).value = 'rechts unten';
  const second = wb.addWorksheet('Zwei');
  for (let r = 1; r <= 50; r++) second.addRow([r, `zwei ${r}`]);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

let t: TestApp;
let small: TestApp;
const corpus = new Map<string, Buffer>();

beforeAll(async () => {
  t = await makeApp({ TOOLGATE_TOOL_TIMEOUT_MS: '60000' });
  small = await makeApp({ TOOLGATE_TOOL_TIMEOUT_MS: '60000', TOOLGATE_MAX_OUTPUT_BYTES: String(SMALL_CAP) });
  const big = await largeXlsx(5000);
  const kinds = await kindsBook();
  const kindsXml = sheetOf(kinds);
  const sparse = await sparseBook(3000);
  corpus.set('big.xlsx', big);
  corpus.set('kinds.xlsx', kinds);
  corpus.set('sparse.xlsx', sparse);
  // Inline strings (rich and phonetic) and a link on an empty cell, written by hand (exceljs writes neither).
  const inline =
    '<row r="14"><c r="B14" t="inlineStr"><is><r><t>in</t></r><r><t xml:space="preserve">line &amp; </t></r></is></c><c r="C14" t="inlineStr"><is><t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></is></c></row>';
  corpus.set('inline.xlsx', withEntries(kinds, { [SHEET]: kindsXml.replace('</sheetData>', `${inline}</sheetData>`) }));
  // A merged range whose hidden cell keeps a value (LibreOffice can write one): exceljs shows it empty.
  corpus.set('merged-value.xlsx', withEntries(kinds, { [SHEET]: kindsXml.replace(/<c r="E2"[^>]*\/>/, '<c r="E2" t="inlineStr"><is><t>versteckt</t></is></c>') }));
  // Rows out of their order (exceljs sorts them) and a link on an empty cell (exceljs shows `[](target)`):
  // both answered by exceljs (the fallback).
  const row12 = /<row r="12"[\s\S]*?<\/row>/.exec(kindsXml)?.[0] ?? '';
  corpus.set('unordered.xlsx', withEntries(kinds, { [SHEET]: kindsXml.replace(row12, '').replace('<row r="9"', `${row12}<row r="9"`) }));
  corpus.set('link-empty.xlsx', withEntries(kinds, { [SHEET]: kindsXml.replace(/<hyperlink ref="B2" ([^>]*)\/>/, '<hyperlink ref="B2" $1/><hyperlink ref="G10" $1/>') }));
  // A chartsheet among the sheets (exceljs leaves it out of its list): answered by exceljs.
  const files = unzipSync(kinds);
  const text = (name: string) => Buffer.from(files[name] as Uint8Array).toString('utf8');
  corpus.set(
    'chartsheet.xlsx',
    withEntries(kinds, {
      'xl/workbook.xml': text('xl/workbook.xml').replace('</sheets>', '<sheet name="Diagramm" sheetId="9" r:id="rIdChart"/></sheets>'),
      'xl/_rels/workbook.xml.rels': text('xl/_rels/workbook.xml.rels').replace(
        '</Relationships>',
        '<Relationship Id="rIdChart" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/chartsheet" Target="chartsheets/sheet1.xml"/></Relationships>',
      ),
      'xl/chartsheets/sheet1.xml': '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><chartsheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetPr/></chartsheet>',
    }),
  );
  // Sheets without a <dimension>, and one that declares a single cell.
  const bigXml = sheetOf(big);
  corpus.set('no-dimension.xlsx', withEntries(big, { [SHEET]: bigXml.replace(/<dimension [^>]*\/>/, '') }));
  corpus.set('sparse-no-dimension.xlsx', withEntries(sparse, { [SHEET]: sheetOf(sparse).replace(/<dimension [^>]*\/>/, '<dimension ref="A1"/>') }));
  // No <dimension>, so read to the end keeping only the rows that fit, and a merged range found after the
  // rows hides a value among them: the answer comes from exceljs (the fallback).
  const merged = bigXml.replace(/<dimension [^>]*\/>/, '').replace('</sheetData>', '</sheetData><mergeCells count="1"><mergeCell ref="A3:B3"/></mergeCells>');
  corpus.set('merged-cut.xlsx', withEntries(big, { [SHEET]: merged }));
  for (const [name, book] of corpus) {
    await fs.writeFile(t.file(name), book);
    await fs.writeFile(small.file(name), book);
  }

  // The XML cut inside row 4900 and never closed, and a deflate stream damaged from three quarters on.
  const cut = bigXml.indexOf('<row r="4900"');
  await fs.writeFile(t.file('cut-xml.xlsx'), withEntries(big, { [SHEET]: `${bigXml.slice(0, cut)}<row r="4900"><c r="A4900"><v>1</v></c></ro` }));
  const raw = Buffer.from(bigXml, 'utf8');
  const deflated = deflateRawSync(raw);
  deflated.fill(0xff, Math.floor(deflated.length * 0.9));
  await fs.writeFile(t.file('cut-deflate.xlsx'), rezip(big, raw, deflated));
  await fs.writeFile(t.file('dtd.xlsx'), withEntries(big, { [SHEET]: bigXml.replace('<worksheet', '<!DOCTYPE w [<!ENTITY a "aaaa">]><worksheet') }));
}, 180_000);
afterAll(async () => {
  await t?.close();
  await small?.close();
});

async function readExcel(app: TestApp, args: Record<string, unknown>): Promise<ExcelData> {
  const res = await app.call('read_excel', args);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.status, JSON.stringify(res.body.error)).toMatch(/^(success|partial)$/);
  return res.body.data as ExcelData;
}

/** What the exceljs reader answers for the same workbook and arguments. */
async function exceljsAnswer(book: Buffer, args: { sheet?: string | number; formulas?: boolean }, maxOutputBytes: number) {
  const r = await XlsxText.fromExcelJS({ ExcelJS }, book, { sheet: args.sheet, formulas: args.formulas ?? false, maxOutputBytes, maxImages: 50, maxImageBytes: 32 * 1024 * 1024 });
  return { content: r.text, truncated: r.truncatedAt !== null, sheets: r.sheets, truncated_at: r.truncatedAt, images: r.attachments.length };
}

describe('read_excel without a range', () => {
  const cases: Array<[string, { sheet?: string | number; formulas?: boolean }]> = [];
  for (const name of ['big.xlsx', 'kinds.xlsx', 'sparse.xlsx', 'inline.xlsx', 'merged-value.xlsx', 'merged-cut.xlsx', 'unordered.xlsx', 'link-empty.xlsx', 'chartsheet.xlsx', 'no-dimension.xlsx', 'sparse-no-dimension.xlsx']) {
    cases.push([name, {}], [name, { formulas: true }], [name, { sheet: 1 }]);
  }
  cases.push(['kinds.xlsx', { sheet: 2 }], ['sparse.xlsx', { sheet: 2 }]);
  cases.push(['kinds.xlsx', { sheet: 'versteckt' }], ['big.xlsx', { sheet: 'Daten', formulas: true }]);

  it.each(cases)('answers %s %j exactly as the exceljs reader does, at the default cap and a small one', async (name, args) => {
    for (const [app, cap] of [
      [t, 256 * 1024],
      [small, SMALL_CAP],
    ] as const) {
      const data = await readExcel(app, { path: name, ...args });
      const expected = await exceljsAnswer(corpus.get(name) as Buffer, args, cap);
      expect({ content: data.content, truncated: data.truncated, sheets: data.sheets, truncated_at: data.truncated_at, images: data.attachments.length }, `cap ${cap}`).toEqual(expected);
    }
  });

  it('stops inflating once it has its rows: XML broken after them does not matter', async () => {
    const data = await readExcel(t, { path: 'cut-xml.xlsx' });
    const expected = await exceljsAnswer(corpus.get('big.xlsx') as Buffer, {}, 256 * 1024);
    expect(data.truncated_at).toEqual(expected.truncated_at);
    expect(data.truncated_at?.row).toBeLessThan(4900);
    expect(data.content).toBe(expected.content);
    // Reading on into the broken row reports it.
    const sheet = await t.call('read_excel', { path: 'cut-xml.xlsx', range: 'A4800:B4950' });
    expect(sheet.body.error?.details).toMatchObject({ office_code: 'DOCUMENT_INVALID' });
  });

  it('stops inflating once it has its rows: a deflate stream damaged after them does not matter', async () => {
    const data = await readExcel(t, { path: 'cut-deflate.xlsx' });
    expect(data.content).toBe((await exceljsAnswer(corpus.get('big.xlsx') as Buffer, {}, 256 * 1024)).content);
    const end = await t.call('read_excel', { path: 'cut-deflate.xlsx', range: 'A4990:B5001' });
    expect(end.body.error?.details).toMatchObject({ office_code: 'ARCHIVE_CORRUPT' });
  });

  it('takes a sheet it does not read from its declared dimension, as a range read does', async () => {
    // Sheet 1 declares more than its values (a styled cell); only sheet 2 is read.
    const wb = new ExcelJS.Workbook();
    const first = wb.addWorksheet('Eins');
    first.getCell('A1').value = 1;
    first.getCell('D4').numFmt = '0.00';
    wb.addWorksheet('Zwei').getCell('B2').value = 'zwei';
    await fs.writeFile(t.file('declared.xlsx'), Buffer.from(await wb.xlsx.writeBuffer()));
    const data = await readExcel(t, { path: 'declared.xlsx', sheet: 2 });
    expect(data.sheets.map((s) => s.dimensions)).toEqual(['A1:D4', 'B2:B2']);
    expect(data.content).toBe('## Sheet 2: Zwei\n\n|  | B |\n|---|---|\n| 2 | zwei |\n');
  });

  it('still refuses a DTD in the sheet it streams', async () => {
    const res = await t.call('read_excel', { path: 'dtd.xlsx' });
    expect(res.body.error?.code).toBe('ENCODING_ERROR');
    expect(res.body.error?.details).toMatchObject({ office_code: 'ARCHIVE_UNSAFE' });
  });
});
