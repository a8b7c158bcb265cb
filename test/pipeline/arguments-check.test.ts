// The argument check compiled once per tool (src/pipeline/arguments.ts, checkOf) takes only what the tool's zod
// schema takes, and returns what zod returns: the same keys in the same order, the same values, defaults filled
// in. Whatever it does not take it leaves to zod, which words the refusal. Swept over every tool of the registry
// with each field given values of every kind, left out, and joined by keys the tool does not know.
import { describe, expect, it } from 'vitest';
import { checkOf, parseArguments } from '../../src/pipeline/arguments.js';
import { TOOLS } from '../../src/tools/registry.js';
import type { ToolDefinition } from '../../src/tools/define.js';
import { argsFor, shapeOf } from '../security/tool-args.js';

const VALUES: unknown[] = [
  '',
  'a.txt',
  'x'.repeat(300),
  '0'.repeat(64),
  'g'.repeat(64),
  'view',
  'literal',
  'str_replace',
  '3',
  0,
  -0,
  1,
  -1,
  1.5,
  2,
  100,
  1001,
  2 ** 53,
  -(2 ** 53),
  1e300,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  null,
  [],
  ['a.txt'],
  [1, 2],
  {},
  { path: 'a.txt' },
];

/** Object.is on every value, the same keys in the same order. */
function expectSameResult(quick: Record<string, unknown>, zod: Record<string, unknown>, what: string): void {
  expect(Object.keys(quick), what).toEqual(Object.keys(zod));
  for (const key of Object.keys(zod)) expect(Object.is(quick[key], zod[key]), `${what}: ${key}`).toBe(true);
}

function compare(tool: ToolDefinition, args: Record<string, unknown>): boolean {
  const quick = checkOf(tool)(args);
  if (quick === undefined) return false;
  const zod = tool.input.safeParse(args);
  const what = `${tool.name} ${JSON.stringify(args)}`;
  expect(zod.success, what).toBe(true);
  expectSameResult(quick, zod.data as Record<string, unknown>, what);
  return true;
}

function inputsFor(tool: ToolDefinition): Record<string, unknown>[] {
  const shape = shapeOf(tool);
  const base = argsFor(tool, {});
  const inputs: Record<string, unknown>[] = [base, {}, { ...base, unknown_key: 1 }, { ...base, toString: 'x' }];
  for (const example of [tool.example, ...(tool.moreExamples ?? [])]) if (example) inputs.push(example as Record<string, unknown>);
  for (const key of Object.keys(shape)) {
    const { [key]: _, ...without } = base;
    inputs.push(without, { ...base, [key]: undefined });
    for (const v of VALUES) inputs.push({ ...base, [key]: v }, { [key]: v });
  }
  // Fields in another order than the shape's, and every optional field at once.
  inputs.push(Object.fromEntries(Object.entries(base).reverse()));
  const everything: Record<string, unknown> = { ...base };
  for (const [key, schema] of Object.entries(shape)) {
    const v = VALUES.find((x) => x !== undefined && schema.safeParse(x).success);
    if (v !== undefined && !(key in everything)) everything[key] = v;
  }
  inputs.push(everything, Object.fromEntries(Object.entries(everything).reverse()));
  return inputs;
}

describe('argument checks compiled once per tool', () => {
  it('take only what zod takes, and give what zod gives, for every tool', () => {
    let taken = 0;
    let total = 0;
    for (const tool of TOOLS) {
      for (const args of inputsFor(tool)) {
        total++;
        if (compare(tool, args)) taken++;
      }
    }
    // The plain shapes do not go to zod (the point of the check), and not everything is taken.
    expect(taken).toBeGreaterThan(total / 10);
    expect(taken).toBeLessThan(total);
  });

  it('take the calls most often sent', () => {
    const tool = (name: string) => TOOLS.find((t) => t.name === name) as ToolDefinition;
    const common: [string, Record<string, unknown>][] = [
      ['read_file', { path: 'a.txt' }],
      ['read_file', { path: 'a.txt', start_line: 10, end_line: 20 }],
      ['write_file', { path: 'a.txt', content: 'x', expected_sha256: 'a'.repeat(64) }],
      ['edit_file', { path: 'a.txt', old_text: 'a', new_text: 'b', expected_sha256: 'A'.repeat(64) }],
      ['list_directory', { path: '.' }],
      ['search_files', { query: 'x', mode: 'content' }],
    ];
    for (const [name, args] of common) expect(compare(tool(name), args), `${name} ${JSON.stringify(args)}`).toBe(true);
  });

  it('leave refusals to zod, which words them as before', () => {
    const readFile = TOOLS.find((t) => t.name === 'read_file') as ToolDefinition;
    for (const args of [{}, { path: 1 }, { path: 'a', tail: 0 }, { path: 'a', nope: 1 }, { path: 'a', start_line: 1.5 }]) {
      expect(checkOf(readFile)(args)).toBeUndefined();
      expect(() => parseArguments(readFile, args)).toThrow();
    }
    expect(parseArguments(readFile, { file_path: 'a.txt' })).toEqual({ path: 'a.txt', line_numbers: false });
  });
});
