import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/envelope.js';
import { applyEdits, type EditOutcome, type EditRequest } from '../../src/edit/engine.js';

/** Applies the spans to the original; must give the new text. Also checks order and disjointness. */
function replaySpans(original: string, out: EditOutcome): string {
  let rebuilt = '';
  let pos = 0;
  let newPos = 0;
  for (const s of out.spans) {
    if (s.oldStart < pos || s.newStart < newPos || s.oldEnd < s.oldStart || s.newEnd < s.newStart) throw new Error(`bad span ${JSON.stringify(s)}`);
    if (s.oldStart - pos !== s.newStart - newPos) throw new Error('gap lengths differ');
    rebuilt += original.slice(pos, s.oldStart) + out.text.slice(s.newStart, s.newEnd);
    pos = s.oldEnd;
    newPos = s.newEnd;
  }
  return rebuilt + original.slice(pos);
}

function tryApply(text: string, edits: EditRequest[]): EditOutcome | ToolError {
  try {
    return applyEdits(text, edits);
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
}

/** EDIT_PROPERTY_RUNS=5000 npx vitest run test/edit/properties.test.ts for a longer hunt. */
const runs = (n: number) => Number(process.env.EDIT_PROPERTY_RUNS ?? n);

const isUnique = (text: string, s: string) => {
  const first = text.indexOf(s);
  return first !== -1 && text.indexOf(s, first + 1) === -1;
};

// Small alphabets make repeats (and so ambiguity) common, which is what the engine must survive.
const chars = fc.constantFrom('a', 'b', 'c', ' ', '\t', '"', '\u201C', '\u2014', '\u00A0', 'é', '$', '\\', '{', '}', 'x', 'y');
const lineArb = fc.array(chars, { maxLength: 12 }).map((a) => a.join(''));
const fileArb = fc
  .record({ lines: fc.array(lineArb, { minLength: 1, maxLength: 30 }), eol: fc.constantFrom('\n', '\r\n'), final: fc.boolean(), bom: fc.boolean() })
  .map(({ lines, eol, final, bom }) => (bom ? '\uFEFF' : '') + lines.join(eol) + (final ? eol : ''));
const inlineArb = fc.array(chars, { minLength: 1, maxLength: 10 }).map((a) => a.join(''));

const splitsCrlf = (text: string, at: number) => at > 0 && at < text.length && text[at - 1] === '\r' && text[at] === '\n';

describe('edit engine properties', () => {
  it('an exact edit followed by its inverse restores the file byte for byte', () => {
    fc.assert(
      fc.property(fileArb, fc.nat(), fc.nat(), inlineArb, (text, a, b, replacement) => {
        const body = text.startsWith('\uFEFF') ? 1 : 0;
        const start = body + (a % (text.length - body + 1));
        const end = start + 1 + (b % 8);
        fc.pre(end <= text.length && !splitsCrlf(text, start) && !splitsCrlf(text, end));
        const old = text.slice(start, end);
        fc.pre(isUnique(text, old) && old !== replacement);
        const out = applyEdits(text, [{ old_text: old, new_text: replacement }]);
        expect(out.text).toBe(text.slice(0, start) + replacement + text.slice(end));
        expect(out.edits[0]?.stage).toBe('exact');
        expect(replaySpans(text, out)).toBe(out.text);
        fc.pre(isUnique(out.text, replacement));
        const back = applyEdits(out.text, [{ old_text: replacement, new_text: old }]);
        expect(back.text).toBe(text);
      }),
      { numRuns: runs(400) },
    );
  });

  it('a tolerant match never changes a byte outside the matched lines', () => {
    // Each block line carries a unique id, so the block is unique at every level and the test knows where it is.
    const codeLine = fc.record({
      indent: fc.constantFrom('', '  ', '    ', '\t', '\t\t', ' \t'),
      text: fc.array(fc.constantFrom('x', 'y', '=', '(', ')', '"', '\u201C', '\u201D', '\u2014', '\u00A0', ' ', '-'), { maxLength: 8 }),
      trail: fc.constantFrom('', '', ' ', '  ', '\t'),
      blank: fc.boolean(),
    });
    const perturbation = fc.record({
      trailing: fc.boolean(),
      shift: fc.integer({ min: -8, max: 8 }),
      expandTabs: fc.boolean(),
      quotes: fc.boolean(),
      lf: fc.boolean(),
    });
    const stages = new Set<string>();
    fc.assert(
      fc.property(
        fc.array(codeLine, { minLength: 3, maxLength: 25 }),
        fc.nat(),
        fc.nat(),
        fc.constantFrom('\n', '\r\n'),
        perturbation,
        fc.array(fc.constantFrom('    added()', 'changed = 1', '', '\tinner()'), { maxLength: 4 }),
        (specs, a, b, eol, p, extra) => {
          const lines = specs.map((s, i) => (s.blank && i % 3 === 1 ? s.trail : `${s.indent}id${i} ${s.text.join('')}${s.trail}`));
          const first = a % lines.length;
          const last = Math.min(lines.length - 1, first + (b % 4));
          fc.pre(lines.slice(first, last + 1).some((l) => /id\d/.test(l)));
          const text = lines.join(eol) + eol;

          // The model's view of lines first..last.
          let quoted = lines.slice(first, last + 1);
          if (p.trailing) quoted = quoted.map((l) => l.replace(/[ \t]+$/, ''));
          if (p.expandTabs) {
            quoted = quoted.map((l) => {
              const ind = /^[ \t]*/.exec(l)?.[0] ?? '';
              let w = 0;
              for (const ch of ind) w = ch === '\t' ? w + 4 - (w % 4) : w + 1;
              return ' '.repeat(w) + l.slice(ind.length);
            });
          }
          if (p.shift !== 0) {
            const nonBlank = quoted.filter((l) => l.trim() !== '');
            const minIndent = Math.min(...nonBlank.map((l) => (/^ */.exec(l)?.[0] ?? '').length));
            // Uniform shift: only when the indentation is plain spaces and can go that far left.
            if (quoted.every((l) => l.trim() === '' || !/^ *\t/.test(l)) && minIndent + p.shift >= 0) {
              quoted = quoted.map((l) => (l.trim() === '' ? l : p.shift > 0 ? ' '.repeat(p.shift) + l : l.slice(-p.shift)));
            }
          }
          if (p.quotes) quoted = quoted.map((l) => l.replace(/[\u201C\u201D]/g, '"').replace(/\u2014/g, '-').replace(/\u00A0/g, ' '));
          const modelEol = p.lf ? '\n' : eol;
          const oldText = quoted.join(modelEol) + modelEol;
          const newText = [...quoted, ...extra].join(modelEol) + modelEol;

          const blockStart = lines.slice(0, first).reduce((n, l) => n + l.length + eol.length, 0);
          const blockEnd = blockStart + lines.slice(first, last + 1).reduce((n, l) => n + l.length + eol.length, 0);

          const out = tryApply(text, [{ old_text: oldText, new_text: newText }]);
          if (out instanceof ToolError) {
            // Only "nothing to do" is acceptable: the quote was faithful up to the forgiven differences.
            expect(out.code).toBe('NO_CHANGE');
            expect(extra).toEqual([]);
            return;
          }
          stages.add(out.edits[0]?.stage ?? '');
          expect(out.text.slice(0, blockStart)).toBe(text.slice(0, blockStart));
          expect(out.text.slice(out.text.length - (text.length - blockEnd))).toBe(text.slice(blockEnd));
          for (const s of out.spans) {
            expect(s.oldStart).toBeGreaterThanOrEqual(blockStart);
            expect(s.oldEnd).toBeLessThanOrEqual(blockEnd);
          }
          // The lines the model kept are the file's lines, byte for byte.
          const newBlock = out.text.slice(blockStart, out.text.length - (text.length - blockEnd));
          expect(newBlock.startsWith(text.slice(blockStart, blockEnd))).toBe(true);
          // New lines use the file's line ending.
          if (eol === '\r\n') expect(newBlock.replace(/\r\n/g, '')).not.toContain('\n');
          else expect(newBlock).not.toContain('\r');
          expect(replaySpans(text, out)).toBe(out.text);
        },
      ),
      { numRuns: runs(400) },
    );
    // The generator really exercises every stage.
    expect([...stages].sort()).toEqual(['exact', 'indentation', 'line_endings', 'trailing_whitespace', 'unicode']);
  });

  it('quoting the file tolerantly with new_text equal to old_text changes nothing', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('  a = "b"  ', '\tc()', '', 'd \u2014 e'), { minLength: 1, maxLength: 6 }), fc.nat(), (body, salt) => {
        const lines = body.map((l, i) => (l === '' ? l : `${l} #${i}`));
        const text = `start ${salt}\n${lines.join('\n')}\nend\n`;
        // Uniformly re-indented (tabs expanded, two more columns), trailing blanks and the em dash lost.
        const quoted = lines
          .map((l) => (l === '' ? l : `  ${l.replace(/^\t/, '    ').trimEnd().replace(/\u2014/g, '-')}`))
          .join('\n');
        fc.pre(quoted.trim() !== '');
        const out = tryApply(text, [{ old_text: quoted, new_text: quoted }]);
        expect(out).toBeInstanceOf(ToolError);
        expect((out as ToolError).code).toBe('NO_CHANGE');
      }),
      { numRuns: runs(200) },
    );
  });

  it('spans are consistent for random multi-edits: applying them to the old text yields the new text', () => {
    fc.assert(
      fc.property(
        fileArb,
        fc.array(fc.record({ a: fc.nat(), len: fc.integer({ min: 1, max: 6 }), text: fc.oneof(inlineArb, fc.constant('')), all: fc.boolean() }), {
          minLength: 1,
          maxLength: 4,
        }),
        (text, picks) => {
          const edits = picks
            .map((p) => {
              const start = p.a % text.length;
              return { old_text: text.slice(start, start + p.len), new_text: p.text, replace_all: p.all };
            })
            .filter((e) => e.old_text.replace(/^\uFEFF/, '') !== '');
          fc.pre(edits.length > 0);
          const out = tryApply(text, edits);
          if (out instanceof ToolError) {
            expect(['MULTIPLE_MATCHES', 'NO_MATCH', 'NO_CHANGE', 'INVALID_PARAM']).toContain(out.code);
            return;
          }
          expect(replaySpans(text, out)).toBe(out.text);
          expect(out.text.startsWith('\uFEFF')).toBe(text.startsWith('\uFEFF'));
          for (const e of out.edits) {
            expect(e.start_line).toBeGreaterThanOrEqual(1);
            expect(e.end_line).toBeGreaterThanOrEqual(e.start_line);
          }
        },
      ),
      { numRuns: runs(500) },
    );
  });
});
