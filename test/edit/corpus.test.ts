import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/envelope.js';
import { applyEdits } from '../../src/edit/engine.js';
import { isErrorCase, loadCorpus } from './corpus-cases.js';

const corpus = loadCorpus();

describe('edit corpus', () => {
  it('has enough realistic cases', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
  });

  it('keeps CRLF and BOM fixtures byte-exact (no git conversion)', () => {
    expect(corpus.some((c) => c.inputBytes.includes(Buffer.from('\r\n')))).toBe(true);
    expect(corpus.some((c) => c.inputBytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])))).toBe(true);
  });

  for (const c of corpus) {
    it(`${c.name}: ${c.description}`, () => {
      const want = c.expect;
      if (isErrorCase(want)) {
        let thrown: unknown;
        try {
          applyEdits(c.input, c.edits);
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(ToolError);
        const err = thrown as ToolError;
        expect(err.code).toBe(want.error);
        if (want.message !== undefined) expect(err.message).toBe(want.message);
        if (want.message_includes !== undefined) expect(err.message).toContain(want.message_includes);
        if (want.lines !== undefined) expect(err.details?.lines).toEqual(want.lines);
        if (want.edit_index !== undefined) expect(err.details?.edit_index).toBe(want.edit_index);
        if (want.closest_start_line !== undefined) {
          expect((err.details?.closest as { start_line: number } | null)?.start_line).toBe(want.closest_start_line);
        }
        for (const d of want.differences ?? []) expect(err.details?.differences).toContain(d);
        return;
      }
      const out = applyEdits(c.input, c.edits);
      expect(Buffer.from(out.text, 'utf8').equals(want.bytes), `bytes differ:\n${JSON.stringify(out.text)}\n${JSON.stringify(want.text)}`).toBe(true);
      if (c.stages) expect(out.edits.map((e) => e.stage)).toEqual(c.stages);
      // Spans replay the change on the original text.
      let rebuilt = '';
      let pos = 0;
      for (const s of out.spans) {
        rebuilt += c.input.slice(pos, s.oldStart) + out.text.slice(s.newStart, s.newEnd);
        pos = s.oldEnd;
      }
      expect(rebuilt + c.input.slice(pos)).toBe(out.text);
    });
  }
});
