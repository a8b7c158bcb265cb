// Size limits at their edges (docs/api.md): whole-read limit, write limit, output cap with continuation,
// sparse huge files read by range, the request body limit and path/segment lengths.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type ReadFileData as ReadData, type TestApp } from '../helpers.js';
import { expectEnvelope } from '../security/envelope-checks.js';


const numbered = (from: number, to: number, width = 6) => {
  let s = '';
  for (let i = from; i <= to; i++) s += `line ${String(i).padStart(width, '0')}\n`;
  return s;
};

describe('limits: TOOLGATE_MAX_READ_BYTES', () => {
  const LIMIT = 4096;
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ TOOLGATE_MAX_READ_BYTES: String(LIMIT) });
  });
  afterAll(async () => t?.close());

  it('reads a file of exactly the limit whole', async () => {
    const content = numbered(1, 1000).slice(0, LIMIT - 1) + '\n';
    expect(Buffer.byteLength(content)).toBe(LIMIT);
    await fs.writeFile(t.file('exact.txt'), content);
    const res = await t.call('read_file', { path: 'exact.txt' });
    expectEnvelope(res.body, res.status);
    expect(res.body.status).toBe('success');
    const data = res.body.data as ReadData;
    expect(data.content).toBe(content);
    expect(data.version.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(data.truncated).toBe(false);
  });

  it('refuses a whole read one byte over the limit with FILE_TOO_LARGE naming the limit and line ranges', async () => {
    const content = numbered(1, 1000).slice(0, LIMIT) + '\n';
    expect(Buffer.byteLength(content)).toBe(LIMIT + 1);
    await fs.writeFile(t.file('over.txt'), content);
    const res = await t.call('read_file', { path: 'over.txt' });
    expectEnvelope(res.body, res.status);
    expect(res.status).toBe(413);
    expect(res.body.error?.code).toBe('FILE_TOO_LARGE');
    expect(res.body.error?.message).toContain('TOOLGATE_MAX_READ_BYTES');
    expect(res.body.error?.message).toContain(String(LIMIT));
    expect(res.body.error?.message).toMatch(/line range|start_line/);
  });

  it('reads a line range of the file over the limit', async () => {
    const content = numbered(1, 1000);
    await fs.writeFile(t.file('big.txt'), content);
    const res = await t.call('read_file', { path: 'big.txt', start_line: 11, end_line: 20 });
    expectEnvelope(res.body, res.status);
    expect(res.body.status).toBe('success');
    const data = res.body.data as ReadData;
    expect(data.content).toBe(numbered(11, 20));
    expect(data.start_line).toBe(11);
    expect(data.end_line).toBe(20);
    expect(data.total_lines).toBeNull();
    expect(data.version.sha256).toBeNull();
  });
});

describe('limits: TOOLGATE_MAX_WRITE_BYTES', () => {
  const LIMIT = 1000;
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ TOOLGATE_MAX_WRITE_BYTES: String(LIMIT) });
  });
  afterAll(async () => t?.close());

  it('accepts content of exactly the limit (counted in bytes, not characters)', async () => {
    const content = 'é'.repeat(LIMIT / 2);
    expect(Buffer.byteLength(content)).toBe(LIMIT);
    const res = await t.call('write_file', { path: 'exact.txt', content });
    expectEnvelope(res.body, res.status);
    expect(res.body.status).toBe('success');
    expect(await fs.readFile(t.file('exact.txt'), 'utf8')).toBe(content);
  });

  it('refuses one byte more with 413 and writes nothing', async () => {
    const content = 'é'.repeat(LIMIT / 2) + 'x';
    const res = await t.call('write_file', { path: 'over.txt', content });
    expectEnvelope(res.body, res.status);
    expect(res.status).toBe(413);
    expect(res.body.error?.code).toBe('FILE_TOO_LARGE');
    expect(res.body.error?.message).toContain('TOOLGATE_MAX_WRITE_BYTES');
    await expect(fs.access(t.file('over.txt'))).rejects.toThrow();
  });

  it('leaves an existing file untouched when the new content is over the limit', async () => {
    await fs.writeFile(t.file('keep.txt'), 'keep me\n');
    const read = await t.call('read_file', { path: 'keep.txt' });
    const sha = (read.body.data as ReadData).version.sha256;
    const res = await t.call('write_file', { path: 'keep.txt', content: 'x'.repeat(LIMIT + 1), expected_sha256: sha });
    expect(res.body.error?.code).toBe('FILE_TOO_LARGE');
    expect(await fs.readFile(t.file('keep.txt'), 'utf8')).toBe('keep me\n');
  });

  it('every writing tool refuses over it with its size and the limit in the message and the details', async () => {
    await fs.writeFile(t.file('crlf.txt'), 'a\r\n');
    const over = 'x'.repeat(LIMIT + 1);
    // Within the limit as sent, twice as long once the file's CRLF line endings are matched.
    const growsWithCrlf = '\n'.repeat(LIMIT);
    const cases = [
      { tool: 'write_file', args: { path: 'w.txt', content: over }, size: LIMIT + 1, message: `Content is ${LIMIT + 1} bytes, over TOOLGATE_MAX_WRITE_BYTES (${LIMIT}); write the file in parts with append_to_file.` },
      { tool: 'append_to_file', args: { path: 'crlf.txt', content: over }, size: LIMIT + 1, message: `Content is ${LIMIT + 1} bytes, over TOOLGATE_MAX_WRITE_BYTES (${LIMIT}); append it in smaller parts.` },
      {
        tool: 'append_to_file',
        args: { path: 'crlf.txt', content: growsWithCrlf },
        size: 2 * LIMIT,
        message: `Content is ${2 * LIMIT} bytes with CRLF line endings, over TOOLGATE_MAX_WRITE_BYTES (${LIMIT}); append it in smaller parts.`,
      },
      {
        tool: 'str_replace_based_edit_tool',
        args: { command: 'create', path: 'e.txt', file_text: over },
        size: LIMIT + 1,
        message: `file_text is ${LIMIT + 1} bytes, over TOOLGATE_MAX_WRITE_BYTES (${LIMIT}); create the file in parts (create, then insert).`,
      },
    ];
    for (const c of cases) {
      const res = await t.call(c.tool, c.args);
      expectEnvelope(res.body, res.status);
      expect(res.status, c.tool).toBe(413);
      expect(res.body.error, c.tool).toEqual({ code: 'FILE_TOO_LARGE', message: c.message, details: { size_bytes: c.size, limit_bytes: LIMIT } });
    }
    expect(await fs.readFile(t.file('crlf.txt'), 'utf8')).toBe('a\r\n');
  });
});

