// envelopeJson writes an envelope key by key (so a door can reuse data.content's JSON text): its bytes must be
// JSON.stringify's, whatever the envelope holds, but for the … of shortened arguments, written \u2026. Odd data: unicode and lone surrogates, undefined and symbol
// fields, numbers JSON cannot hold, integer-like keys, toJSON that reads its key, nesting, arrays.
import { describe, expect, it } from 'vitest';
import { bareContext, envelopeJson, errorEnvelope, resultEnvelope, shortenParams, ToolError, type Envelope } from '../../src/envelope.js';

const context = { ...bareContext('req-1'), project: 'p', params_input: { path: 'a.txt', nested: { deep: [1, 'x', null] } }, path_resolved: 'a.txt' };

function envelopeWith(data: unknown, extra: Record<string, unknown> = {}): Envelope {
  return { ...resultEnvelope(context, { data, text: 'Read it.' }), ...extra } as Envelope;
}

const CONTENTS = [
  '',
  'hello\n',
  'quotes " and \\ backslashes\tand\ttabs\r\n',
  'unicode: é ß 漢字 🙂 \u2028 \u2029 \u007f \u0000 \u001f',
  'lone surrogates: \ud800 x \udfff and a pair \ud83d\ude42',
  'x'.repeat(10_000),
];

const ODD_DATA: unknown[] = [
  null,
  undefined,
  'a string',
  42,
  [1, 'two', { three: 3 }, undefined, () => 1],
  { content: 'c', encoding: 'utf-8', version: { mtime_ms: 1.5, size_bytes: 3, sha256: null } },
  { content: 'c', missing: undefined, fn: () => 1, sym: Symbol('s'), nan: Number.NaN, inf: -Infinity, negZero: -0, big: 1e21, tiny: 5e-7 },
  { 2: 'two', 1: 'one', content: 'after integer keys', b: 'b', a: 'a' },
  { content: 'dated', when: new Date(0), nested: { when: new Date(1), list: [new Date(2)] } },
  { content: 'keyed', item: { toJSON: (key: string) => `key was ${key}` } },
  { content: 'gone', item: { toJSON: () => undefined } },
  { content: 'boxed', n: Object(3) as unknown, s: Object('s') as unknown, b: Object(false) as unknown },
  { content: 5 },
  { toJSON: () => ({ replaced: true }) },
  { content: 'deep', a: { b: { c: { d: { e: ['f', { g: 'h\u2028' }] } } } } },
];

describe('envelopeJson', () => {
  it('writes JSON.stringify bytes for odd data, and hands out the JSON of data.content', () => {
    for (const content of CONTENTS) {
      for (const data of [...ODD_DATA, { content }, { before: 1, content, after: [content] }]) {
        const envelope = envelopeWith(data);
        const parts: { contentJson?: string } = {};
        expect(envelopeJson(envelope, parts)).toBe(JSON.stringify(envelope));
        expect(envelopeJson(envelope)).toBe(JSON.stringify(envelope));
        const c = (data as { content?: unknown } | null | undefined)?.content;
        if (typeof c === 'string' && typeof data === 'object' && data !== null && !Array.isArray(data) && !('toJSON' in data)) expect(parts.contentJson).toBe(JSON.stringify(c));
        else expect(parts.contentJson).toBeUndefined();
      }
    }
  });

  it('leaves out undefined fields and keeps the key order of the envelope as made', () => {
    const odd = [
      envelopeWith({ content: 'x' }, { error: undefined }),
      envelopeWith({ content: 'x' }, { stats: { time_ms: 3, lines: undefined, bytes: Number.NaN } }),
      envelopeWith({ content: 'x' }, { context: { ...context, project: undefined, params_input: undefined } }),
      { text: 'keys out of order', data: { content: 'x' }, status: 'success', stats: {}, context } as unknown as Envelope,
      { data: { content: 'only data' } } as unknown as Envelope,
      errorEnvelope(context, new ToolError('INVALID_PARAM', 'bad \ud800 "param"', { path: 'a', list: [1, undefined] })),
    ];
    for (const envelope of odd) {
      expect(envelopeJson(envelope, {})).toBe(JSON.stringify(envelope));
    }
  });

  it('writes the … of shortened arguments as \\u2026: the same JSON value, the other bytes as JSON.stringify writes them', () => {
    const deep = { a: { b: { c: { d: { e: { f: { g: { h: { i: { j: 'deep' } } } } } } } } } };
    for (const own of ['ascii', 'latin1 é ß', 'a … of its own', '漢字 🙂', 'lone \ud800', 'quote " and \\']) {
      const long = own.repeat(Math.ceil(250 / own.length));
      for (const args of [{ content: long }, { path: 'a.txt', edits: [{ old_text: long, new_text: own }] }, deep, { path: long, n: 1 }]) {
        const ctx = { ...context, params_input: shortenParams(args) as Record<string, unknown> };
        for (const data of [{ content: own }, { diff_preview: `-${own}\n+x\n` }, null]) {
          const envelope = envelopeWith(data, { context: ctx });
          const expected = JSON.stringify(envelope);
          const ctxJson = JSON.stringify(ctx);
          for (const text of [envelopeJson(envelope), envelopeJson(envelope, {})]) {
            expect(JSON.parse(text)).toEqual(JSON.parse(expected));
            expect(text).toBe(expected.replace(ctxJson, ctxJson.replaceAll('…', '\\u2026')));
          }
        }
      }
    }
  });

  it('throws where JSON.stringify throws (a BigInt, a cycle)', () => {
    const big = envelopeWith({ content: 'x', n: 1n });
    expect(() => JSON.stringify(big)).toThrow(TypeError);
    expect(() => envelopeJson(big, {})).toThrow(TypeError);
    const cyclic: Record<string, unknown> = { content: 'x' };
    cyclic.self = cyclic;
    expect(() => envelopeJson(envelopeWith(cyclic), {})).toThrow(TypeError);
  });
});
