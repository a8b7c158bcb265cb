// Every answer is the envelope (docs/api.md), including requests that never reach a tool: bad JSON, wrong
// content type, unknown routes and tools, oversized bodies and schema violations. No stack traces.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS, type Envelope } from '../../src/envelope.js';
import { TOOLS } from '../../src/tools/registry.js';
import { makeApp, type TestApp } from '../helpers.js';
import { expectEnvelope, expectNoStackTrace, expectParamsEcho } from './envelope-checks.js';
import { argsFor, pathKeysOf } from './tool-args.js';

const BODY_LIMIT = 4096;
let t: TestApp;

interface Raw {
  status: number;
  raw: string;
  body: Envelope;
  contentType: string;
}

async function raw(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: string | Buffer, headers: Record<string, string> = {}): Promise<Raw> {
  const res = await t.app.inject({ method, url, ...(payload !== undefined && { payload }), headers });
  expectNoStackTrace(res.body);
  return { status: res.statusCode, raw: res.body, body: JSON.parse(res.body) as Envelope, contentType: String(res.headers['content-type']) };
}

function expectError(res: Raw, code: keyof typeof ERROR_STATUS): void {
  expectEnvelope(res.body, res.status);
  expect(res.body.status).toBe('error');
  expect(res.body.error?.code, res.raw).toBe(code);
  expect(res.status).toBe(ERROR_STATUS[code]);
  expect(res.contentType).toMatch(/^application\/json/);
  expect(res.body.error?.message.length).toBeGreaterThan(0);
}

const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  t = await makeApp({ TOOLGATE_BODY_LIMIT_BYTES: String(BODY_LIMIT) });
});
afterAll(async () => {
  await t?.close();
});

describe('envelope: requests that never reach a tool', () => {
  it.each(['{bad', '{"path": "a",}', '{"path": "a"', "{'path': 'a'}", '\u0000', 'undefined'])('malformed JSON %j is INVALID_PARAM', async (payload) => {
    expectError(await raw('POST', '/v1/tools/read_file', payload, json), 'INVALID_PARAM');
  });

  it('an empty JSON body is INVALID_PARAM', async () => {
    expectError(await raw('POST', '/v1/tools/read_file', '', json), 'INVALID_PARAM');
  });

  it.each(['[1,2]', '"a string"', '42', 'null', 'true', '[]'])('a non-object body %s is INVALID_PARAM', async (payload) => {
    expectError(await raw('POST', '/v1/tools/read_file', payload, json), 'INVALID_PARAM');
  });

  it('an unknown tool is NOT_FOUND', async () => {
    const res = await raw('POST', '/v1/tools/no_such_tool', '{"path":"a"}', json);
    expectError(res, 'NOT_FOUND');
    expect(res.body.error?.message).toContain('no_such_tool');
  });

  it('an unknown tool with a hostile name is NOT_FOUND and echoes no path', async () => {
    const res = await raw('POST', '/v1/tools/..%2F..%2Fetc%2Fpasswd', '{}', json);
    expectEnvelope(res.body, res.status);
    expect(res.status).toBeLessThan(500);
  });

  it('an oversized body is FILE_TOO_LARGE (413) and names the limit', async () => {
    const payload = JSON.stringify({ path: 'big.txt', content: 'x'.repeat(BODY_LIMIT * 2) });
    const res = await raw('POST', '/v1/tools/write_file', payload, json);
    expectError(res, 'FILE_TOO_LARGE');
    expect(res.body.error?.message).toContain('TOOLGATE_BODY_LIMIT_BYTES');
  });

  it.each([
    ['GET', '/nope'],
    ['POST', '/v1/nope'],
    ['GET', '/v1/tools/read_file'],
    ['PUT', '/v1/tools/read_file'],
    ['DELETE', '/v1/tools/write_file'],
    ['POST', '/v1/tools'],
    ['GET', '/v1/tools/read_file/../../../etc/passwd'],
  ] as const)('an unknown route %s %s is NOT_FOUND', async (method, url) => {
    const res = await raw(method, url, method === 'GET' ? undefined : '{}', json);
    expectError(res, 'NOT_FOUND');
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x'])('content-type %s is INVALID_PARAM', async (ct) => {
    const res = await raw('POST', '/v1/tools/read_file', '{"path":"a.txt"}', { 'content-type': ct });
    expectError(res, 'INVALID_PARAM');
  });
});

describe('envelope: schema violations', () => {
  it.each<[Record<string, unknown>, string]>([
    [{}, 'missing path'],
    [{ path: 42 }, 'path of the wrong type'],
    [{ path: 'a.txt', start_line: 0 }, 'start_line below 1'],
    [{ path: 'a.txt', start_line: 'one' }, 'start_line of the wrong type'],
    [{ path: 'a.txt', line_numbers: 'yes' }, 'boolean as a string'],
    [{ path: 'a.txt', bogus: true }, 'unknown parameter'],
  ])('read_file %j (%s) is INVALID_PARAM', async (body) => {
    const res = await raw('POST', '/v1/tools/read_file', JSON.stringify(body), json);
    expectError(res, 'INVALID_PARAM');
    expectParamsEcho(res.body, body);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ path: 'a.txt' }, 'missing content'],
    [{ path: 'a.txt', content: 7 }, 'content of the wrong type'],
    [{ path: 'a.txt', content: 'x', expected_sha256: 'abc' }, 'sha256 not a digest'],
    [{ path: 'a.txt', content: 'x', expected_size_bytes: -1 }, 'negative size'],
    [{ path: 'a.txt', content: 'x', create_dirs: 'true' }, 'boolean as a string'],
  ])('write_file %j (%s) is INVALID_PARAM and writes nothing', async (body) => {
    const res = await raw('POST', '/v1/tools/write_file', JSON.stringify(body), json);
    expectError(res, 'INVALID_PARAM');
    await expect(fs.access(t.file('a.txt'))).rejects.toThrow();
  });

  it('every path-taking tool answers a path of the wrong type with INVALID_PARAM', async () => {
    for (const tool of TOOLS) {
      for (const key of pathKeysOf(tool)) {
        const body = argsFor(tool, { [key]: { nested: ['..', '/etc/passwd'] } });
        const res = await raw('POST', `/v1/tools/${tool.name}`, JSON.stringify(body), json);
        expectError(res, 'INVALID_PARAM');
      }
    }
  });

  it('every tool answers a non-object body with INVALID_PARAM', async () => {
    for (const tool of TOOLS) {
      for (const payload of ['[]', '"x"', '1']) expectError(await raw('POST', `/v1/tools/${tool.name}`, payload, json), 'INVALID_PARAM');
    }
  });
});

