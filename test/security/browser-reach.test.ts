// A web page must not drive the service (issue 21, finding 1): through a real listening server, a foreign Host
// (DNS rebinding) or a foreign Origin is refused on every door (REST, /mcp, /v1/ws, approvals, console, /docs),
// probes still answer, the settings admit what the operator lists, and a caller without a token is never asked
// to decide its own gated calls unless TOOLGATE_SELF_APPROVE says so.
import fs from 'node:fs/promises';
import http from 'node:http';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { approvalOf, makePolicyApp, person, type PolicyApp } from '../approvals/approval-helpers.js';
import { listenOn, makeTempDir, sha256OfFile } from '../helpers.js';
import { envelopeOf, httpClient } from '../transports/mcp-helpers.js';
import { connect } from '../transports/ws-helpers.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
});

interface Raw {
  status: number;
  json: { status?: string; error?: { code: string; message: string; details?: Record<string, unknown> }; approval?: { status: string } } & Record<string, unknown>;
  text: string;
}

/** One HTTP request with exactly these headers (fetch would not let a test set Host). */
function request(base: string, method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Raw> {
  const target = new URL(url, base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: target.hostname, port: target.port, method, path: target.pathname + target.search, headers: { ...(payload !== undefined && { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          const json = (text.startsWith('{') ? JSON.parse(text) : {}) as Raw['json'];
          resolve({ status: res.statusCode ?? 0, json, text });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Opens /v1/ws with these headers; the HTTP status and envelope of a refused upgrade, or 101. */
function upgrade(base: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const socket = new WebSocket(`${base.replace('http', 'ws')}/v1/ws`, { headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.terminate();
      resolve({ status: 101, body: '' });
    });
    socket.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    socket.once('error', reject);
  });
}

/** The IDE policy (every write asks) without tokens, listening on loopback, with main.py in the workspace. */
async function ideServer(env: Record<string, string> = {}): Promise<{ t: PolicyApp; base: string; version: string }> {
  const t = await makePolicyApp('ide.yaml', env, false);
  cleanup.push(() => t.close());
  await fs.writeFile(t.file('main.py'), 'print("hi")\n');
  return { t, base: await listenOn(t.app), version: await sha256OfFile(t.file('main.py')) };
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };

describe('a foreign Host or Origin is refused on every door', () => {
  it('a page with Origin http://evil.example and Host evil.example cannot open /v1/ws', async () => {
    const { base } = await ideServer();
    const port = new URL(base).port;
    const foreign: Record<string, string>[] = [{ origin: 'http://evil.example', host: 'evil.example' }, { origin: 'http://evil.example' }, { host: `evil.example:${port}` }, { origin: 'null' }];
    for (const headers of foreign) {
      const res = await upgrade(base, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({ status: 'error', error: { code: 'ACCESS_DENIED' } });
    }
    // The service's own page (same host and port as the Host header) and a client that sends no Origin connect.
    expect((await upgrade(base, { origin: base })).status).toBe(101);
    expect((await upgrade(base, {})).status).toBe(101);
  });

  it('REST, /mcp, the approvals, the console and /docs refuse Host attacker.example; probes answer it', async () => {
    const { t, base } = await ideServer();
    const attacker = { host: 'attacker.example' };
    const read = await request(base, 'POST', '/v1/tools/read_file', attacker, { path: 'main.py' });
    expect(read.status).toBe(403);
    expect(read.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { host: 'attacker.example' } });
    expect(read.json.error?.message).toContain("'attacker.example'");
    expect(read.json.error?.message).toContain('TOOLGATE_ALLOWED_HOSTS');
    expect(read.text).not.toContain('print("hi")');

    const mcp = await request(base, 'POST', '/mcp', { ...attacker, accept: 'application/json, text/event-stream' }, initialize);
    expect(mcp.status).toBe(403);
    expect(mcp.json.error?.code).toBe('ACCESS_DENIED');
    for (const url of ['/v1/tools', '/v1/approvals', '/console', '/console/console.js', '/docs', '/docs/json', '/openapi.json']) {
      const res = await request(base, 'GET', url, attacker);
      expect(res.status, url).toBe(403);
      expect(res.json.error?.code, url).toBe('ACCESS_DENIED');
    }
    for (const url of ['/livez', '/readyz', '/healthz', '/metrics']) expect((await request(base, 'GET', url, { host: '10.1.2.3:8080' })).status, url).toBe(200);
    // The audit keeps the refused tool call.
    expect(t.audit().some((l) => l.tool === 'read_file' && l.error_code === 'ACCESS_DENIED')).toBe(true);
    // The same requests by a loopback name pass.
    for (const host of ['localhost', `127.0.0.1:${new URL(base).port}`, '[::1]:9']) {
      expect((await request(base, 'POST', '/v1/tools/read_file', { host }, { path: 'main.py' })).status, host).toBe(200);
    }
  });

  it('an approve with a foreign Origin is refused and the request stays pending; the console\'s own origin decides', async () => {
    const { t, base, version } = await ideServer();
    const pending = await t.as(null, 'write_file', { path: 'main.py', content: 'print("bye")\n', expected_sha256: version });
    expect(pending.status).toBe(202);
    const { id } = approvalOf(pending.body);

    const foreign = await request(base, 'POST', `/v1/approvals/${id}/approve`, { origin: 'http://evil.example' }, {});
    expect(foreign.status).toBe(403);
    expect(foreign.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { origin: 'http://evil.example' } });
    // A form post from a page on the same machine but another port is another origin too.
    const otherPort = await request(base, 'POST', `/v1/approvals/${id}/approve`, { origin: 'http://127.0.0.1:1' }, {});
    expect(otherPort.status).toBe(403);
    expect((await t.get(null, `/v1/approvals/${id}`)).json).toMatchObject({ approval: { status: 'pending' } });

    const console = await request(base, 'POST', `/v1/approvals/${id}/approve`, { origin: base }, {});
    expect(console.status).toBe(200);
    expect(console.json.approval?.status).toBe('approved');
  });
});

describe('TOOLGATE_ALLOWED_HOSTS and TOOLGATE_ALLOWED_ORIGINS admit what the operator lists', () => {
  it('listed names and origins pass on REST and WebSocket; others are still refused', async () => {
    const { base } = await ideServer({ TOOLGATE_ALLOWED_HOSTS: 'toolgate.corp.example, *.svc.cluster.local', TOOLGATE_ALLOWED_ORIGINS: 'https://app.corp.example' });
    for (const host of ['toolgate.corp.example:8080', 'TOOLGATE.corp.example', 'toolgate.ns.svc.cluster.local']) {
      expect((await request(base, 'POST', '/v1/tools/read_file', { host }, { path: 'main.py' })).status, host).toBe(200);
    }
    for (const host of ['svc.cluster.local', 'toolgate.corp.example.evil.example', 'corp.example']) {
      expect((await request(base, 'POST', '/v1/tools/read_file', { host }, { path: 'main.py' })).status, host).toBe(403);
    }
    const listed = { host: 'toolgate.corp.example', origin: 'https://app.corp.example' };
    expect((await request(base, 'GET', '/v1/approvals', listed)).status).toBe(200);
    expect((await upgrade(base, listed)).status).toBe(101);
    // The console served at the listed name is its own origin.
    expect((await request(base, 'GET', '/v1/approvals', { host: 'toolgate.corp.example', origin: 'https://toolgate.corp.example' })).status).toBe(200);
    expect((await request(base, 'GET', '/v1/approvals', { host: 'toolgate.corp.example', origin: 'https://app.corp.example.evil.example' })).status).toBe(403);
  });

  it('an entry that cannot be read, or TOOLGATE_SELF_APPROVE with tokens, stops the service with its name', async () => {
    const root = await makeTempDir();
    cleanup.push(() => fs.rm(root, { recursive: true, force: true }));
    expect(() => loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_ALLOWED_HOSTS: 'http://toolgate.corp.example/' })).toThrow(/TOOLGATE_ALLOWED_HOSTS=.*without scheme, port or path/);
    expect(() => loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_ALLOWED_ORIGINS: 'app.corp.example' })).toThrow(/TOOLGATE_ALLOWED_ORIGINS=.*not a web origin/);
    expect(() => loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_ALLOWED_ORIGINS: 'https://app.corp.example/path' })).toThrow(/not a web origin/);
    const config = loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_SELF_APPROVE: 'true' });
    await expect(buildApp(config, { tokens: [person.entry] })).rejects.toThrow(/TOOLGATE_SELF_APPROVE applies only without tokens/);
  });
});

