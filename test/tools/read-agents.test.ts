// Reading as agents ask for it (issue 17): read_file's view_range, tail and negative start_line (also on files
// above the whole-read limit, read from the end), media as base64 with their type, and read_multiple_files.
import fs from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, type ReadFileData, type TestApp } from '../helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeApp({ TOOLGATE_MAX_READ_BYTES: '4096' });
});
afterEach(async () => {
  await t.close();
});

const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join('');
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f3d5d10000000049454e44ae426082', 'hex');

describe('read_file ranges as agents send them', () => {
  it('view_range [start, end] and [start, -1]', async () => {
    await fs.writeFile(t.file('a.txt'), numbered(1, 10));
    const r = await t.call('read_file', { file_path: 'a.txt', view_range: [3, 4] });
    expect((r.body.data as ReadFileData).content).toBe('line 3\nline 4\n');
    const toEnd = await t.call('read_file', { path: 'a.txt', view_range: [9, -1] });
    expect((toEnd.body.data as ReadFileData).content).toBe('line 9\nline 10\n');
    const bad = await t.call('read_file', { path: 'a.txt', view_range: [0, 2] });
    expect(bad.body.error?.code).toBe('INVALID_PARAM');
  });

  it('tail and a negative start_line read the last lines of a small file with their numbers', async () => {
    await fs.writeFile(t.file('a.txt'), numbered(1, 10));
    const r = await t.call('read_file', { path: 'a.txt', tail: 3 });
    const d = r.body.data as ReadFileData;
    expect(d.content).toBe('line 8\nline 9\nline 10\n');
    expect([d.start_line, d.end_line, d.total_lines]).toEqual([8, 10, 10]);
    const neg = await t.call('read_file', { path: 'a.txt', start_line: -2 });
    expect((neg.body.data as ReadFileData).content).toBe('line 9\nline 10\n');
    const more = await t.call('read_file', { path: 'a.txt', tail: 50 });
    expect((more.body.data as ReadFileData).content).toBe(numbered(1, 10));
  });

  it('tail of a file above the whole-read limit is read from the end, lines counted from the end', async () => {
    await fs.writeFile(t.file('big.txt'), numbered(1, 5000));
    const r = await t.call('read_file', { path: 'big.txt', tail: 3 });
    expect(r.body.status).toBe('success');
    const d = r.body.data as ReadFileData;
    expect(d.content).toBe('line 4998\nline 4999\nline 5000\n');
    expect([d.start_line, d.end_line, d.total_lines]).toEqual([-3, -1, null]);
    expect(r.body.stats.bytes_read).toBeLessThan(200_000);
  });

  it('tail of a large file without a final newline, and over the output cap keeps the last whole lines', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_MAX_READ_BYTES: '4096', TOOLGATE_MAX_OUTPUT_BYTES: '100' });
    await fs.writeFile(t.file('big.txt'), numbered(1, 5000).slice(0, -1));
    const r = await t.call('read_file', { path: 'big.txt', tail: 2 });
    expect((r.body.data as ReadFileData).content).toBe('line 4999\nline 5000');
    const capped = await t.call('read_file', { path: 'big.txt', tail: 1000 });
    const d = capped.body.data as ReadFileData;
    expect(d.truncated).toBe(true);
    expect(d.content.endsWith('line 5000')).toBe(true);
    expect(d.content.startsWith('line ')).toBe(true);
    expect(Buffer.byteLength(d.content)).toBeLessThanOrEqual(100);
  });

  it('an image comes back as base64 with its media type', async () => {
    await fs.writeFile(t.file('dot.png'), PNG);
    const r = await t.call('read_file', { path: 'dot.png' });
    expect(r.body.status).toBe('success');
    const d = r.body.data as ReadFileData & { media_type?: string };
    expect(d.media_type).toBe('image/png');
    expect(d.encoding).toBe('base64');
    expect(Buffer.from(d.content, 'base64').equals(PNG)).toBe(true);
    await fs.writeFile(t.file('doc.pdf'), '%PDF-1.4\n%\xe2\xe3\n');
    expect(((await t.call('read_file', { path: 'doc.pdf' })).body.data as { media_type?: string }).media_type).toBe('application/pdf');
  });

  it('other binary files are still BINARY_FILE', async () => {
    await fs.writeFile(t.file('x.bin'), Buffer.from([1, 0, 2, 0, 3]));
    expect((await t.call('read_file', { path: 'x.bin' })).body.error?.code).toBe('BINARY_FILE');
  });
});

