// OpenAI's strict mode refuses a whole tool list when one definition breaks its rules (issue 23: apply_patch's
// `operation` was a oneOf, so registering every tool with strict: true failed). Every definition that
// GET /v1/tools?format=openai (and openai-responses) marks strict is checked here against those rules:
// an object at the root, only the keywords strict mode supports (no oneOf/allOf/not/if, no minLength,
// maxLength or default), every object closed (additionalProperties false) with every property required,
// every schema typed (type, anyOf, enum or $ref), nesting at most 10 levels deep.
// MCP's tools/list is checked the way a client gets it there (issue 36): the OpenAI Agents SDK converts each
// tool's inputSchema to strict mode itself (getAllMcpTools with convertSchemasToStrict), and what it makes
// must hold the same rules, with every tool strict.
import fs from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getAllMcpTools, MCPServerStreamableHttp, RunContext, setTracingDisabled, type FunctionTool, type Tool as AgentTool } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers.js';
import { envelopeOf, httpClient, mcpUrl } from './mcp-helpers.js';

// The Agents SDK would export traces to OpenAI: nothing leaves loopback.
setTracingDisabled(true);

type Schema = Record<string, unknown>;

/**
 * The keywords strict mode supports (OpenAI's Structured Outputs guide lists them); any other is refused, or
 * not enforced (minLength, maxLength, default). The REST export drops even the supported constraints (pattern,
 * format, minimum...) and the server checks them.
 */
const SUPPORTED = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'enum', 'const', 'description', '$ref', '$defs', 'definitions', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems']);

/** The places strict mode would refuse in `schema`, as JSON-pointer-like paths with the rule broken. */
export function strictViolations(root: Schema): string[] {
  const out: string[] = [];
  if (root.type !== 'object') out.push('/: the root is not an object');
  if ('anyOf' in root) out.push('/: anyOf at the root');
  const visit = (s: unknown, at: string, depth: number): void => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return void out.push(`${at}: not a schema`);
    const schema = s as Schema;
    if (depth > 10) out.push(`${at}: nested deeper than 10 levels`);
    for (const k of Object.keys(schema)) if (!SUPPORTED.has(k)) out.push(`${at}: ${k}`);
    if (!('type' in schema || 'anyOf' in schema || 'enum' in schema || '$ref' in schema)) out.push(`${at}: no type`);
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.includes('object') || 'properties' in schema) {
      const props = (schema.properties ?? {}) as Record<string, unknown>;
      if (schema.additionalProperties !== false) out.push(`${at}: additionalProperties is not false`);
      const required = new Set((schema.required as string[] | undefined) ?? []);
      for (const p of Object.keys(props)) if (!required.has(p)) out.push(`${at}/${p}: not required`);
      for (const [p, v] of Object.entries(props)) visit(v, `${at}/${p}`, depth + 1);
    }
    if (types.includes('array')) {
      if (!('items' in schema)) out.push(`${at}: array without items`);
      else visit(schema.items, `${at}[]`, depth + 1);
    }
    if (Array.isArray(schema.anyOf)) schema.anyOf.forEach((b, i) => visit(b, `${at}|${i}`, depth));
    for (const [name, def] of Object.entries((schema.$defs ?? {}) as Record<string, unknown>)) visit(def, `${at}$defs/${name}`, depth);
  };
  visit(root, '', 0);
  return out;
}

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

