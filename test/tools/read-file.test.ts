import fs from 'node:fs/promises';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, withVersion, type ReadFileData as ReadData, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(async () => {
  await t.close();
});


const read = async (body: Record<string, unknown>) => {
  const r = await t.call('read_file', body);
  return { ...r, data: r.body.data as ReadData };
};

describe('read_file', () => {
  it('reads a whole file with its version, ETag and the seed text', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\ntwo\nthree\n');
    const r = await read({ path: 'a.txt' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    expect(r.data).toMatchObject({ content: 'one\ntwo\nthree\n', total_lines: 3, start_line: 1, end_line: 3, truncated: false, next_start_line: null, bom: false });
    expect(r.data.version.size_bytes).toBe(14);
    expect(r.headers.etag).toBe(`"${r.data.version.sha256}"`);
    expect(r.body.text).toBe(withVersion("Read 'a.txt' (3 lines).", r.body));
    expect(r.body.stats.bytes_read).toBe(14);
    expect(r.body.context).toMatchObject({ path_resolved: 'a.txt', risk: 'read', risk_level: 'low' });
  });

  it('reads a line range, inclusive, and line numbers on request', async () => {
    await fs.writeFile(t.file('r.txt'), Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    const r = await read({ path: 'r.txt', start_line: 5, end_line: 7, line_numbers: true });
    expect(r.data.content).toBe('     5\tline 5\n     6\tline 6\n     7\tline 7\n');
    expect(r.data).toMatchObject({ start_line: 5, end_line: 7, total_lines: 20 });
    expect(r.body.text).toBe(withVersion("Read lines 5-7 of 'r.txt' (20 lines).", r.body));
    const tail = await read({ path: 'r.txt', start_line: 19 });
    expect(tail.data.content).toBe('line 19\nline 20\n');
    const past = await read({ path: 'r.txt', start_line: 21 });
    expect([past.status, past.body.error?.code]).toEqual([400, 'INVALID_PARAM']);
    const reversed = await read({ path: 'r.txt', start_line: 5, end_line: 4 });
    expect(reversed.body.error?.code).toBe('INVALID_PARAM');
  });

  it('keeps CRLF, reports a UTF-8 BOM without returning it, and reads a file without final newline', async () => {
    await fs.writeFile(t.file('crlf.txt'), '\uFEFFa\r\nb\r\nc');
    const r = await read({ path: 'crlf.txt' });
    expect(r.data).toMatchObject({ content: 'a\r\nb\r\nc', bom: true, total_lines: 3 });
  });

  it('decodes other encodings with iconv-lite and refuses unknown ones', async () => {
    await fs.writeFile(t.file('cp1251.txt'), iconv.encode('Привет, мир\n', 'windows-1251'));
    expect((await read({ path: 'cp1251.txt', encoding: 'windows-1251' })).data.content).toBe('Привет, мир\n');
    await fs.writeFile(t.file('latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const bad = await read({ path: 'latin1.txt' });
    expect([bad.status, bad.body.error?.code]).toEqual([422, 'ENCODING_ERROR']);
    expect((await read({ path: 'latin1.txt', encoding: 'latin1' })).data.content).toBe('café\n');
    await fs.writeFile(t.file('u16.txt'), iconv.encode('\uFEFFhi there\n', 'utf-16le'));
    expect((await read({ path: 'u16.txt', encoding: 'utf-16le' })).data.content).toBe('hi there\n');
    const unknown = await read({ path: 'a.txt', encoding: 'klingon-8' });
    expect([unknown.status, unknown.body.error?.code]).toEqual([400, 'INVALID_PARAM']);
  });

  it('detects binary files and reads them as base64', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]);
    await fs.writeFile(t.file('img.png'), bytes);
    const r = await read({ path: 'img.png' });
    expect([r.status, r.body.error?.code]).toEqual([422, 'BINARY_FILE']);
    expect(r.body.error?.message).toContain('base64');
    const b = await read({ path: 'img.png', encoding: 'base64' });
    expect(Buffer.from(b.data.content, 'base64').equals(bytes)).toBe(true);
    const ranged = await read({ path: 'img.png', encoding: 'base64', start_line: 1 });
    expect(ranged.body.error?.code).toBe('INVALID_PARAM');
  });

  it('answers NOT_FOUND, IS_DIRECTORY and schema errors in the envelope', async () => {
    const missing = await read({ path: 'nope.txt' });
    expect([missing.status, missing.body.error?.code, missing.body.error?.message]).toEqual([404, 'NOT_FOUND', 'File not found: nope.txt']);
    await fs.mkdir(t.file('dir'), { recursive: true });
    expect((await read({ path: 'dir' })).body.error?.code).toBe('IS_DIRECTORY');
    const schema = await read({ path: 'a.txt', start_line: 0 });
    expect([schema.status, schema.body.error?.code]).toEqual([400, 'INVALID_PARAM']);
    const extra = await read({ path: 'a.txt', bogus: 1 });
    expect(extra.body.error?.message).toContain('bogus');
  });

  it('answers to the seed aliases read and file-read', async () => {
    expect((await t.call('read', { path: 'a.txt' })).body.status).toBe('success');
    expect((await t.call('file-read', { path: 'a.txt' })).body.status).toBe('success');
  });

  it('reads an empty file', async () => {
    await fs.writeFile(t.file('empty.txt'), '');
    const r = await read({ path: 'empty.txt' });
    expect(r.data).toMatchObject({ content: '', total_lines: 0, truncated: false });
  });
});
