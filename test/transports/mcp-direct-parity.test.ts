// The HTTP door answers a lone tools/call without the SDK server's dispatch (docs/mcp.md, "One server for every
// POST"); every other shape goes through it. Both must answer alike: every tool of the registry, once
// with arguments that succeed and once with arguments that fail, is sent as a lone request (the direct route),
// as a batch of one (the dispatch, answered as JSON) and with a progress token (the dispatch, answered on an
// SSE stream), each to an app of its own over an identical fresh workspace, and the JSON-RPC answers compared.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { LATEST_PROTOCOL_VERSION, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { TOOLS } from '../../src/tools/registry.js';
import { makeApp, type TestApp } from '../helpers.js';
import { mcpUrl } from './mcp-helpers.js';

/** How a call is sent, and so which path answers it. */
type Route = 'direct' | 'batch' | 'stream';
const ROUTES: readonly Route[] = ['direct', 'batch', 'stream'];

interface Call {
  tool: string;
  args: Record<string, unknown>;
  /** Whether the call is meant to succeed (the tour) or to fail (a missing file, an argument refused). */
  fails: boolean;
}

/** The local web: a page for web_fetch and a SearXNG instance for web_search, both on loopback. */
const PAGE = '<html><head><title>Parity</title></head><body><h1>Parity</h1><p>The same answer from both paths.</p></body></html>';
const SEARXNG = {
  query: 'etag',
  results: [
    { url: 'https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/ETag', title: 'ETag - HTTP | MDN', content: 'The ETag header identifies a version of a resource.' },
    { url: 'https://www.rfc-editor.org/rfc/rfc9110#name-if-match', title: 'RFC 9110: If-Match', content: 'Conditional requests with <b>If-Match</b>.' },
  ],
};

/**
 * Per tool, the call that fails. Each leaves the workspace as it was (a failure changes nothing), so the tour
 * after it runs alike on every app.
 */
const FAILING: Record<string, Record<string, unknown>> = {
  write_file: { path: '../outside.txt', content: 'x' },
  read_file: { path: 'missing.txt' },
  read_multiple_files: { paths: 'notes.txt' },
  file_info: { path: 'missing.txt' },
  list_directory: { path: 'missing-dir' },
  search_files: { query: '(', regex: true },
  edit_file: { path: 'notes.txt', old_text: 'no such text anywhere', new_text: 'y' },
  replace_in_file: { path: 'missing.txt', old: 'a', new: 'b' },
  str_replace_based_edit_tool: { command: 'view', path: 'missing.txt' },
  apply_patch: { patch: 'not a patch' },
  append_to_file: { path: 'notes.txt' },
  list_backups: { path: '../outside.txt' },
  restore_backup: { backup_id: '0000000000000000-000000000-000000' },
  list_checkpoints: { limit: -1 },
  rewind: { checkpoint: 'no-such-checkpoint', dry_run: true },
  create_directory: { path: '../outside' },
  move_file: { path: 'missing.txt', destination: 'elsewhere.txt' },
  delete_file: { path: 'missing.txt' },
  find_large_files: { path: 'missing-dir' },
  disk_usage: { path: 'missing-dir' },
  read_docx: { path: 'missing.docx' },
  read_excel: { path: 'missing.xlsx' },
  shell_readonly: { command: 'rm -rf archive' },
  shell_write: { command: '' },
  shell_destructive: { command: 'rm missing.txt' },
  web_fetch: { url: 'not a url' },
  web_search: { query: '' },
  time_now: { timezone: 'Mars/Olympus_Mons' },
  run_command: { command: 'ls', timeout_s: 0 },
};

/**
 * The tour: each tool's OpenAPI example (and write_file's further ones, which make the documents the readers
 * read), in registry order, where each succeeds on a fresh workspace (src/tools/registry.ts), then its failing
 * call. `ls -la` lists times to the minute: the commands list names only, so the three apps answer alike.
 * The web tools go to the local server.
 */
