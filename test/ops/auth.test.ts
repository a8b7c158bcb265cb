// Auth (docs/operations.md): hashed bearer tokens compared in constant time, 401 envelopes with WWW-Authenticate on
// every /v1 route, risk classes per token, probes open, no listening beyond loopback without tokens.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { assertSafeBind, Authenticator, hashToken, isLoopbackHost, loadTokens } from '../../src/ops/auth.js';
import { serve } from '../../src/serve.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { makeToken, request } from './ops-helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const reader = makeToken('reader', { risks: ['read'] });
const writer = makeToken('writer', { risks: ['read', 'write'] });
const admin = makeToken('admin');

async function appWithTokens(): Promise<TestApp> {
  t = await makeApp({}, { tokens: [reader.entry, writer.entry, admin.entry] });
  return t;
}

describe('bearer tokens', () => {
  it('hash-token is the hex sha256 of the token', () => {
    expect(hashToken('test')).toBe('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08');
  });

  it('no token on a /v1 route: UNAUTHORIZED envelope, 401, WWW-Authenticate, request id', async () => {
    const { app } = await appWithTokens();
    const res = await request(app, 'POST', '/v1/tools/read_file', { path: 'a.txt' }, { 'x-request-id': 'req-401' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="toolgate"/);
    expect(res.headers['x-request-id']).toBe('req-401');
    expect(res.body.status).toBe('error');
    expect(res.body.error?.code).toBe('UNAUTHORIZED');
    expect(res.body.context.request_id).toBe('req-401');
    expect(Object.keys(res.body).sort()).toEqual(['context', 'data', 'error', 'stats', 'status', 'text']);
  });

  it('every /v1 route needs it: the tool list, project routes, unknown tools, unknown /v1 paths', async () => {
    const { app } = await appWithTokens();
    for (const [method, url] of [
      ['GET', '/v1/tools'],
      ['GET', '/v1/tools?format=openai'],
      ['POST', '/v1/projects/p1/tools/read_file'],
      ['POST', '/v1/tools/no_such_tool'],
      ['GET', '/v1/nothing/here'],
    ] as const) {
      const res = await request(app, method, url, method === 'POST' ? {} : undefined);
      expect(res.status, url).toBe(401);
      expect(res.body.error?.code, url).toBe('UNAUTHORIZED');
    }
  });

  it('a wrong token, a wrong scheme or an empty bearer is UNAUTHORIZED', async () => {
    const { app } = await appWithTokens();
    for (const authorization of [`Bearer ${admin.secret}x`, `Basic ${admin.secret}`, 'Bearer ', 'Bearer', admin.secret, `Bearer ${admin.entry.sha256}`]) {
      const res = await request(app, 'GET', '/v1/tools', undefined, { authorization });
      expect(res.status, authorization).toBe(401);
    }
  });

  it('a valid token passes; the scheme is case-insensitive', async () => {
    const { app } = await appWithTokens();
    expect((await request(app, 'GET', '/v1/tools', undefined, admin.header)).status).toBe(200);
    expect((await request(app, 'GET', '/v1/tools', undefined, { authorization: `bearer ${admin.secret}` })).status).toBe(200);
    const res = await request(app, 'POST', '/v1/tools/write_file', { path: 'a.txt', content: 'hi' }, admin.header);
    expect(res.status).toBe(200);
  });

  it('/livez, /readyz, /healthz and /metrics stay open', async () => {
    const { app } = await appWithTokens();
    for (const url of ['/livez', '/readyz', '/healthz', '/metrics']) {
      expect((await request(app, 'GET', url)).status, url).toBe(200);
    }
  });

  it('a token without a risk class gets ACCESS_DENIED for tools of that class', async () => {
    const { app, file } = await appWithTokens();
    await fs.writeFile(file('a.txt'), 'x');
    const read = await request(app, 'POST', '/v1/tools/read_file', { path: 'a.txt' }, reader.header);
    expect(read.status).toBe(200);
    const write = await request(app, 'POST', '/v1/tools/write_file', { path: 'b.txt', content: 'y' }, reader.header);
    expect(write.status).toBe(403);
    expect(write.body.error?.code).toBe('ACCESS_DENIED');
    expect(write.body.error?.message).toMatch(/'write'/);
    await expect(fs.access(file('b.txt'))).rejects.toThrow();
    const del = await request(app, 'POST', '/v1/tools/delete_file', { path: 'a.txt' }, writer.header);
    expect(del.status).toBe(403);
    expect(del.body.error?.code).toBe('ACCESS_DENIED');
    expect(await fs.readFile(file('a.txt'), 'utf8')).toBe('x');
    // aliases are the same tool, with the same risk
    const alias = await request(app, 'POST', '/v1/tools/write', { path: 'c.txt', content: 'z' }, reader.header);
    expect(alias.body.error?.code).toBe('ACCESS_DENIED');
  });

  it('the Authenticator compares hashes, and never keeps or returns the token', () => {
    const auth = new Authenticator([admin.entry]);
    expect(auth.authenticate(`Bearer ${admin.secret}`)).toEqual({ id: 'admin', projects: ['*'], risks: ['read', 'write', 'destructive'], selfApprove: false });
    expect(JSON.stringify(auth)).not.toContain(admin.secret);
    expect(new Authenticator([]).authenticate(undefined)).toBeNull();
  });
});

describe('tokens file', () => {
  it('YAML and JSON lists load; projects and risks default to everything', async () => {
    const dir = await makeTempDir();
    const yaml = path.join(dir, 'tokens.yaml');
    await fs.writeFile(yaml, `- id: agent-1\n  sha256: ${hashToken('s1').toUpperCase()}\n  projects: [p1]\n  risks: [read]\n- id: ops\n  sha256: ${hashToken('s2')}\n`);
    expect(await loadTokens(yaml)).toEqual([
      { id: 'agent-1', sha256: hashToken('s1'), projects: ['p1'], risks: ['read'] },
      { id: 'ops', sha256: hashToken('s2'), projects: ['*'], risks: ['read', 'write', 'destructive'] },
    ]);
    const json = path.join(dir, 'tokens.json');
    await fs.writeFile(json, JSON.stringify({ tokens: [{ id: 'j', sha256: hashToken('s3'), projects: ['*'], risks: ['read', 'write'] }] }));
    expect((await loadTokens(json))[0]?.id).toBe('j');
    await fs.rm(dir, { recursive: true });
  });

  it('a bad file is a start-up error naming TOOLGATE_TOKENS_FILE and the problem', async () => {
    const dir = await makeTempDir();
    const f = path.join(dir, 'tokens.yaml');
    await fs.writeFile(f, '- id: a\n  sha256: not-a-hash\n');
    await expect(loadTokens(f)).rejects.toThrow(/TOOLGATE_TOKENS_FILE: invalid tokens file at 0\.sha256: 64 hex digits/);
    await fs.writeFile(f, `- id: a\n  sha256: ${hashToken('x')}\n  risks: [admin]\n`);
    await expect(loadTokens(f)).rejects.toThrow(ConfigError);
    await fs.writeFile(f, `- id: a\n  sha256: ${hashToken('x')}\n- id: a\n  sha256: ${hashToken('y')}\n`);
    await expect(loadTokens(f)).rejects.toThrow(/appears twice/);
    await expect(loadTokens(path.join(dir, 'missing.yaml'))).rejects.toThrow(/TOOLGATE_TOKENS_FILE: cannot read the tokens file \(ENOENT\)/);
    await fs.rm(dir, { recursive: true });
  });

  it('TOOLGATE_TOKENS_FILE switches auth on', async () => {
    const dir = await makeTempDir();
    const f = path.join(dir, 'tokens.yaml');
    await fs.writeFile(f, `- id: admin\n  sha256: ${admin.entry.sha256}\n`);
    t = await makeApp({ TOOLGATE_TOKENS_FILE: f });
    expect((await request(t.app, 'GET', '/v1/tools')).status).toBe(401);
    expect((await request(t.app, 'GET', '/v1/tools', undefined, admin.header)).status).toBe(200);
    await fs.rm(dir, { recursive: true });
  });
});

describe('listening without tokens', () => {
  it('loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '::ffff:10.0.0.1']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('refuses a non-loopback address without tokens, with a message that says what to do', async () => {
    expect(() => assertSafeBind('0.0.0.0', new Authenticator([]))).toThrow(/TOOLGATE_HOST=0\.0\.0\.0 is not a loopback address, and no bearer tokens are configured: refusing to listen\. Set TOOLGATE_TOKENS_FILE/);
    expect(() => assertSafeBind('0.0.0.0', new Authenticator([admin.entry]))).not.toThrow();
    expect(() => assertSafeBind('127.0.0.1', new Authenticator([]))).not.toThrow();
  });

  it('serve() refuses before listening', async () => {
    const dir = await makeTempDir();
    await expect(serve({ host: '0.0.0.0', port: '0', root: dir, auditStdout: 'false' }, {})).rejects.toThrow(ConfigError);
    expect(loadConfig({}, { host: '0.0.0.0' }).host).toBe('0.0.0.0');
    await fs.rm(dir, { recursive: true });
  });
});
