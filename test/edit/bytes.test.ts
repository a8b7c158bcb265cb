// The byte-level fast path of edit_file (edit-bytes.ts) must give exactly what the engine gives on the whole
// decoded text: the same bytes, stages, line numbers, snippet and diff. Run over the edit corpus (as is and
// embedded in a larger file, so the window is a real cut) and over random files and edits.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/envelope.js';
import { diffSpans, type DiffPreview } from '../../src/edit/diff.js';
import { countLineBreaks, describeUtf8Edit, planUtf8Edit } from '../../src/edit/bytes.js';
import { applyEdits, type EditOutcome, type EditRequest } from '../../src/edit/engine.js';
import { loadCorpus } from './corpus-cases.js';

interface Result {
  bytes: Buffer;
  edits: EditOutcome['edits'];
  snippet: string;
  diff: DiffPreview;
}

const decode = (b: Buffer) => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b);

/** The general path: the engine on the whole text. Null when it refuses the edit. */
function slow(buf: Buffer, edits: EditRequest[]): Result | null {
  const text = decode(buf);
  let out: EditOutcome;
  try {
    out = applyEdits(text, edits);
  } catch (err) {
    if (err instanceof ToolError) return null;
    throw err;
  }
  return { bytes: Buffer.from(out.text, 'utf8'), edits: out.edits, snippet: out.snippet, diff: diffSpans('f.txt', text, out.text, out.spans) };
}

/** The fast path, or null when it does not apply. */
function fast(buf: Buffer, edits: EditRequest[]): Result | null {
  const plan = planUtf8Edit(buf, edits);
  if (!plan) return null;
  const { outcome, lineBase } = describeUtf8Edit(buf, plan);
  return {
    bytes: Buffer.concat([buf.subarray(0, plan.head), plan.middle, buf.subarray(plan.tail)]),
    edits: outcome.edits,
    snippet: outcome.snippet,
    diff: diffSpans('f.txt', plan.windowText, outcome.text, outcome.spans, lineBase),
  };
}

/** Both paths on one input; returns whether the fast path applied. */
function same(buf: Buffer, edits: EditRequest[]): boolean {
  const f = fast(buf, edits);
  if (f === null) return false;
  const s = slow(buf, edits);
  expect(s, 'the fast path applied where the engine refuses').not.toBeNull();
  const want = s as Result;
  expect(f.bytes.equals(want.bytes), `bytes differ:\n${JSON.stringify(f.bytes.toString())}\n${JSON.stringify(want.bytes.toString())}`).toBe(true);
  expect(f.edits).toEqual(want.edits);
  expect(f.snippet).toBe(want.snippet);
  expect(f.diff).toEqual(want.diff);
  return true;
}

const corpus = loadCorpus();
const filler = (n: number, eol: string) => Array.from({ length: n }, (_, i) => `filler line ${i} of the surrounding file${eol}`).join('');

