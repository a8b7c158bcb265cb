// Issue 12, finding 4 ("not the envelope"): deep JSON, a replacement past V8's string limit, header bytes
// Node's HTTP parser refuses and a tool name over the router's parameter limit each got a 500 or a bare
// framework body. Every one now answers the envelope with a code from the table.
import fs from 'node:fs/promises';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Envelope } from '../../src/envelope.js';
import { makeApp, type TestApp } from '../helpers.js';
import { expectEnvelope, expectNoStackTrace } from './envelope-checks.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeApp();
});
afterEach(async () => {
  await t.close();
});

function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

async function post(url: string, payload: string): Promise<{ status: number; body: Envelope; raw: string }> {
  const res = await t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
  expectNoStackTrace(res.body);
  const body = JSON.parse(res.body) as Envelope;
  expectEnvelope(body, res.statusCode);
  return { status: res.statusCode, body, raw: res.body };
}

/** Sends raw bytes to a listening server and reads the answer until the server closes. */
function rawHttp(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(request));
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

function parseRawResponse(raw: string): { status: number; headers: string; body: Envelope } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(raw.slice(split + 4)) as Envelope };
}

describe('JSON nested about 5,000 deep gives 500', () => {
  it.each([5_000, 100_000])('an unknown parameter nested %i deep is INVALID_PARAM, its echo cut at a depth', async (depth) => {
    const res = await post('/v1/tools/read_file', `{"path":"x.txt","deep":${nested(depth)}}`);
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_PARAM');
    const echo = res.body.context.params_input as { path: string; deep: unknown };
    expect(echo.path).toBe('x.txt');
    expect(res.raw).toContain('nested deeper than');
    expect(res.raw.length).toBeLessThan(4096);
  });

  it('a deeply nested value where a string belongs is INVALID_PARAM and writes nothing', async () => {
    const res = await post('/v1/tools/write_file', `{"path":"x.txt","content":${nested(5_000)}}`);
    expect(res.body.error?.code).toBe('INVALID_PARAM');
    await expect(fs.stat(t.file('x.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('a replacement whose result exceeds V8 string limit gives 500', () => {
  // 512 KiB: 523,264 characters that '.' matches, so a 2,000-character replacement of each passes V8's string limit.
  const FILE = `${'a'.repeat(511)}\n`.repeat(1024);

  beforeEach(async () => {
    await fs.writeFile(t.file('big.txt'), FILE);
  });

  it.each([
    ['regex . to a 2,000-character text', { old: '.', new: 'x'.repeat(2000), regex: true }],
    ['regex . to $& repeated 2,000 times', { old: '.', new: '$&'.repeat(2000), regex: true }],
    ["regex ^ to $' repeated (the rest of the file, many times over)", { old: '^', new: "$'".repeat(1000), regex: true }],
    ['literal a to a 2,000-character text', { old: 'a', new: 'x'.repeat(2000) }],
  ])('%s is FILE_TOO_LARGE before the result is built, and the file is unchanged', async (_, args) => {
    const res = await post('/v1/tools/replace_in_file', JSON.stringify({ path: 'big.txt', ...args }));
    expect(res.status).toBe(413);
    expect(res.body.error?.code).toBe('FILE_TOO_LARGE');
    expect(res.body.error?.message).toContain('TOOLGATE_MAX_WRITE_BYTES');
    expect(await fs.readFile(t.file('big.txt'), 'utf8')).toBe(FILE);
  });

  it('a growing replacement within the limit still applies', async () => {
    const res = await post('/v1/tools/replace_in_file', JSON.stringify({ path: 'big.txt', old: '^a', new: '$&$&', regex: true, dry_run: true }));
    expect(res.body.status).toBe('partial');
    expect((res.body.data as { replacements: number }).replacements).toBe(1024);
  });
});

describe('an X-Request-Id with control characters gets Node\'s own {"error":"Bad Request"}', () => {
  it.each([
    ['SOH', 0x01],
    ['NUL', 0x00],
    ['ESC', 0x1b],
    ['DEL', 0x7f],
  ])('a header byte %s refused by the HTTP parser is answered with the envelope (INVALID_PARAM)', async (_, byte) => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as net.AddressInfo;
    const body = '{"path":"x.txt"}';
    const raw = await rawHttp(
      port,
      `POST /v1/tools/read_file HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
        `X-Request-Id: req${String.fromCharCode(byte)}1\r\n\r\n${body}`,
    );
    const res = parseRawResponse(raw);
    expectEnvelope(res.body, res.status);
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_PARAM');
    expect(res.body.error?.message).toContain('X-Request-Id');
    expect(res.headers).toContain('content-type: application/json');
    expect(res.headers).toContain(`x-request-id: ${res.body.context.request_id}`);
  });

  it('headers over the size limit are answered with the envelope (FILE_TOO_LARGE)', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as net.AddressInfo;
    const raw = await rawHttp(port, `GET /livez HTTP/1.1\r\nHost: localhost\r\nX-Filler: ${'f'.repeat(64 * 1024)}\r\n\r\n`);
    const res = parseRawResponse(raw);
    expectEnvelope(res.body, res.status);
    expect(res.body.error?.code).toBe('FILE_TOO_LARGE');
  });
});

describe('a tool name over 100 characters gets Fastify bare 414', () => {
  it('an unknown tool of 150 characters is NOT_FOUND, its name shortened in the message', async () => {
    const name = 't'.repeat(150);
    const res = await post(`/v1/tools/${name}`, '{}');
    expect(res.status).toBe(404);
    expect(res.body.error?.code).toBe('NOT_FOUND');
    expect(res.body.error?.message).toContain('(160 chars)');
    expect(res.raw).not.toContain(name);
  });

  it('a project id of 150 characters is NOT_FOUND too, and an unknown tool of exactly 100 reaches the executor', async () => {
    const project = await post(`/v1/projects/${'p'.repeat(150)}/tools/read_file`, '{"path":"a"}');
    expect(project.body.error?.code).toBe('NOT_FOUND');
    const hundred = await post(`/v1/tools/${'u'.repeat(100)}`, '{}');
    expect(hundred.body.error?.code).toBe('NOT_FOUND');
    // The message names the tools inline: a model cannot call GET /v1/tools (issue 15, point 5).
    expect(hundred.body.error?.message).toContain('the tools are: write_file, read_file, ');
  });

  it('a URL that does not decode is INVALID_PARAM', async () => {
    const res = await post('/v1/tools/read%E0%A4%A', '{}');
    expect(res.body.error?.code).toBe('INVALID_PARAM');
  });
});