const get = async (format: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/v1/tools?format=${format}` });
  expect(res.statusCode).toBe(200);
  return res.json() as unknown[];
};

describe('strict OpenAI definitions hold strict mode\'s rules', () => {
  it('the checker itself refuses what strict mode refuses', () => {
    expect(strictViolations({ type: 'object', properties: { a: { oneOf: [{ type: 'string' }] } }, required: ['a'], additionalProperties: false })).toEqual(['/a: oneOf', '/a: no type']);
    expect(strictViolations({ type: 'object', properties: { a: { type: 'string' } } })).toEqual([': additionalProperties is not false', '/a: not required']);
    expect(strictViolations({ type: 'object', properties: {}, required: [], additionalProperties: false })).toEqual([]);
    expect(strictViolations({ type: 'object', properties: { a: { type: 'string', minLength: 1, default: 'x' } }, required: ['a'], additionalProperties: false })).toEqual(['/a: minLength', '/a: default']);
  });

  it.each(['openai', 'openai-responses'])('?format=%s: every definition marked strict passes; the others say strict false', async (format) => {
    const defs = (await get(format)) as Record<string, unknown>[];
    expect(defs.length).toBeGreaterThan(20);
    const flat = defs.map((d) => (format === 'openai' ? (d.function as Record<string, unknown>) : d));
    const problems: string[] = [];
    for (const d of flat) {
      expect(typeof d.strict, String(d.name)).toBe('boolean');
      if (d.strict === true) problems.push(...strictViolations(d.parameters as Schema).map((p) => `${String(d.name)}${p}`));
    }
    expect(problems).toEqual([]);
    // apply_patch keeps strict mode, its Responses operation a closed anyOf of the three kinds.
    const patch = flat.find((d) => d.name === 'apply_patch')!;
    expect(patch.strict).toBe(true);
    const operation = ((patch.parameters as Schema).properties as Record<string, Schema>).operation!;
    expect(JSON.stringify(operation)).not.toContain('oneOf');
    expect(JSON.stringify(operation)).toContain('delete_file');
  });
});

describe('MCP tools/list, converted to strict mode by the OpenAI Agents SDK', () => {
  let url = '';
  let server: MCPServerStreamableHttp;
  let client: Client;
  let tools: AgentTool[] = [];
  beforeAll(async () => {
    url = await mcpUrl(t.app);
    server = new MCPServerStreamableHttp({ url, name: 'toolgate' });
    await server.connect();
    tools = await getAllMcpTools({ mcpServers: [server], convertSchemasToStrict: true });
    client = await httpClient(url);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  const functionTool = (name: string) => {
    const tool = tools.find((x): x is FunctionTool => x.type === 'function' && x.name === name);
    if (!tool) throw new Error(`no ${name}`);
    return tool;
  };

  it('every tool converts (strict: true, no "Error converting MCP schema") and holds the rules', async () => {
    const listed = (await client.listTools()).tools.map((x) => x.name);
    expect(tools.map((x) => x.name)).toEqual(listed);
    expect(listed.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const tool of tools) {
      if (tool.type !== 'function') throw new Error(`${tool.name} is not a function tool`);
      // The SDK falls back to strict: false, and logs the error, when a schema does not convert.
      expect(tool.strict, tool.name).toBe(true);
      problems.push(...strictViolations(tool.parameters as Schema).map((p) => `${tool.name}${p}`));
    }
    expect(problems).toEqual([]);
  });

  it('apply_patch: a Responses operation as strict mode makes the model send it (null for each argument not given) runs', async () => {
    await fs.writeFile(t.file('gone.txt'), 'bye\n');
    const apply = functionTool('apply_patch');
    const params = apply.parameters as { properties: Record<string, unknown> };
    const args: Record<string, unknown> = Object.fromEntries(Object.keys(params.properties).map((k) => [k, null]));
    // delete_file has no diff: inside the operation's branch strict mode sends null for it as well.
    args.operation = { type: 'delete_file', path: 'gone.txt', diff: null };
    const output = JSON.stringify(await apply.invoke(new RunContext(), JSON.stringify(args)));
    expect(output).not.toMatch(/Error [A-Z_]+:/);
    await expect(fs.stat(t.file('gone.txt'))).rejects.toThrow();
  });

  it('the constraints strict mode does not take are still checked by the server when the call arrives', async () => {
    await fs.writeFile(t.file('kept.txt'), 'keep\n');
    // minimum 1 (start_line) and minLength 1 (old_text) are no longer in the listed schema.
    expect(JSON.stringify((await client.listTools()).tools.map((x) => x.inputSchema))).not.toMatch(/"(minimum|minLength|maxLength|default|oneOf)"/);
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'kept.txt', start_line: 0 } });
    expect(read.isError).toBe(true);
    expect(envelopeOf(read).error?.code).toBe('INVALID_PARAM');
    const edit = await client.callTool({ name: 'edit_file', arguments: { path: 'kept.txt', old_text: '', new_text: 'x' } });
    expect(envelopeOf(edit).error?.code).toBe('INVALID_PARAM');
    expect(await fs.readFile(t.file('kept.txt'), 'utf8')).toBe('keep\n');
  });
});