describe('read_multiple_files', () => {
  it('answers each path on its own: content, or its own error', async () => {
    await fs.writeFile(t.file('a.txt'), 'A\n');
    await fs.writeFile(t.file('b.txt'), 'B\n');
    const r = await t.call('read_multiple_files', { paths: ['a.txt', 'missing.txt', '../out.txt', 'b.txt'] });
    expect(r.body.status).toBe('success');
    const files = (r.body.data as { files: Array<{ path: string; status: string; data: ReadFileData | null; error: { code: string } | null }> }).files;
    expect(files.map((f) => f.status)).toEqual(['success', 'error', 'error', 'success']);
    expect(files[0]?.data?.content).toBe('A\n');
    expect(files[1]?.error?.code).toBe('NOT_FOUND');
    expect(files[2]?.error?.code).toBe('ACCESS_DENIED');
    expect(files[3]?.data?.content).toBe('B\n');
    expect(r.body.text).toBe('Read 2 of 4 files (2 failed).');
  });

  it('stops reading at the total output cap', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_MAX_OUTPUT_BYTES: '100' });
    for (const n of ['a', 'b', 'c']) await fs.writeFile(t.file(`${n}.txt`), `${n.repeat(60)}\n`);
    const r = await t.call('read_multiple_files', { paths: ['a.txt', 'b.txt', 'c.txt'] });
    expect(r.body.status).toBe('partial');
    const data = r.body.data as { truncated: boolean; files: Array<{ status: string; error: { code: string } | null }> };
    expect(data.truncated).toBe(true);
    expect(data.files.map((f) => f.status)).toEqual(['success', 'success', 'error']);
  });

  it('refuses more paths than it takes', async () => {
    const r = await t.call('read_multiple_files', { paths: Array.from({ length: 51 }, (_, i) => `${i}.txt`) });
    expect(r.body.error?.code).toBe('INVALID_PARAM');
  });
});

describe('edit_file as models call it', () => {
  it('takes file_path, old_str and new_str', async () => {
    await fs.writeFile(t.file('a.txt'), 'hello world\n');
    const r = await t.call('edit_file', { file_path: 'a.txt', old_str: 'world', new_str: 'there' });
    expect(r.body.status).toBe('success');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('hello there\n');
    const many = await t.call('edit_file', { path: 'a.txt', edits: [{ old_str: 'hello', new_str: 'hi' }] });
    expect(many.body.status).toBe('success');
  });

  it('insert_line inserts new_text after line N (0 = top), in the file line endings', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\r\ntwo\r\n');
    const top = await t.call('edit_file', { path: 'a.txt', insert_line: 0, new_text: 'zero' });
    expect(top.body.status).toBe('success');
    const mid = await t.call('edit_file', { path: 'a.txt', insert_line: 2, new_text: 'one and a half\nstill' });
    expect(mid.body.status).toBe('success');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('zero\r\none\r\none and a half\r\nstill\r\ntwo\r\n');
    expect((mid.body.data as { snippet: string }).snippet).toContain('3: one and a half');
    const past = await t.call('edit_file', { path: 'a.txt', insert_line: 99, new_text: 'x' });
    expect(past.body.error?.code).toBe('INVALID_PARAM');
    const both = await t.call('edit_file', { path: 'a.txt', insert_line: 1, old_text: 'x', new_text: 'y' });
    expect(both.body.error?.code).toBe('INVALID_PARAM');
  });

  it('insert_line after a last line without a newline keeps the file without one', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\ntwo');
    await t.call('edit_file', { path: 'a.txt', insert_line: 2, new_text: 'three' });
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('one\ntwo\nthree');
  });
});