describe('limits: TOOLGATE_MAX_OUTPUT_BYTES', () => {
  const CAP = 4096;
  let t: TestApp;
  beforeAll(async () => {
    // The second file is over the whole-read limit, so the streamed line-range path is used for it.
    t = await makeApp({ TOOLGATE_MAX_OUTPUT_BYTES: String(CAP), TOOLGATE_MAX_READ_BYTES: String(8 * 1024) });
  });
  afterAll(async () => t?.close());

  async function readAll(rel: string, ranged: boolean): Promise<{ text: string; calls: number }> {
    let start = 1;
    let text = '';
    let calls = 0;
    for (;;) {
      const body = ranged || start > 1 ? { path: rel, start_line: start } : { path: rel };
      const res = await t.call('read_file', body);
      expectEnvelope(res.body, res.status);
      const data = res.body.data as ReadData;
      calls++;
      expect(Buffer.byteLength(data.content)).toBeLessThanOrEqual(CAP);
      expect(data.start_line).toBe(start);
      text += data.content;
      if (!data.truncated) {
        expect(res.body.status).toBe('success');
        expect(data.next_start_line).toBeNull();
        return { text, calls };
      }
      expect(res.body.status).toBe('partial');
      expect(data.next_start_line).toBe(data.end_line + 1);
      expect(res.body.text).toContain(`start_line ${data.next_start_line}`);
      start = data.next_start_line as number;
      if (calls > 1000) throw new Error('no progress');
    }
  }

  it('truncates a whole read at the cap and continuing from next_start_line yields the rest exactly', async () => {
    const content = numbered(1, 500); // 5.5 KB, under the read limit
    await fs.writeFile(t.file('small.txt'), content);
    const { text, calls } = await readAll('small.txt', false);
    expect(calls).toBeGreaterThan(1);
    expect(text).toBe(content);
  });

  it('continues through a file over the whole-read limit (streamed ranges) with no line lost or repeated', async () => {
    const content = numbered(1, 3000); // ~36 KB, over the read limit
    await fs.writeFile(t.file('large.txt'), content);
    const { text, calls } = await readAll('large.txt', true);
    expect(calls).toBeGreaterThan(1);
    expect(text).toBe(content);
  });

  it('continues across 64 KiB chunk boundaries with lines of varying length (streamed)', async () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let content = '';
    for (let i = 1; content.length < 300 * 1024; i++) content += `${i}:${'abcdefghij'.repeat(Math.floor(rand() * 300))}${i % 5 === 0 ? '\r\n' : '\n'}`;
    content += 'last line without newline';
    await fs.writeFile(t.file('varying.txt'), content);
    const { text, calls } = await readAll('varying.txt', true);
    expect(calls).toBeGreaterThan(70);
    expect(text).toBe(content);
  });

  it('handles multi-byte characters at the cap without splitting them', async () => {
    const make = (n: number) => Array.from({ length: n }, (_, i) => `${'ж'.repeat(i % 17)}✓ ${i}\n`).join('');
    const whole = make(300); // under the read limit: the whole-read path
    await fs.writeFile(t.file('utf8.txt'), whole);
    expect((await readAll('utf8.txt', false)).text).toBe(whole);
    const streamed = make(3000); // over it: the streamed path
    await fs.writeFile(t.file('utf8-big.txt'), streamed);
    expect((await readAll('utf8-big.txt', true)).text).toBe(streamed);
  });
});

