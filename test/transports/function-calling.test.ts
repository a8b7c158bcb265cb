// Function calling that providers accept as is: the OpenAI export valid in strict mode (checked by its
// rules here; the openai package is not a dependency yet), and arguments as models send them (null for
// "not given", numbers as numeric strings) with messages that say what was expected.
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/tools/registry.js';
import { exportTools } from '../../src/transports/function-defs.js';
import { makeApp, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const UNSUPPORTED = ['default', 'minLength', 'maxLength', 'minimum', 'maximum', 'pattern', 'format', 'minItems', 'maxItems'];

/** OpenAI strict mode's rules for one schema node and everything below it; returns the violations. */
function strictViolations(schema: unknown, at = '$'): string[] {
  if (!schema || typeof schema !== 'object') return [];
  if (Array.isArray(schema)) return schema.flatMap((s, i) => strictViolations(s, `${at}[${i}]`));
  const node = schema as Record<string, unknown>;
  const out: string[] = UNSUPPORTED.filter((k) => k in node).map((k) => `${at}: ${k}`);
  if (node.type === 'object') {
    const props = Object.keys((node.properties ?? {}) as object);
    if (node.additionalProperties !== false) out.push(`${at}: additionalProperties`);
    const required = (node.required ?? []) as string[];
    for (const p of props) if (!required.includes(p)) out.push(`${at}.${p}: not required`);
  }
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties') for (const [p, s] of Object.entries(v as object)) out.push(...strictViolations(s, `${at}.${p}`));
    else if (typeof v === 'object') out.push(...strictViolations(v, `${at}.${k}`));
  }
  return out;
}

describe('function definitions', () => {
  it('?format=openai and openai-responses are valid in strict mode; optional properties are nullable', () => {
    const chat = exportTools(TOOLS, 'openai') as { function: { name: string; strict: boolean; parameters: Record<string, unknown> } }[];
    for (const { function: fn } of chat) {
      expect(fn.strict).toBe(true);
      expect(strictViolations(fn.parameters), fn.name).toEqual([]);
    }
    const read = chat.find((c) => c.function.name === 'read_file')?.function.parameters as { properties: Record<string, { type: unknown }> };
    expect(read.properties.path?.type).toBe('string');
    expect(read.properties.start_line?.type).toEqual(['integer', 'null']);

    const responses = exportTools(TOOLS, 'openai-responses') as { type: string; name: string; parameters: unknown }[];
    expect(responses[0]).toMatchObject({ type: 'function', name: 'read_file', strict: true });
    for (const r of responses) expect(strictViolations(r.parameters), r.name).toEqual([]);
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
    expect(noTool.body.error?.message).toContain('read_file, write_file');
    for (const r of [wrongType, requiredNull, unknown, noTool]) expect(r.body.error?.message).not.toContain('GET /v1/tools');
  });
});
