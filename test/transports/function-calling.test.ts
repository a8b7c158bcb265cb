// Function calling that providers accept as is, checked with the providers' own SDKs (dev dependencies,
// no network): the exports typed as the SDKs' tool types (tsc checks the shapes), openai's own strict-schema
// conversion on every tool, and a round trip per API: the SDK sends our tools to a fake provider (a custom
// fetch) that answers with a tool call as a strict-mode model makes it (null for every argument not
// given), and that call runs against the real app.
import fs from 'node:fs/promises';
import Anthropic from '@anthropic-ai/sdk';
import type { Tool as AnthropicTool, ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import { ListToolsResultSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import { toStrictJsonSchema } from 'openai/lib/transform';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool } from 'openai/resources/responses/responses';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/tools/registry.js';
import { exportTools, inputJsonSchema, type ObjectJsonSchema } from '../../src/transports/function-defs.js';
import { makeApp, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

// Assignments, not casts: a shape the SDKs do not accept fails `npm run typecheck`.
const chatTools: ChatCompletionTool[] = exportTools(TOOLS, 'openai');
const responsesTools: FunctionTool[] = exportTools(TOOLS, 'openai-responses');
const anthropicTools: AnthropicTool[] = exportTools(TOOLS, 'anthropic');
const anthropicUnion: ToolUnion[] = anthropicTools;
const mcpTools: McpTool[] = exportTools(TOOLS, 'mcp').tools;

/** A provider's HTTP API, answered in process: records what the SDK sent, answers with `reply`. */
function fakeProvider(reply: unknown) {
  const sent: { url: string; body: Record<string, unknown> }[] = [];
  const fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    sent.push({ url: String(url), body: JSON.parse(String(init?.body)) as Record<string, unknown> });
    return new Response(JSON.stringify(reply), { status: 200, headers: { 'content-type': 'application/json', 'request-id': 'req_test', 'x-request-id': 'req_test' } });
  };
  return { fetch, sent };
}

/** Arguments as strict mode makes a model send them: every property, null for each one not given. */
function strictArguments(parameters: ObjectJsonSchema, given: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(parameters.properties ?? {}).map((k) => [k, k in given ? given[k] : null]));
}

const params = (name: string): ObjectJsonSchema => {
  const tool = chatTools.find((c): c is Extract<ChatCompletionTool, { type: 'function' }> => c.type === 'function' && c.function.name === name);
  return tool?.function.parameters as ObjectJsonSchema;
};

describe('function definitions, checked with the providers\' SDKs', () => {
  it("?format=openai: openai's toStrictJsonSchema accepts every tool and has nothing to change", () => {
    for (const tool of chatTools) {
      if (tool.type !== 'function') throw new Error('not a function tool');
      const parameters = tool.function.parameters as ObjectJsonSchema;
      expect(tool.function.strict, tool.function.name).toBe(true);
      expect(toStrictJsonSchema(parameters as Parameters<typeof toStrictJsonSchema>[0]), tool.function.name).toEqual(parameters);
    }
    // The helper is a real check: the plain input schema (optional, not nullable) is refused.
    expect(() => toStrictJsonSchema(inputJsonSchema(TOOLS[0]!) as Parameters<typeof toStrictJsonSchema>[0])).toThrow(/optional\(\)` without `\.nullable\(\)/);
    const read = params('read_file') as { properties: Record<string, { type: unknown }> };
    expect(read.properties.path?.type).toBe('string');
    expect(read.properties.start_line?.type).toEqual(['integer', 'null']);
  });

  it('?format=openai-responses: the flat shape, strict, the same parameters', () => {
    expect(responsesTools.map((r) => r.name)).toEqual(TOOLS.map((x) => x.name));
    for (const r of responsesTools) {
      expect(r).toMatchObject({ type: 'function', strict: true });
      expect(r.parameters).toEqual(params(r.name));
    }
  });

  it('?format=anthropic and ?format=mcp: object input schemas; the MCP list parses with the SDK schema', () => {
    for (const a of anthropicUnion) expect('input_schema' in a && a.input_schema.type).toBe('object');
    expect(ListToolsResultSchema.parse({ tools: mcpTools }).tools.map((x) => x.name)).toEqual(TOOLS.map((x) => x.name));
  });
});