describe('limits: a 1 GiB sparse file', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(async () => t?.close());

  it('reads lines 1-100 by range without reading the file whole', async () => {
    const head = numbered(1, 2000); // real text well past the 8 KiB binary sniff
    const tail = 'tail line 1\ntail line 2\n';
    const file = t.file('sparse.log');
    const fh = await fs.open(file, 'w');
    try {
      await fh.write(head, 0);
      await fh.truncate(1024 ** 3);
      await fh.write(tail, 1024 ** 3 - Buffer.byteLength(tail));
    } finally {
      await fh.close();
    }
    expect((await fs.stat(file)).size).toBe(1024 ** 3);

    const res = await t.call('read_file', { path: 'sparse.log', start_line: 1, end_line: 100 });
    expectEnvelope(res.body, res.status);
    expect(res.body.status).toBe('success');
    const data = res.body.data as ReadData;
    expect(data.content).toBe(numbered(1, 100));
    expect(data.total_lines).toBeNull();
    expect(data.end_line).toBe(100);
    expect(data.version.size_bytes).toBe(1024 ** 3);
    // Streamed: only the first chunk(s) were scanned.
    expect(res.body.stats.bytes_read).toBeLessThan(1024 * 1024);

    const whole = await t.call('read_file', { path: 'sparse.log' });
    expect(whole.status).toBe(413);
    expect(whole.body.error?.code).toBe('FILE_TOO_LARGE');
  });
});

describe('limits: TOOLGATE_BODY_LIMIT_BYTES', () => {
  const LIMIT = 2048;
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ TOOLGATE_BODY_LIMIT_BYTES: String(LIMIT) });
  });
  afterAll(async () => t?.close());

  it('accepts a body just under the limit', async () => {
    const envelopeOverhead = JSON.stringify({ path: 'under.txt', content: '' }).length;
    const content = 'u'.repeat(LIMIT - envelopeOverhead);
    const res = await t.call('write_file', { path: 'under.txt', content });
    expect(res.body.status).toBe('success');
  });

  it('answers a body over the limit with a 413 envelope and writes nothing', async () => {
    const res = await t.call('write_file', { path: 'over.txt', content: 'o'.repeat(LIMIT) });
    expectEnvelope(res.body, res.status);
    expect(res.status).toBe(413);
    expect(res.body.error?.code).toBe('FILE_TOO_LARGE');
    await expect(fs.access(t.file('over.txt'))).rejects.toThrow();
  });
});

describe('limits: path and segment lengths', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(async () => t?.close());

  /** A relative path of exactly `bytes` bytes made of segments of at most 200 bytes. */
  function pathOfBytes(bytes: number): string {
    const segs: string[] = [];
    let len = 0;
    while (len < bytes) {
      const room = bytes - len - (segs.length > 0 ? 1 : 0);
      const seg = 's'.repeat(Math.min(200, room));
      len += seg.length + (segs.length > 0 ? 1 : 0);
      segs.push(seg);
    }
    const p = segs.join('/');
    expect(Buffer.byteLength(p)).toBe(bytes);
    return p;
  }

  it('a 4096-byte path is checked (no 5xx, at most refused as too long or missing)', async () => {
    for (const tool of ['read_file', 'write_file']) {
      const res = await t.call(tool, { path: pathOfBytes(4096), ...(tool === 'write_file' && { content: 'x' }) });
      expectEnvelope(res.body, res.status);
      expect(res.status).toBeLessThan(500);
      if (res.body.status === 'error') expect(['INVALID_PARAM', 'NOT_FOUND']).toContain(res.body.error?.code);
    }
  });

  it('refuses a 4097-byte path with INVALID_PARAM naming the limit', async () => {
    for (const tool of ['read_file', 'write_file']) {
      const res = await t.call(tool, { path: pathOfBytes(4097), ...(tool === 'write_file' && { content: 'x' }) });
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe('INVALID_PARAM');
      expect(res.body.error?.message).toContain('4096');
    }
  });

  it('counts path length in bytes: 2049 two-byte characters are refused', async () => {
    const res = await t.call('read_file', { path: 'é'.repeat(2049) });
    expect(res.body.error?.code).toBe('INVALID_PARAM');
  });

  it('accepts a 255-byte segment and refuses a 256-byte one (bytes, not characters)', async () => {
    const ok = await t.call('write_file', { path: `d/${'n'.repeat(255)}`, content: 'x' });
    expect(ok.body.status).toBe('success');
    expect(await fs.readFile(t.file(`d/${'n'.repeat(255)}`), 'utf8')).toBe('x');
    const okUtf8 = await t.call('write_file', { path: `${'é'.repeat(127)}a`, content: 'x' });
    expect(okUtf8.body.status).toBe('success');
    for (const seg of ['n'.repeat(256), 'é'.repeat(128)]) {
      const res = await t.call('write_file', { path: `d/${seg}`, content: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe('INVALID_PARAM');
      expect(res.body.error?.message).toContain('255');
    }
  });
});
