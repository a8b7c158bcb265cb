import { describe, expect, it } from 'vitest';
import { OfficeError } from '../../src/office/errors.js';
import { capText, readDocx, readExcel } from '../../src/office/run.js';
import { largeXlsx, png, SAMPLE_DOCX_MARKDOWN, sampleDocx, sampleXlsx, withEntries } from './fixtures.js';

async function officeError(p: Promise<unknown>): Promise<OfficeError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OfficeError);
  return err as OfficeError;
}

describe('readDocx', () => {
  it('gives Markdown with headings, emphasis, a list, a table, non-ASCII text and the image', async () => {
    const result = await readDocx(await sampleDocx());
    expect(result.text).toBe(SAMPLE_DOCX_MARKDOWN);
    expect(result.truncated).toBe(false);
    expect(result.attachments).toHaveLength(1);
    expect(result.attachments[0]).toMatchObject({ name: 'image1.png', media_type: 'image/png' });
    expect(Buffer.compare(result.attachments[0]?.bytes as Buffer, png())).toBe(0);
  });

  it('caps the output at a line and says so', async () => {
    const result = await readDocx(await sampleDocx(), { maxOutputBytes: 60 });
    expect(result.truncated).toBe(true);
    expect(result.text).toBe('# Quarterly Überblick\n\n');
  });

  it('leaves images past the limit out and counts them', async () => {
    const result = await readDocx(await sampleDocx(), { maxImages: 0 });
    expect(result.attachments).toEqual([]);
    expect(result.imagesOmitted).toBe(1);
    expect(result.text).toContain('![Punkte](omitted:over-the-image-limit)');
  });

  it('reads a document whose embedded workbook is a zip: embeddings are skipped, not refused', async () => {
    const docx = withEntries(await sampleDocx(), { 'word/embeddings/Microsoft_Excel_Worksheet.xlsx': await sampleXlsx() });
    const result = await readDocx(docx);
    expect(result.text).toContain('# Quarterly Überblick');
  });

  it('refuses a workbook given as a document', async () => {
    const err = await officeError(readDocx(await sampleXlsx()));
    expect(err.code).toBe('DOCUMENT_INVALID');
    expect(err.envelopeCode).toBe('ENCODING_ERROR');
  });

  it('stops a parse past its time limit with TIMEOUT', async () => {
    const err = await officeError(readDocx(await sampleDocx(), { timeoutMs: 1 }));
    expect(err.code).toBe('TIMEOUT');
    expect(err.envelopeCode).toBe('TIMEOUT');
  });

  it('maps a parser out of memory to ARCHIVE_TOO_LARGE', async () => {
    // Every row shown (an output cap above the sheet's size) is every row held.
    const err = await officeError(readExcel(await largeXlsx(20_000), { memoryMb: 16, maxOutputBytes: 64 * 1024 * 1024 }));
    expect(err.code).toBe('ARCHIVE_TOO_LARGE');
    expect(err.message).toContain('16 MiB');
  });
});