function tour(web: string): Call[] {
  const success: Record<string, Record<string, unknown>[]> = {
    shell_readonly: [{ command: 'ls -a' }],
    // A command that fails still answers its exit code and output as a result, not as an error.
    run_command: [{ command: 'ls -a' }, { command: 'cat missing.txt' }],
    web_fetch: [{ url: `${web}/page` }],
  };
  const calls: Call[] = [];
  for (const tool of TOOLS) {
    const examples = success[tool.name] ?? [tool.example, ...(tool.moreExamples ?? [])];
    for (const args of examples) {
      expect(args, `${tool.name} has an example`).toBeDefined();
      calls.push({ tool: tool.name, args: args as Record<string, unknown>, fails: false });
    }
    const failing = FAILING[tool.name];
    expect(failing, `${tool.name} has a failing call here`).toBeDefined();
    calls.push({ tool: tool.name, args: failing as Record<string, unknown>, fails: true });
  }
  // A name no tool has: the pipeline's answer, not a protocol error, on both paths.
  calls.push({ tool: 'no_such_tool', args: {}, fails: true });
  return calls;
}

interface Answer {
  /** The answer's media type: JSON for the direct route and a batch, an SSE stream for a call with progress. */
  type: string;
  /** The JSON-RPC response to the call. */
  message: Record<string, unknown>;
  /** Other messages on the stream (progress notifications). */
  others: Record<string, unknown>[];
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };

/** Sends one tools/call the way the route asks for and reads its answer. */
async function send(url: string, route: Route, id: string, call: Call): Promise<Answer> {
  const request: JSONRPCRequest = {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: call.tool, arguments: call.args, ...(route === 'stream' && { _meta: { progressToken: id } }) },
  };
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify(route === 'batch' ? [request] : request) });
  expect(res.status, `${route} ${call.tool}`).toBe(200);
  const type = res.headers.get('content-type')?.split(';')[0] ?? '';
  const text = await res.text();
  if (type !== 'text/event-stream') return { type, message: JSON.parse(text) as Record<string, unknown>, others: [] };
  // The SDK transport's framing: one `message` event per JSON-RPC message, the answer last.
  const messages = text
    .split('\n\n')
    .map((event) => event.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
  const answer = messages.filter((m) => m.id === id && !('method' in m));
  expect(answer, `${route} ${call.tool}: one answer on the stream`).toHaveLength(1);
  return { type, message: answer[0] as Record<string, unknown>, others: messages.filter((m) => m !== answer[0]) };
}

/**
 * Fields that differ per call on any path: the request's id, its duration, the clock (times, mtimes, backup ids)
 * and the volume's free space, which the machine's other work changes.
 */
const PER_CALL_KEYS = new Set(['request_id', 'time_ms', 'mtime_ms', 'unix_ms', 'duration_ms', 'free_bytes']);
/** The same fields in the model's text, where it carries the data as JSON; and a command's duration in its sentence. */
const PER_CALL_JSON = new RegExp(`"(${[...PER_CALL_KEYS].join('|')})":(?:-?[\\d.]+|"[^"]*")`, 'g');
const RAN_FOR = /\bafter \d+ ms\b/g;
const FREE = /\b[\d.]+ [KMGT]?i?B free\b/g;
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)/g;
const EPOCH_MS = /\b1\d{12}(?:\.\d+)?\b/g;
/** A backup id: the file's key, then the time it was made and a random part (src/workspace/backups.ts). */
const BACKUP_ID = /\b([0-9a-f]{16})-[0-9a-z]{9}-[0-9a-f]{6}\b/g;
/** A checkpoint id: the time, a sequence number and a random part (src/workspace/checkpoints.ts). */
const CHECKPOINT_ID = /\b[0-9a-z]{9}-[0-9a-z]{4}-[0-9a-f]{6}\b/g;
const REQUEST_ID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;

function normalised(value: unknown, key = ''): unknown {
  if (PER_CALL_KEYS.has(key) && (typeof value === 'string' || typeof value === 'number')) return `<${key}>`;
  if (typeof value === 'string') {
    return value
      .replace(PER_CALL_JSON, '"$1":"<$1>"')
      .replace(RAN_FOR, 'after <duration_ms> ms')
      .replace(FREE, '<free_bytes> free')
      .replace(ISO_TIME, '<time>')
      .replace(BACKUP_ID, '$1-<backup>')
      .replace(CHECKPOINT_ID, '<checkpoint>')
      .replace(REQUEST_ID, '<uuid>')
      .replace(EPOCH_MS, '<epoch-ms>');
  }
  if (Array.isArray(value)) return value.map((v) => normalised(v));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalised(v, k)]));
  return value;
}

