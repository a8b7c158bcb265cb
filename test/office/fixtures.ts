// Documents built in the tests: real .docx/.xlsx files from the `docx` and exceljs packages, and hostile zips
// written byte by byte (lying headers, zip64 entry counts) where no library would write them.
import { randomBytes } from 'node:crypto';
import { crc32, createDeflateRaw, deflateRawSync, deflateSync } from 'node:zlib';
import { AlignmentType, Document, HeadingLevel, ImageRun, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import ExcelJS from 'exceljs';
import { unzipSync, zipSync, type Zippable } from 'fflate';

/** A 2×2 RGB PNG, built by hand so its exact bytes are known. */
export function png(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(2, 0);
  ihdr.writeUInt32BE(2, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  // Two rows, each a filter byte then two pixels: red, green / blue, white.
  const raw = Buffer.from([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255]);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** A .docx with a heading, non-ASCII text, bold/italic, a bullet list, a table and an embedded PNG. */
/** What sampleDocx reads as: headings, emphasis, a list, a table, non-ASCII text and the image. */
export const SAMPLE_DOCX_MARKDOWN = [
  '# Quarterly Überblick',
  '',
  'Grüße aus Köln — **fett** und *kursiv*. 日本語',
  '',
  '## Details',
  '',
  '- erstens',
  '- zweitens',
  '',
  '| Name | Menge |',
  '| --- | --- |',
  '| Äpfel | 3   |',
  '| Birnen | 5   |',
  '',
  '![Punkte](attachment:image1.png)',
  '',
].join('\n');

export async function sampleDocx(): Promise<Buffer> {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'Quarterly Überblick', heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ children: [new TextRun('Grüße aus Köln — '), new TextRun({ text: 'fett', bold: true }), new TextRun(' und '), new TextRun({ text: 'kursiv', italics: true }), new TextRun('. 日本語')] }),
          new Paragraph({ text: 'Details', heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ text: 'erstens', bullet: { level: 0 } }),
          new Paragraph({ text: 'zweitens', bullet: { level: 0 } }),
          new Table({
            rows: [new TableRow({ tableHeader: true, children: [cell('Name'), cell('Menge')] }), new TableRow({ children: [cell('Äpfel'), cell('3')] }), new TableRow({ children: [cell('Birnen'), cell('5')] })],
          }),
          new Paragraph({ alignment: AlignmentType.LEFT, children: [new ImageRun({ type: 'png', data: png(), transformation: { width: 20, height: 20 }, altText: { name: 'dot', description: 'Punkte', title: 'dot' } })] }),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

/** Pads a .docx with `bytes` of incompressible data in an image, for the 20 MB benchmark. */
export async function largeDocx(bytes: number, paragraphs: number): Promise<Buffer> {
  const children: Paragraph[] = [];
  for (let i = 0; i < paragraphs; i++) {
    children.push(new Paragraph({ text: `Abschnitt ${i}`, heading: HeadingLevel.HEADING_2 }));
    children.push(new Paragraph(`Absatz ${i}: Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. `.repeat(4)));
  }
  const images = 4;
  for (let i = 0; i < images; i++) {
    // A PNG header and random bytes: mammoth and the guard do not decode pixels, and random data does not compress.
    const data = Buffer.concat([png().subarray(0, 33), randomBytes(Math.floor(bytes / images))]);
    children.push(new Paragraph({ children: [new ImageRun({ type: 'png', data, transformation: { width: 50, height: 50 } })] }));
  }
  return Packer.toBuffer(new Document({ sections: [{ children }] }));
}

/** An .xlsx with two sheets: values, a formula with its cached result, a date, non-ASCII text, an image. */
export async function sampleXlsx(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Übersicht');
  ws.addRow(['Name', 'Menge', 'Preis', 'Datum']);
  ws.addRow(['Äpfel', 3, 1.5, new Date(Date.UTC(2024, 2, 1))]);
  ws.addRow(['Birnen | gelb', 5, 2.25, new Date(Date.UTC(2024, 2, 2, 13, 30))]);
  ws.getCell('B4').value = { formula: 'SUM(B2:B3)', result: 8 };
  ws.getCell('A4').value = 'Summe';
  const imageId = wb.addImage({ buffer: png() as unknown as ExcelJS.Buffer, extension: 'png' });
  ws.addImage(imageId, { tl: { col: 5, row: 1 }, ext: { width: 20, height: 20 } });
  const second = wb.addWorksheet('Zweites Blatt');
  second.getCell('B2').value = 'innen';
  second.getCell('C3').value = 42;
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** An .xlsx of `rows` rows × 6 columns, for the benchmark. */
export async function largeXlsx(rows: number): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Daten');
  ws.addRow(['id', 'name', 'menge', 'preis', 'summe', 'datum']);
  for (let i = 1; i <= rows; i++) {
    ws.addRow([i, `Artikel ${i} ü`, i % 97, (i % 13) * 1.25, { formula: `C${i + 1}*D${i + 1}`, result: (i % 97) * (i % 13) * 1.25 }, new Date(Date.UTC(2024, 0, 1 + (i % 365)))]);
  }
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** Replaces (or adds) entries of an existing zip, writing a new deflated zip with fflate. */
export function withEntries(zip: Buffer, replace: Record<string, Buffer | string>): Buffer {
  const files: Zippable = unzipSync(zip);
  for (const [name, data] of Object.entries(replace)) files[name] = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return Buffer.from(zipSync(files));
}

export interface RawEntry {
  name: string;
  /** The bytes stored in the archive (already deflated when method is 8). */
  data: Buffer;
  method: 0 | 8;
  crc: number;
  /** Sizes written in the central directory. */
  compressedSize: number;
  uncompressedSize: number;
  /** Sizes written in the local header (the central ones unless given). */
  localUncompressedSize?: number;
  flags?: number;
}

export function entry(name: string, content: Buffer | string, overrides: Partial<RawEntry> = {}): RawEntry {
  const raw = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const data = deflateRawSync(raw);
  return { name, data, method: 8, crc: crc32(raw), compressedSize: data.length, uncompressedSize: raw.length, ...overrides };
}

/** Writes a zip byte by byte, including what no honest writer would: lying sizes, zip64 entry counts. */
export function rawZip(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE((e.flags ?? 0) | 0x800, 6);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt32LE(e.crc >>> 0, 14);
    local.writeUInt32LE(e.compressedSize, 18);
    local.writeUInt32LE(e.localUncompressedSize ?? e.uncompressedSize, 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, e.data);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE((e.flags ?? 0) | 0x800, 8);
    cd.writeUInt16LE(e.method, 10);
    cd.writeUInt32LE(e.crc >>> 0, 16);
    cd.writeUInt32LE(e.compressedSize, 20);
    cd.writeUInt32LE(e.uncompressedSize, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    central.push(cd, name);
    offset += 30 + name.length + e.data.length;
  }
  const cdBytes = Buffer.concat(central);
  const zip64 = entries.length > 0xffff;
  const tail: Buffer[] = [];
  if (zip64) {
    const rec = Buffer.alloc(56);
    rec.writeUInt32LE(0x06064b50, 0);
    rec.writeBigUInt64LE(44n, 4);
    rec.writeUInt16LE(45, 12);
    rec.writeUInt16LE(45, 14);
    rec.writeBigUInt64LE(BigInt(entries.length), 24);
    rec.writeBigUInt64LE(BigInt(entries.length), 32);
    rec.writeBigUInt64LE(BigInt(cdBytes.length), 40);
    rec.writeBigUInt64LE(BigInt(offset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(offset + cdBytes.length), 8);
    locator.writeUInt32LE(1, 16);
    tail.push(rec, locator);
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(zip64 ? 0xffff : entries.length, 8);
  eocd.writeUInt16LE(zip64 ? 0xffff : entries.length, 10);
  eocd.writeUInt32LE(cdBytes.length, 12);
  eocd.writeUInt32LE(zip64 ? 0xffffffff : offset, 16);
  return Buffer.concat([...parts, cdBytes, ...tail, eocd]);
}

/** `bytes` zeros deflated in a stream: the compressed result is small and the zeros are never held at once. */
export async function deflatedZeros(bytes: number): Promise<{ data: Buffer; crc: number }> {
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve) => deflate.on('end', resolve));
  const block = Buffer.alloc(1024 * 1024);
  let crc = 0;
  for (let left = bytes; left > 0; left -= block.length) {
    const piece = left >= block.length ? block : block.subarray(0, left);
    crc = crc32(piece, crc);
    if (!deflate.write(piece)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await done;
  return { data: Buffer.concat(out), crc };
}

/**
 * The .docx of issue 21's memory finding: two entries of 60 MiB each, deflated about 23x (under the 100x
 * ratio limit, each under the 64 MiB entry limit, 120 MiB in all under the 128 MiB total), about 5 MiB on
 * disk. The document itself is empty and valid, so it reads as a success once inflated and checked.
 */
export function inflatingDocx(): Buffer {
  const big = Buffer.alloc(60 * 1024 * 1024);
  // One byte of noise every 55 keeps deflate near 23x; zeros alone would pass the ratio limit.
  let x = 1;
  for (let i = 0; i < big.length; i += 55) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    big[i] = x >>> 24;
  }
  const media = entry('word/media/image1.png', big);
  return rawZip([
    entry('[Content_Types].xml', '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
    entry('word/document.xml', '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>small</w:t></w:r></w:p></w:body></w:document>'),
    media,
    { ...media, name: 'word/media/image2.png' },
  ]);
}
