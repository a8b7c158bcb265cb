// read_file by line range on a file over TOOLGATE_MAX_READ_BYTES (the streamed path, src/workspace/lines.ts),
// checked against a plain in-memory reference: ranges starting on either side of a 64 KiB chunk boundary,
// CRLF split across it, a last line without newline, the output cap, start_line past the end.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINE_RANGE_CHUNK_BYTES as CHUNK } from '../../src/workspace/lines.js';
import { makeApp, type ReadFileData as ReadData, type TestApp } from '../helpers.js';
import { expectEnvelope } from '../security/envelope-checks.js';
import { expectedRange, lineAtByte, splitLines } from '../workspace/line-range-reference.js';


const CAP = 4096;
let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ TOOLGATE_MAX_READ_BYTES: '1024', TOOLGATE_MAX_OUTPUT_BYTES: String(CAP) });
});
afterAll(async () => t?.close());

async function expectRange(rel: string, file: Buffer, start: number, end?: number, encoding?: string): Promise<void> {
  const res = await t.call('read_file', { path: rel, start_line: start, ...(end !== undefined && { end_line: end }), ...(encoding && { encoding }) });
  expectEnvelope(res.body, res.status);
  // Read as utf-8, a BOM is left out of line 1 and reported (bom: true), as by a whole read.
  const bom = encoding !== 'latin1' && file.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]));
  const want = expectedRange(file, start, end, CAP, false, bom);
  const data = res.body.data as ReadData;
  const where = `${rel} lines ${start}-${end ?? ''}`;
  expect(data.content, where).toBe(want.bytes.toString(encoding === 'latin1' ? 'latin1' : 'utf8'));
  expect({ ...data, content: undefined }, where).toMatchObject({
    start_line: start,
    end_line: want.endLine,
    total_lines: want.totalLines,
    truncated: want.truncated,
    next_start_line: want.nextStartLine,
    bom,
  });
  expect(res.body.status, where).toBe(want.truncated ? 'partial' : 'success');
  expect(res.body.stats, where).toMatchObject({ bytes_read: want.bytesScanned, lines: Math.max(0, want.endLine - start + 1) });
}

/** Ranges around line `at`: starting just before, on and after it, ending on it, soon after, at and past the end. */
async function expectRangesAround(rel: string, file: Buffer, at: number): Promise<void> {
  const total = splitLines(file).length;
  for (const start of [at - 1, at, at + 1].filter((n) => n >= 1)) {
    for (const end of [undefined, start, start + 2, total, total + 5].filter((n) => n === undefined || n >= start)) {
      await expectRange(rel, file, start, end);
    }
  }
}

/** Lines of varying length (a fifth of them CRLF) up to `size` bytes, seeded. */
function varyingLines(size: number, seed: number): string {
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let s = '';
  for (let i = 1; s.length < size; i++) s += `${i}:${'abcdefghij'.repeat(Math.floor(rand() * 30))}${i % 5 === 0 ? '\r\n' : '\n'}`;
  return s;
}