describe('MCP over HTTP: the direct tools/call route answers as the SDK dispatch does', () => {
  const apps = new Map<Route, { t: TestApp; url: string }>();
  let web: http.Server;
  let dispatch: MockInstance;
  /** The tools/call requests the dispatch saw: method and tool name of each. */
  const dispatched = (): { method: string; name: unknown }[] =>
    dispatch.mock.calls.map(([request]) => ({ method: (request as JSONRPCRequest).method, name: (request as JSONRPCRequest).params?.name }));

  beforeAll(async () => {
    web = http.createServer((req, res) => {
      if (req.url === '/page') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      if (req.url?.startsWith('/searx/search')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SEARXNG));
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    for (const route of ROUTES) {
      const t = await makeApp({
        TOOLGATE_EXEC: 'sandboxed',
        TOOLGATE_WEB_ALLOW: '127.0.0.1',
        TOOLGATE_WEB_SEARCH_PROVIDER: 'searxng',
        TOOLGATE_WEB_SEARCH_URL: `${origin}/searx/`,
      });
      apps.set(route, { t, url: await mcpUrl(t.app) });
    }
    // Every request the SDK server dispatches passes here (the door's shared Server is a Protocol): the direct
    // route must leave it untouched, the other two must reach it.
    dispatch = vi.spyOn(Protocol.prototype as unknown as { _onrequest(request: JSONRPCRequest, extra?: unknown): void }, '_onrequest');
  });

  afterAll(async () => {
    dispatch?.mockRestore();
    for (const { t } of apps.values()) await t.close();
    await new Promise((resolve) => web?.close(resolve));
  });

  it('answers every tool, succeeding and failing, alike on the direct route, a batch of one and a progress stream', async () => {
    const origin = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    const calls = tour(origin);
    const toolsSeen = new Set<string>();
    for (const [n, call] of calls.entries()) {
      const answers = new Map<Route, Answer>();
      for (const route of ROUTES) {
        const before = dispatch.mock.calls.length;
        const answer = await send(apps.get(route)!.url, route, `parity-${n}`, call);
        // The path it took: the direct route answers JSON without the dispatch; a batch is answered as JSON
        // through it, a call with progress on an SSE stream through it.
        const reached = dispatched().slice(before);
        if (route === 'direct') expect(reached, `direct ${call.tool}`).toEqual([]);
        else expect(reached, `${route} ${call.tool}`).toEqual([{ method: 'tools/call', name: call.tool }]);
        expect(answer.type, `${route} ${call.tool}`).toBe(route === 'stream' ? 'text/event-stream' : 'application/json');
        answers.set(route, answer);
      }
      const direct = answers.get('direct')!;
      const label = `${call.tool} ${JSON.stringify(call.args)}`;
      expect(direct.message.id, label).toBe(`parity-${n}`);
      // A failure is an envelope with isError, as on every door, not a protocol error.
      const result = direct.message.result as { isError?: boolean; structuredContent?: { status?: string } } | undefined;
      expect(result, label).toBeDefined();
      expect(result?.isError === true && result.structuredContent?.status === 'error', label).toBe(call.fails);
      for (const route of ['batch', 'stream'] as const) expect(normalised(answers.get(route)!.message), `${route}: ${label}`).toEqual(normalised(direct.message));
      // Nothing but progress goes on the stream besides the answer, and a command that ran streamed its output.
      const progress = answers.get('stream')!.others;
      for (const other of progress) expect(other.method, label).toBe('notifications/progress');
      if (call.tool === 'run_command' && !call.fails) expect(progress.length, label).toBeGreaterThan(0);
      toolsSeen.add(call.tool);
    }
    expect([...toolsSeen].filter((name) => name !== 'no_such_tool').sort()).toEqual(TOOLS.map((t) => t.name).sort());
  });
});
