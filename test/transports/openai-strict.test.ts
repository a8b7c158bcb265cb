// OpenAI's strict mode refuses a whole tool list when one definition breaks its rules (issue 23: apply_patch's
// `operation` was a oneOf, so registering every tool with strict: true failed). Every definition that
// GET /v1/tools?format=openai (and openai-responses) marks strict is checked here against those rules:
// an object at the root, no oneOf/allOf/not/if, every object closed (additionalProperties false) with every
// property required, every schema typed (type, anyOf, enum or $ref), nesting at most 10 levels deep.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers.js';

type Schema = Record<string, unknown>;

/** Keywords strict mode does not accept anywhere in a schema. */
const REFUSED = ['oneOf', 'allOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'patternProperties', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems', 'contains', 'prefixItems', 'minProperties', 'maxProperties', 'default'];

/** The places strict mode would refuse in `schema`, as JSON-pointer-like paths with the rule broken. */
export function strictViolations(root: Schema): string[] {
  const out: string[] = [];
  if (root.type !== 'object') out.push('/: the root is not an object');
  if ('anyOf' in root) out.push('/: anyOf at the root');
  const visit = (s: unknown, at: string, depth: number): void => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return void out.push(`${at}: not a schema`);
    const schema = s as Schema;
    if (depth > 10) out.push(`${at}: nested deeper than 10 levels`);
    for (const k of REFUSED) if (k in schema) out.push(`${at}: ${k}`);
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