describe('read_file line ranges across chunk boundaries (streamed)', () => {
  it('starts on either side of every chunk boundary, with CRLF and a last line without newline', async () => {
    const file = Buffer.from(`${varyingLines(4 * CHUNK + 1000, 11)}last line without newline`);
    await fs.writeFile(t.file('varying.txt'), file);
    const total = splitLines(file).length;
    for (let b = CHUNK; b < file.length; b += CHUNK) await expectRangesAround('varying.txt', file, lineAtByte(file, b));
    for (const start of [total - 2, total, total + 1, total + 10]) {
      await expectRange('varying.txt', file, start);
      await expectRange('varying.txt', file, start, start + 1);
    }
  });

  it('a CRLF split by a chunk boundary, and a line ending on the last byte of a chunk', async () => {
    const filler = (bytes: number) => {
      let s = '';
      for (let i = 0; s.length < bytes; i++) s += `filler ${i} ${'-'.repeat(i % 40)}\r\n`;
      return s.slice(0, bytes - 2) + '\r\n';
    };
    // The '\r' of a line is the last byte of the first chunk and its '\n' the first of the second; a line
    // ends exactly at the end of the second chunk, so the next one starts the third.
    const head = filler(CHUNK - 100) + `${'x'.repeat(99)}\r`;
    const body = `\n${filler(CHUNK - 1)}`;
    const file = Buffer.from(`${head}${body}third chunk\r\n${filler(CHUNK)}end\r\n`);
    expect(file[CHUNK - 1]).toBe(13);
    expect(file[CHUNK]).toBe(10);
    expect(file[2 * CHUNK - 1]).toBe(10);
    await fs.writeFile(t.file('crlf.txt'), file);
    const split = lineAtByte(file, CHUNK);
    await expectRangesAround('crlf.txt', file, split);
    await expectRangesAround('crlf.txt', file, lineAtByte(file, 2 * CHUNK));
    const res = await t.call('read_file', { path: 'crlf.txt', start_line: split, end_line: split });
    expect((res.body.data as ReadData).content).toBe(`${'x'.repeat(99)}\r\n`);
  });

  it('a file ending with a newline exactly at a chunk boundary, read to its last line', async () => {
    let s = '';
    for (let i = 1; s.length < 2 * CHUNK; i++) s += `row ${i}\n`;
    const file = Buffer.from(s.slice(0, 2 * CHUNK - 1) + '\n');
    expect(file.length).toBe(2 * CHUNK);
    await fs.writeFile(t.file('exact.txt'), file);
    const total = splitLines(file).length;
    await expectRangesAround('exact.txt', file, total);
    await expectRangesAround('exact.txt', file, lineAtByte(file, CHUNK));
  });

  it('cuts a first line over the cap that starts in one chunk and ends in another, without splitting a character', async () => {
    const before = varyingLines(CHUNK - 3000, 5);
    const long = `${'ж✓'.repeat(2000)}\n`; // 10 KB across the boundary
    const file = Buffer.from(`${before}${long}${varyingLines(CHUNK, 9)}${long.trimEnd()}`);
    await fs.writeFile(t.file('long.txt'), file);
    const total = splitLines(file).length;
    const at = lineAtByte(file, CHUNK);
    await expectRangesAround('long.txt', file, at);
    const res = await t.call('read_file', { path: 'long.txt', start_line: at });
    const data = res.body.data as ReadData;
    expect([data.truncated, data.end_line, data.next_start_line]).toEqual([true, at, at + 1]);
    // The last line, over the cap and without newline: cut, and the scan reaches the end (total known).
    await expectRange('long.txt', file, total);
    await expectRange('long.txt', file, total - 1);
  });

  it('answers a BOM file by range as a whole read of the same file would (content, cap, bom)', async () => {
    const whole = await makeApp({ TOOLGATE_MAX_OUTPUT_BYTES: String(CAP) });
    try {
      // Line 1 ends 1 byte past the cap with its BOM and 2 bytes under it without; lines 2-3 fill the rest.
      const file = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${'b'.repeat(CAP - 3)}\n${'c'.repeat(CAP - 10)}\n`), Buffer.from(varyingLines(CHUNK + 5000, 29))]);
      await fs.writeFile(t.file('bom-cap.txt'), file);
      await fs.writeFile(whole.file('bom-cap.txt'), file);
      const total = splitLines(file).length;
      for (const [start, end] of [[1, undefined], [1, 1], [1, 2], [2, 3], [2, undefined], [total - 1, undefined], [total, total]] as const) {
        const body = { path: 'bom-cap.txt', start_line: start, ...(end !== undefined && { end_line: end }) };
        const streamed = await t.call('read_file', body);
        const read = await whole.call('read_file', body);
        const pick = (d: ReadData) => ({ content: d.content, start_line: d.start_line, end_line: d.end_line, truncated: d.truncated, next_start_line: d.next_start_line, bom: d.bom });
        expect(pick(streamed.body.data as ReadData), `lines ${start}-${end ?? ''}`).toEqual(pick(read.body.data as ReadData));
        expect((streamed.body.data as ReadData).bom).toBe(true);
      }
      const one = (await t.call('read_file', { path: 'bom-cap.txt', start_line: 1 })).body.data as ReadData;
      expect([one.content, one.end_line, one.truncated]).toEqual([`${'b'.repeat(CAP - 3)}\n`, 1, true]);
    } finally {
      await whole.close();
    }
  });

  it('answers a start_line past the end with no lines and the total, not an error', async () => {
    const file = Buffer.from(varyingLines(2 * CHUNK + 500, 3));
    await fs.writeFile(t.file('past.txt'), file);
    const total = splitLines(file).length;
    for (const start of [total + 1, total + 2, total + 1_000_000]) {
      await expectRange('past.txt', file, start);
      await expectRange('past.txt', file, start, start + 10);
      const data = (await t.call('read_file', { path: 'past.txt', start_line: start })).body.data as ReadData;
      expect([data.content, data.end_line, data.total_lines]).toEqual(['', start - 1, total]);
    }
  });

  it('leaves the BOM out of line 1 and answers bom: true for any range; latin1 decodes the same bytes', async () => {
    const file = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(varyingLines(CHUNK + 5000, 17))]);
    await fs.writeFile(t.file('bom.txt'), file);
    await expectRangesAround('bom.txt', file, 2);
    await expectRangesAround('bom.txt', file, lineAtByte(file, CHUNK));
    const first = await t.call('read_file', { path: 'bom.txt', start_line: 1, end_line: 1 });
    expect((first.body.data as ReadData).content).toBe((splitLines(file)[0] as Buffer).subarray(3).toString());
    expect((first.body.data as ReadData).bom).toBe(true);
    // latin1 has no BOM: the three bytes are the characters they decode to, as in a whole read.
    await expectRange('bom.txt', file, 1, 3, 'latin1');
    expect(((await t.call('read_file', { path: 'bom.txt', start_line: 1, end_line: 1, encoding: 'latin1' })).body.data as ReadData).bom).toBe(false);
    const latin = Buffer.from(varyingLines(CHUNK + 5000, 23).replace(/a/g, '\u00e9'), 'latin1');
    await fs.writeFile(t.file('latin1.txt'), latin);
    const at = lineAtByte(latin, CHUNK);
    for (const start of [at - 1, at, at + 1]) await expectRange('latin1.txt', latin, start, start + 3, 'latin1');
  });
});