describe('readExcel', () => {
  it('stops a streaming read past its time limit with TIMEOUT', async () => {
    expect((await officeError(readExcel(await largeXlsx(2000), { timeoutMs: 1 }))).code).toBe('TIMEOUT');
  });

  it('reads the first rows of a large sheet within a heap the whole workbook does not fit in', async () => {
    const result = await readExcel(await largeXlsx(20_000), { memoryMb: 16 });
    expect(result.truncatedAt).toMatchObject({ sheet: 'Daten' });
    expect(result.text.startsWith('## Sheet 1: Daten\n\n|  | A | B | C | D | E | F |\n')).toBe(true);
  });

  it('gives every sheet as a table with cell addresses, cached formula values, ISO dates and the image', async () => {
    const result = await readExcel(await sampleXlsx());
    expect(result.text).toBe(
      [
        '## Sheet 1: Übersicht',
        '',
        '|  | A | B | C | D |',
        '|---|---|---|---|---|',
        '| 1 | Name | Menge | Preis | Datum |',
        '| 2 | Äpfel | 3 | 1.5 | 2024-03-01 |',
        '| 3 | Birnen \\| gelb | 5 | 2.25 | 2024-03-02T13:30:00 |',
        '| 4 | Summe | 8 |  |  |',
        '',
        '![image at F2](attachment:sheet1-image1.png)',
        '',
        '## Sheet 2: Zweites Blatt',
        '',
        '|  | B | C |',
        '|---|---|---|',
        '| 2 | innen |  |',
        '| 3 |  | 42 |',
        '',
      ].join('\n'),
    );
    expect(result.sheets).toEqual([
      { index: 1, name: 'Übersicht', state: 'visible', dimensions: 'A1:D4' },
      { index: 2, name: 'Zweites Blatt', state: 'visible', dimensions: 'B2:C3' },
    ]);
    expect(result.attachments.map((a) => [a.name, a.media_type])).toEqual([['sheet1-image1.png', 'image/png']]);
    expect(Buffer.compare(result.attachments[0]?.bytes as Buffer, png())).toBe(0);
  });

  it('shows formulas next to their values when asked', async () => {
    const result = await readExcel(await sampleXlsx(), { sheet: 1, range: 'A4:B4', formulas: true });
    expect(result.text).toBe('## Sheet 1: Übersicht\n\n|  | A | B |\n|---|---|---|\n| 4 | Summe | 8 (=SUM(B2:B3)) |\n\n![image at F2](attachment:sheet1-image1.png)\n');
  });

  it('selects a sheet by name (any case) and a range, also in Sheet!A1 form', async () => {
    const byName = await readExcel(await sampleXlsx(), { sheet: 'zweites blatt', range: 'C3' });
    expect(byName.text).toBe('## Sheet 2: Zweites Blatt\n\n|  | C |\n|---|---|\n| 3 | 42 |\n');
    const prefixed = await readExcel(await sampleXlsx(), { range: "'Zweites Blatt'!$B$2:$C$2" });
    expect(prefixed.text).toBe('## Sheet 2: Zweites Blatt\n\n|  | B | C |\n|---|---|---|\n| 2 | innen |  |\n');
  });

  it('names the sheets when the selector fits none, and explains a bad range', async () => {
    const noSheet = await officeError(readExcel(await sampleXlsx(), { sheet: 'Gibt es nicht' }));
    expect(noSheet.code).toBe('INVALID_SELECTOR');
    expect(noSheet.message).toBe("The workbook has no sheet 'Gibt es nicht'; its sheets are 1: 'Übersicht', 2: 'Zweites Blatt'.");
    const noIndex = await officeError(readExcel(await sampleXlsx(), { sheet: 3 }));
    expect(noIndex.message).toContain('no sheet number 3');
    const badRange = await officeError(readExcel(await sampleXlsx(), { range: 'A1-C3' }));
    expect(badRange.code).toBe('INVALID_SELECTOR');
    expect(badRange.envelopeCode).toBe('INVALID_PARAM');
  });

  it('stops at the output cap on a row and says where', async () => {
    const result = await readExcel(await largeXlsx(2000), { maxOutputBytes: 4096 });
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(4096);
    expect(result.truncatedAt?.sheet).toBe('Daten');
    const lastRow = Number(/\| (\d+) \|[^\n]*\n$/.exec(result.text)?.[1]);
    expect(result.truncatedAt?.row).toBe(lastRow + 1);
  });

  it('refuses .xls by name and an OLE file by content, saying what to do', async () => {
    const byName = await officeError(readExcel(await sampleXlsx(), { fileName: 'reports/old.XLS' }));
    expect(byName.code).toBe('UNSUPPORTED_FORMAT');
    expect(byName.message).toContain('Save the workbook as .xlsx');
    const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]);
    expect((await officeError(readExcel(ole, { fileName: 'book.xlsx' }))).code).toBe('UNSUPPORTED_FORMAT');
  });

  it('keeps the event loop answering while a workbook parses', async () => {
    const book = await largeXlsx(5000);
    const order: string[] = [];
    const parse = readExcel(book).then(() => order.push('parsed'));
    await new Promise((resolve) => setTimeout(resolve, 0));
    order.push('tick');
    await parse;
    expect(order).toEqual(['tick', 'parsed']);
  });
});

describe('capText', () => {
  it('cuts inside a long line without splitting a character', () => {
    expect(capText('äääää', 5)).toEqual({ text: 'ää', truncated: true });
    expect(capText('ab\ncd\n', 5)).toEqual({ text: 'ab\n', truncated: true });
    expect(capText('ab', 5)).toEqual({ text: 'ab', truncated: false });
  });
});