describe('a round trip through each SDK, no network', () => {
  it('OpenAI Chat Completions: parse() takes our strict tools; the tool call with nulls runs', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('notes.md'), 'alpha\nbeta\n');
    const args = strictArguments(params('edit_file'), {
      path: 'notes.md',
      // nested optionals are nullable too, so a strict model sends null inside the edits
      edits: [{ old_text: 'alpha', new_text: 'ALPHA', replace_all: null }],
    });
    const provider = fakeProvider({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 0,
      model: 'test-model',
      choices: [{ index: 0, finish_reason: 'tool_calls', logprobs: null, message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'edit_file', arguments: JSON.stringify(args) } }] } }],
    });
    const client = new OpenAI({ apiKey: 'test-key', baseURL: 'http://127.0.0.1:9/v1', fetch: provider.fetch, maxRetries: 0 });
    // parse() refuses any tool that is not strict, and parses the arguments it returns.
    const completion = await client.chat.completions.parse({ model: 'test-model', messages: [{ role: 'user', content: 'Capitalize alpha.' }], tools: chatTools });
    expect(provider.sent[0]?.body.tools).toEqual(chatTools);
    const call = completion.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error('no function call');
    expect(call.function.parsed_arguments).toEqual(args);
    const r = await t.call(call.function.name, call.function.parsed_arguments);
    expect(r.body.error).toBeUndefined();
    expect(r.body.status).toBe('success');
    expect(await fs.readFile(t.file('notes.md'), 'utf8')).toBe('ALPHA\nbeta\n');
  });

  it('OpenAI Responses: a function_call item with nulls runs', async () => {
    t = await makeApp();
    const args = strictArguments(params('write_file'), { path: 'out/r.txt', content: 'from the responses API\n' });
    const provider = fakeProvider({
      id: 'resp_test',
      object: 'response',
      created_at: 0,
      status: 'completed',
      model: 'test-model',
      output: [{ type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'write_file', arguments: JSON.stringify(args), status: 'completed' }],
    });
    const client = new OpenAI({ apiKey: 'test-key', baseURL: 'http://127.0.0.1:9/v1', fetch: provider.fetch, maxRetries: 0 });
    const response = await client.responses.create({ model: 'test-model', input: 'Write the file.', tools: responsesTools });
    expect(provider.sent[0]?.body.tools).toEqual(responsesTools);
    const item = response.output[0];
    if (item?.type !== 'function_call') throw new Error('no function_call');
    const r = await t.call(item.name, JSON.parse(item.arguments));
    expect(r.body.status).toBe('success');
    expect(await fs.readFile(t.file('out/r.txt'), 'utf8')).toBe('from the responses API\n');
  });

  it('Anthropic Messages: a tool_use block (with nulls, as some models send) runs', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'one\ntwo\nthree\n');
    const provider = fakeProvider({
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: 'test-model',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.txt', start_line: 2, end_line: null, encoding: null, line_numbers: null } }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    const client = new Anthropic({ apiKey: 'test-key', baseURL: 'http://127.0.0.1:9', fetch: provider.fetch, maxRetries: 0 });
    const message = await client.messages.create({ model: 'test-model', max_tokens: 256, messages: [{ role: 'user', content: 'Read a.txt from line 2.' }], tools: anthropicTools });
    expect(provider.sent[0]?.body.tools).toEqual(anthropicTools);
    const use = message.content.find((b) => b.type === 'tool_use');
    if (use?.type !== 'tool_use') throw new Error('no tool_use');
    const r = await t.call(use.name, use.input);
    expect(r.body).toMatchObject({ status: 'success', data: { content: 'two\nthree\n' } });
  });
});

describe('arguments as models send them', () => {
  it('takes null as "not given" and a numeric string as the number', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'one\ntwo\nthree\n');
    const viaNull = await t.call('read_file', { path: 'a.txt', start_line: null, end_line: null, encoding: null });
    expect(viaNull.body).toMatchObject({ status: 'success', data: { content: 'one\ntwo\nthree\n' } });
    const viaString = await t.call('read_file', { path: 'a.txt', start_line: '2', end_line: '2' });
    expect(viaString.body).toMatchObject({ status: 'success', data: { content: 'two\n' } });
  });

  it('says what was expected and what came, and names the accepted parameters inline', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'one\n');
    const wrongType = await t.call('read_file', { path: 'a.txt', start_line: 'x' });
    expect(wrongType.body.error?.message).toBe(`'start_line' must be an integer, got the string "x".`);
    const requiredNull = await t.call('read_file', { path: null });
    expect(requiredNull.body.error?.message).toBe(`'path' must be a string, got null.`);
    const unknown = await t.call('read_file', { path: 'a.txt', lines: 3 });
    expect(unknown.body.error?.message).toMatch(/^Unknown parameter\(s\) 'lines'; read_file accepts: path, /);
    const noTool = await t.call('read_files', {});
    expect(noTool.body.error?.message).toContain('write_file, read_file');
    for (const r of [wrongType, requiredNull, unknown, noTool]) expect(r.body.error?.message).not.toContain('GET /v1/tools');
  });
});