describe('edit_file fast path (bytes) = engine on the whole text', () => {
  for (const c of corpus) {
    it(`corpus ${c.name}`, () => {
      same(c.inputBytes, c.edits);
      // Embedded after 40 and before 40 other lines (with the case's line ending), unless that changes the case.
      const eol = c.input.includes('\r\n') ? '\r\n' : '\n';
      const bom = c.input.startsWith('\uFEFF');
      const body = bom ? c.input.slice(1) : c.input;
      const sep = body.endsWith('\n') || body === '' ? '' : eol;
      const big = `${bom ? '\uFEFF' : ''}${filler(40, eol)}${body}${sep}${filler(40, eol)}`;
      same(Buffer.from(big, 'utf8'), c.edits);
    });
  }

  it('applies to the usual single exact edit, and to most corpus cases that match exactly', () => {
    const applied = corpus.filter((c) => fast(c.inputBytes, c.edits) !== null).length;
    expect(applied).toBeGreaterThan(10);
    const buf = Buffer.from(`${filler(1000, '\n')}export const X = "alpha";\n${filler(1000, '\n')}`);
    expect(same(buf, [{ old_text: 'export const X = "alpha";', new_text: 'export const X = "beta";' }])).toBe(true);
    const { lineBase } = describeUtf8Edit(buf, planUtf8Edit(buf, [{ old_text: 'export const X = "alpha";', new_text: 'x' }])!);
    expect(lineBase).toBe(1000 - 6);
  });

  it('leaves to the engine what it must decide on the whole text', () => {
    const text = Buffer.from('a\nb\na\n');
    expect(planUtf8Edit(text, [{ old_text: 'a', new_text: 'c' }])).toBeNull(); // two matches
    expect(planUtf8Edit(Buffer.from('aaa\n'), [{ old_text: 'aa', new_text: 'b' }])).toBeNull(); // overlapping matches
    expect(planUtf8Edit(text, [{ old_text: 'zz', new_text: 'c' }])).toBeNull(); // no exact match
    expect(planUtf8Edit(text, [{ old_text: 'b', new_text: 'c' }, { old_text: 'a\n', new_text: '' }])).toBeNull(); // several edits
    expect(planUtf8Edit(Buffer.from([0x61, 0xff, 0x0a]), [{ old_text: 'a', new_text: 'b' }])).toBeNull(); // not UTF-8
    expect(planUtf8Edit(Buffer.from('a\0b\n'), [{ old_text: 'a', new_text: 'b' }])).toBeNull(); // binary
    expect(planUtf8Edit(Buffer.from('x\uFFFDy\n'), [{ old_text: '\uD800', new_text: 'b' }])).toBeNull(); // lone surrogate
    expect(planUtf8Edit(Buffer.from('x\uFFFDy\n'), [{ old_text: 'y', new_text: '\uDC00' }])).toBeNull();
    expect(planUtf8Edit(text, [{ old_text: 'b', new_text: 'b' }])).toBeNull(); // no change: the engine's NO_CHANGE
    expect(planUtf8Edit(Buffer.from('\uFEFFab\n'), [{ old_text: '\uFEFF', new_text: 'b' }])).toBeNull(); // empty after the BOM
  });

  it('never matches the BOM itself', () => {
    const buf = Buffer.from('\uFEFF\uFEFFx\n', 'utf8');
    // old_text's own BOM is stripped; what is left (U+FEFF x) is in the body after the file's BOM.
    expect(same(buf, [{ old_text: '\uFEFF\uFEFFx', new_text: 'y' }])).toBe(true);
  });

  it('counts line breaks', () => {
    const buf = Buffer.from('a\nb\r\n\nc');
    expect(countLineBreaks(buf, 0, buf.length)).toBe(3);
    expect(countLineBreaks(buf, 2, 5)).toBe(1);
    expect(countLineBreaks(buf, 0, 0)).toBe(0);
  });

  it('agrees with the engine on random files and edits', () => {
    const chars = fc.constantFrom('a', 'b', ' ', '\t', 'é', '\u201C', '😀', 'x', '\r', '{');
    const lineArb = fc.array(chars, { maxLength: 10 }).map((a) => a.join(''));
    const fileArb = fc
      .record({
        lines: fc.array(fc.tuple(lineArb, fc.constantFrom('\n', '\r\n', '\n', '\r\n', '\r')), { minLength: 1, maxLength: 40 }),
        final: fc.boolean(),
        bom: fc.boolean(),
      })
      .map(({ lines, final, bom }) => {
        const body = lines.map(([l, e], i) => (i < lines.length - 1 || final ? l + e : l)).join('');
        return (bom ? '\uFEFF' : '') + body;
      });
    const newArb = fc.array(fc.constantFrom('n', 'é', '\n', '\r\n', ' ', '😀', ''), { maxLength: 8 }).map((a) => a.join(''));
    let applied = 0;
    fc.assert(
      fc.property(fileArb, fc.nat(), fc.nat({ max: 30 }), newArb, fc.boolean(), (text, a, len, replacement, all) => {
        const start = a % (text.length + 1);
        const old = text.slice(start, start + 1 + len);
        fc.pre(old.length > 0);
        if (same(Buffer.from(text, 'utf8'), [{ old_text: old, new_text: replacement, replace_all: all }])) applied++;
      }),
      { numRuns: Number(process.env.EDIT_PROPERTY_RUNS ?? 600) },
    );
    expect(applied).toBeGreaterThan(50);
  });
});