describe('a caller without a token does not decide its own calls', () => {
  const write = (version: string) => ({ type: 'tool_call', call_id: 'w1', tool_name: 'write_file', arguments: { path: 'main.py', content: 'print("bye")\n', expected_sha256: version } });

  it('over WebSocket: no confirmation_request, the call answers pending, a self-made answer is refused', async () => {
    const { t, base, version } = await ideServer();
    const c = await connect(`${base.replace('http', 'ws')}/v1/ws`);
    c.send(write(version));
    const result = await c.one();
    expect(result).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'partial', data: { applied: false, approval: { status: 'pending' } } } });
    const id = approvalOf(result.result!).id;
    c.send({ type: 'confirmation_response', call_id: 'w1', approved: true });
    c.send({ type: 'confirmation_response', approval_id: id, approved: true });
    const [byCall, byId] = await c.next(2);
    expect(byCall).toMatchObject({ type: 'error', error: { code: 'NOT_FOUND' } });
    expect(byId).toMatchObject({ type: 'error', error: { code: 'NOT_FOUND' } });
    expect(await fs.readFile(t.file('main.py'), 'utf8')).toBe('print("hi")\n');
    expect((await t.get(null, `/v1/approvals/${id}`)).json).toMatchObject({ approval: { status: 'pending' } });

    // The person at the console (same origin) decides; the agent's repeat with approval_id runs.
    expect((await request(base, 'POST', `/v1/approvals/${id}/approve`, { origin: base }, {})).status).toBe(200);
    c.send({ ...write(version), call_id: 'w2', arguments: { ...write(version).arguments, approval_id: id } });
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'w2', result: { status: 'success' } });
    expect(await fs.readFile(t.file('main.py'), 'utf8')).toBe('print("bye")\n');
  });

  it('over MCP: a client that declared elicitation is not asked; the call answers pending', async () => {
    const { t, base } = await ideServer();
    let asked = 0;
    const client = await httpClient(`${base}/mcp`, {}, { capabilities: { elicitation: {} } }, {}, (c) =>
      c.setRequestHandler(ElicitRequestSchema, () => {
        asked += 1;
        return { action: 'accept', content: { decision: 'approve' } };
      }),
    );
    cleanup.push(() => client.close());
    const result = await client.callTool({ name: 'write_file', arguments: { path: 'new.txt', content: 'x\n' } });
    expect(envelopeOf(result)).toMatchObject({ status: 'partial', data: { applied: false, approval: { status: 'pending' } } });
    expect(asked).toBe(0);
    expect(await fs.readFile(t.file('new.txt')).catch(() => null)).toBeNull();
  });

  it('TOOLGATE_SELF_APPROVE=true lets the no-token caller confirm in band', async () => {
    const { t, base, version } = await ideServer({ TOOLGATE_SELF_APPROVE: 'true' });
    const c = await connect(`${base.replace('http', 'ws')}/v1/ws`);
    c.send(write(version));
    expect((await c.one()).type).toBe('confirmation_request');
    c.send({ type: 'confirmation_response', call_id: 'w1', approved: true });
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'success' } });
    expect(await fs.readFile(t.file('main.py'), 'utf8')).toBe('print("bye")\n');
  });
});
