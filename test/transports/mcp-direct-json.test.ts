// The MCP door's direct route reads a plain tools/call and checks a plain result without the SDK's schemas, and
// writes its answer with the file's content escaped once for the text block and structuredContent
// (src/transports/mcp-http.ts: directCallOf, directAnswerJson). Each must give what the schemas and JSON.stringify
// give: the same call taken (or left to the schemas), the same answer bytes.
import { CallToolRequestSchema, CallToolResultSchema, JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { bareContext, errorEnvelope, resultEnvelope, ToolError, type Envelope } from '../../src/envelope.js';
import type { ToolCallOutcome } from '../../src/pipeline/execute-tool.js';
import { directAnswerJson, directCallOf } from '../../src/transports/mcp-http.js';
import { mcpResult } from '../../src/transports/mcp-server.js';

/** What directCallOf answered before it read plain calls itself: the SDK's two schemas. */
function bySchemas(body: unknown): { id: unknown; params: unknown } | null {
  if (Array.isArray(body)) return null;
  const request = JSONRPCRequestSchema.safeParse(body);
  if (!request.success) return null;
  const call = CallToolRequestSchema.safeParse(request.data);
  if (!call.success || call.data.params.task !== undefined) return null;
  return { id: request.data.id, params: call.data.params };
}

const call = (over: Record<string, unknown> = {}, params: Record<string, unknown> = { name: 'read_file', arguments: { path: 'a.txt' } }) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params, ...over });

const BODIES: unknown[] = [
  call(),
  call({ id: 'abc' }),
  call({ id: 0 }),
  call({ id: -5 }),
  call({ id: 1.5 }),
  call({ id: 2 ** 53 }),
  call({ id: null }),
  call({ id: true }),
  call({ jsonrpc: '1.0' }),
  call({ method: 'tools/list' }),
  call({ extra: 1 }),
  { jsonrpc: '2.0', method: 'tools/call', params: { name: 'read_file' } },
  call({}, { name: 'read_file' }),
  call({}, { name: 'read_file', arguments: {} }),
  call({}, { arguments: { path: 'a' }, name: 'read_file' }),
  call({}, { name: 'read_file', arguments: { 2: 'two', 1: 'one', path: 'a', nested: { deep: [1, null, 'x'] } } }),
  call({}, { name: 'read_file', arguments: null }),
  call({}, { name: 'read_file', arguments: [] }),
  call({}, { name: 'read_file', arguments: 'path' }),
  call({}, { name: 7, arguments: {} }),
  call({}, { name: 'read_file', arguments: {}, _meta: { progressToken: 3 } }),
  call({}, { name: 'read_file', arguments: {}, _meta: { 'toolgate/turn': 't1' } }),
  call({}, { name: 'read_file', arguments: {}, task: { ttl: 5 } }),
  call({}, { name: 'read_file', arguments: {}, other: 1 }),
  { ...call(), params: undefined },
  null,
  'tools/call',
  [call()],
];

function outcomeOf(envelope: Envelope): ToolCallOutcome {
  return { envelope, httpStatus: 200, version: null, tool: null, audit: {}, durationMs: 1, headers: {} };
}

const ctx = { ...bareContext('rid'), params_input: { path: 'a.txt' }, path_resolved: 'a.txt' };
const CONTENTS = ['', 'plain\n', 'quotes " \\ \t\r\n', 'é 漢字 🙂 \u2028 \u0000', '\udc00 starts with a low surrogate', 'ends with a high surrogate \ud800', 'x'.repeat(20_000)];
const TEXTS = ["Read 'a.txt' (1 lines).", 'ends high \ud83d', '\ude42 starts low', ''];

function envelopes(): Envelope[] {
  const out: Envelope[] = [];
  for (const content of CONTENTS) {
    for (const text of TEXTS) {
      out.push(resultEnvelope(ctx, { data: { content, encoding: 'utf-8', total_lines: 1, version: { mtime_ms: 1, size_bytes: content.length, sha256: 'a'.repeat(64) } }, text }));
      out.push(resultEnvelope(ctx, { data: { before: { content: 'not this one' }, content, after: undefined }, text, partial: true }));
    }
  }
  out.push(resultEnvelope(ctx, { data: { diff_preview: '--- a\n+++ b\n', applied: true }, text: 'Edited.' }));
  out.push(resultEnvelope(ctx, { data: { results: [{ type: 'content', path: 'a', line: 1, column: 2, preview: 'x' }] }, text: 'Found 1.' }));
  out.push(resultEnvelope(ctx, { data: { content: 'iVBORw0KGgo=', encoding: 'base64', media_type: 'image/png' }, text: 'An image.' }));
  out.push(resultEnvelope(ctx, { data: { content: 'JVBERi0=', encoding: 'base64', media_type: 'application/pdf' }, text: 'A PDF.' }));
  out.push(resultEnvelope(ctx, { data: { applied: false, approval: { id: 'ap-1', status: 'pending', tool: 'write_file', summary: 'Write a.txt.', expires_at: '2030-01-01T00:00:00.000Z', diff_preview: '+x' } }, text: 'Waiting.', partial: true }));
  out.push(resultEnvelope(ctx, { data: null, text: 'No data.' }));
  out.push(errorEnvelope(ctx, new ToolError('NOT_FOUND', 'File not found: a.txt', { path: 'a.txt' })));
  return out;
}

describe('the MCP direct route without the SDK schemas', () => {
  it('takes the plain tools/call the schemas take, with the same id and params', () => {
    let plain = 0;
    for (const body of BODIES) {
      const ours = directCallOf(body, undefined);
      const theirs = bySchemas(body);
      expect(ours, JSON.stringify(body)).toEqual(theirs);
      // What the door reads of it: the id, the name, the arguments (their keys in order: the envelope echoes them).
      const read = (c: { id: unknown; params: unknown } | null) => {
        const p = c?.params as { name?: unknown; arguments?: unknown; _meta?: unknown } | undefined;
        return JSON.stringify(c && [c.id, p?.name, p?.arguments, p?._meta]);
      };
      expect(read(ours)).toBe(read(theirs));
      if (ours) plain++;
    }
    expect(plain).toBeGreaterThan(5);
  });

  it('answers with the bytes of JSON.stringify over the schema-checked result', async () => {
    let reused = 0;
    for (const envelope of envelopes()) {
      const result = await mcpResult(outcomeOf(envelope));
      for (const id of [1, 'req-7', 0]) {
        const expected = JSON.stringify({ result: CallToolResultSchema.parse(result), jsonrpc: '2.0', id });
        expect(directAnswerJson(id, result)).toBe(expected);
      }
      const content = (envelope.data as { content?: unknown } | null)?.content;
      if (typeof content === 'string' && result.content.every((b) => b.type === 'text')) reused++;
    }
    expect(reused).toBeGreaterThan(CONTENTS.length);
  });
});
