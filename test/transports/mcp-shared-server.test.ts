// The HTTP door serves every POST with one SDK Server (src/transports/mcp-http.ts): it must answer what the
// SDK's own stateless transport answers, keep apart the calls of clients that reuse the same JSON-RPC ids,
// and stop a call whose client went away.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/app.js';
import { makeApp, type TestApp } from '../helpers.js';
import { envelopeOf, httpClient, mcpUrl } from './mcp-helpers.js';

let t: TestApp | undefined;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
  await t?.close();
  t = undefined;
});

interface Raw {
  status: number;
  type: string | null;
  body: unknown;
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** What the SDK's stateless transport answers, one Server and transport per request as its documentation shows. */
async function reference(body: string, headers: Record<string, string>): Promise<Raw> {
  const server = new Server({ name: 'toolgate', version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const res = await transport.handleRequest(new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body }));
  const raw = await readRaw(res);
  await server.close();
  return raw;
}

async function readRaw(res: Response): Promise<Raw> {
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type')?.split(';')[0] ?? null, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

async function door(url: string, body: string, headers: Record<string, string>): Promise<Raw> {
  return readRaw(await fetch(url, { method: 'POST', headers, body }));
}

const ping = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('MCP over HTTP: one shared server', () => {
  it('answers each protocol case as the SDK transport does (status, type, JSON-RPC body)', async () => {
    t = await makeApp();
    const url = await mcpUrl(t.app);
    const initialize = (protocolVersion: string) => ({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    });
    const cases: { name: string; body: unknown; headers?: Record<string, string> }[] = [
      { name: 'ping', body: ping('a') },
      { name: 'a batch of two requests', body: [ping(1), ping(2)] },
      { name: 'a batch of one request', body: [ping(3)] },
      { name: 'a method nobody handles', body: { jsonrpc: '2.0', id: 4, method: 'resources/list' } },
      { name: 'tools/call without a name', body: { jsonrpc: '2.0', id: 5, method: 'tools/call', params: {} } },
      { name: 'initialize with a known version', body: initialize('2025-03-26') },
      { name: 'initialize with an unknown version', body: initialize('1999-01-01') },
      { name: 'a notification alone', body: { jsonrpc: '2.0', method: 'notifications/initialized' } },
      { name: 'a response alone', body: { jsonrpc: '2.0', id: 9, result: {} } },
      { name: 'not JSON-RPC', body: { hello: 'world' } },
      { name: 'a batch over the limit', body: Array.from({ length: 101 }, (_, i) => ping(i)) },
      { name: 'initialize inside a batch', body: [initialize('2025-03-26'), ping(1)] },
      { name: 'an unknown protocol version header', body: ping(6), headers: { 'mcp-protocol-version': '1999-01-01' } },
      { name: 'a known protocol version header', body: ping(7), headers: { 'mcp-protocol-version': '2025-06-18' } },
      { name: 'JSON only in Accept', body: ping(8), headers: { accept: 'application/json' } },
      { name: 'a body that is not JSON by its type', body: ping(9), headers: { 'content-type': 'text/plain' } },
    ];
    for (const c of cases) {
      const body = JSON.stringify(c.body);
      const headers = { ...MCP_HEADERS, ...c.headers };
      expect({ case: c.name, ...(await door(url, body, headers)) }).toEqual({ case: c.name, ...(await reference(body, headers)) });
    }
  });

  it('answers a lone tools/call (its direct path) as the server answers the same call in a batch of one', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'alpha\n');
    const url = await mcpUrl(t.app);
    const calls = [
      { name: 'read_file', arguments: { path: 'a.txt' } },
      { name: 'read_file', arguments: { path: 'missing.txt' } },
      { name: 'read_file', arguments: { start_line: 2 } },
      { name: 'no_such_tool', arguments: {} },
      { name: 'read_file' },
    ];
    // What differs from one call to the next: the request's id and timing.
    const stable = (raw: Raw) => JSON.parse(JSON.stringify(raw).replace(/"(request_id|duration_ms|elapsed_ms|time_ms)":("[^"]*"|[0-9.]+)/g, '"$1":"-"')) as unknown;
    for (const [i, params] of calls.entries()) {
      const message = { jsonrpc: '2.0', id: i, method: 'tools/call', params };
      const alone = await door(url, JSON.stringify(message), MCP_HEADERS);
      const inBatch = await door(url, JSON.stringify([message]), MCP_HEADERS);
      expect(alone.status).toBe(200);
      expect({ params, ...(stable(alone) as object) }).toEqual({ params, ...(stable(inBatch) as object) });
    }
  });

  it('keeps apart the calls of clients that use the same JSON-RPC ids at the same time', async () => {
    t = await makeApp();
    const names = Array.from({ length: 6 }, (_, i) => `f${i}.txt`);
    for (const name of names) await fs.writeFile(t.file(name), `content of ${name}\n`);
    const url = await mcpUrl(t.app);
    // Every SDK client numbers its requests from 0: six clients with eight calls in flight each.
    const clients = await Promise.all(names.map(() => httpClient(url)));
    for (const c of clients) cleanup.push(() => c.close());
    const results = await Promise.all(
      clients.map((c, i) => Promise.all(Array.from({ length: 8 }, () => c.callTool({ name: 'read_file', arguments: { path: names[i] } })))),
    );
    results.forEach((perClient, i) => {
      for (const r of perClient) expect(envelopeOf(r).data).toMatchObject({ content: `content of ${names[i]}\n` });
    });
    // The same id on two raw POSTs at once, and twice in one batch.
    const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_file', arguments: { path: name } } });
    const [a, b, batch] = await Promise.all([
      door(url, JSON.stringify(call(1, 'f0.txt')), MCP_HEADERS),
      door(url, JSON.stringify(call(1, 'f1.txt')), MCP_HEADERS),
      door(url, JSON.stringify([call(2, 'f2.txt'), call(3, 'f3.txt')]), MCP_HEADERS),
    ]);
    const contentOf = (m: unknown) => (envelopeOf((m as { result: CallToolResult }).result).data as { content: string }).content;
    expect([a.body, b.body].map((m) => [(m as { id: number }).id, contentOf(m)])).toEqual([
      [1, 'content of f0.txt\n'],
      [1, 'content of f1.txt\n'],
    ]);
    expect((batch.body as unknown[]).map((m) => [(m as { id: number }).id, contentOf(m)])).toEqual([
      [2, 'content of f2.txt\n'],
      [3, 'content of f3.txt\n'],
    ]);
  });

  it('stops a call whose client went away before the answer (run_command is killed), alone or in a batch', async () => {
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' });
    const url = await mcpUrl(t.app);
    const until = async (check: () => boolean) => {
      for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 100));
      return check();
    };
    for (const batch of [false, true]) {
      const marker = `sleeper${randomBytes(4).toString('hex')}`;
      await fs.writeFile(path.join(t.root, `${marker}.sh`), 'echo started\nsleep 600\n');
      const running = () => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(marker)).length;
      const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_command', arguments: { command: `sh ${marker}.sh` } } };
      const gone = new AbortController();
      const call = fetch(url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(batch ? [message] : message), signal: gone.signal }).catch((err: unknown) => err);
      expect(await until(() => running() > 0)).toBe(true);
      gone.abort();
      expect(await call).toBeInstanceOf(Error);
      expect({ batch, stopped: await until(() => running() === 0) }).toEqual({ batch, stopped: true });
    }
  }, 90_000);
});