describe('envelope: params_input', () => {
  it('shortens every string over 200 characters to 200 plus …(N chars), on errors', async () => {
    const long = 'L'.repeat(1234);
    const body = { path: 'p'.repeat(201), content: long, create_dirs: 'not-a-boolean' };
    const res = await raw('POST', '/v1/tools/write_file', JSON.stringify(body), json);
    expectError(res, 'INVALID_PARAM');
    const echo = res.body.context.params_input as Record<string, string>;
    expect(echo.content).toBe(`${'L'.repeat(200)}…(1234 chars)`);
    expect(echo.path).toBe(`${'p'.repeat(200)}…(201 chars)`);
    expect(echo.create_dirs).toBe('not-a-boolean');
    expect(res.raw).not.toContain('L'.repeat(201));
  });

  it('keeps a string of exactly 200 characters whole and shortens on success too', async () => {
    const exact = 'e'.repeat(200);
    const long = 'z'.repeat(250);
    const res = await raw('POST', '/v1/tools/write_file', JSON.stringify({ path: 'short.txt', content: `${exact}` }), json);
    expectEnvelope(res.body, res.status);
    expect(res.body.status).toBe('success');
    expect((res.body.context.params_input as Record<string, string>).content).toBe(exact);
    const res2 = await raw('POST', '/v1/tools/write_file', JSON.stringify({ path: 'long.txt', content: long }), json);
    expect(res2.body.status).toBe('success');
    expect((res2.body.context.params_input as Record<string, string>).content).toBe(`${'z'.repeat(200)}…(250 chars)`);
  });

  it('writes the … of a shortened argument as \\u2026, so that an answer of ASCII arguments is ASCII', async () => {
    // The same JSON value; a … kept as it is would make the whole answer (its diff preview too) a string V8 holds
    // two bytes a character, slower to measure and to write (src/envelope.ts, markEscaped).
    const content = 'ascii line\n'.repeat(40);
    const res = await raw('POST', '/v1/tools/write_file', JSON.stringify({ path: 'ascii.txt', content }), json);
    expect(res.body.status).toBe('success');
    expect((res.body.context.params_input as Record<string, string>).content).toBe(`${content.slice(0, 200)}…(${content.length} chars)`);
    expect(res.raw).toContain(`\\u2026(${content.length} chars)`);
    expect(res.raw).not.toMatch(/[\u0080-\uffff]/);
    // Arguments with characters of their own beyond ASCII keep them, and their echo its value.
    for (const [i, own] of ['é…ß', '漢字 🙂', '\ud800'].entries()) {
      const text = own.repeat(Math.ceil(250 / own.length));
      const r = await raw('POST', '/v1/tools/write_file', JSON.stringify({ path: `own-${i}.txt`, content: text }), json);
      expect(r.body.status).toBe('success');
      expect((r.body.context.params_input as Record<string, string>).content).toBe(`${text.slice(0, 200)}…(${text.length} chars)`);
    }
  });

  it('shortens strings nested in arrays of objects', async () => {
    const long = 'n'.repeat(300);
    const body = { path: 'x.txt', edits: [{ old_text: long, new_text: 'y', bogus: 1 }] };
    const res = await raw('POST', '/v1/tools/edit_file', JSON.stringify(body), json);
    expectEnvelope(res.body, res.status);
    expect(res.status).toBeLessThan(500);
    const echo = res.body.context.params_input as { edits: { old_text: string }[] };
    expect(echo.edits[0]?.old_text).toBe(`${'n'.repeat(200)}…(300 chars)`);
  });
});

describe('envelope: success has no error key and carries the request id', () => {
  it('a successful call has exactly the five keys', async () => {
    const res = await raw('POST', '/v1/tools/write_file', JSON.stringify({ path: 'ok.txt', content: 'ok\n' }), { ...json, 'x-request-id': 'req-123' });
    expectEnvelope(res.body, res.status);
    expect(res.body.status).toBe('success');
    expect('error' in res.body).toBe(false);
    expect(res.body.context.request_id).toBe('req-123');
  });

  it('a request id with unsafe characters is replaced, not echoed', async () => {
    const res = await raw('POST', '/v1/tools/read_file', JSON.stringify({ path: 'ok.txt' }), { ...json, 'x-request-id': '../../etc/passwd' });
    expectEnvelope(res.body, res.status);
    expect(res.body.context.request_id).not.toContain('etc');
  });
});
