import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/envelope.js';
import { applyEdits, type EditOutcome, type EditRequest } from '../../src/edit/engine.js';

function fail(text: string, edits: EditRequest[]): ToolError {
  try {
    applyEdits(text, edits);
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error('expected applyEdits to throw');
}

/** Applying the spans to the original must give the new text, and spans must be sorted and disjoint. */
function replaySpans(original: string, out: EditOutcome): string {
  let rebuilt = '';
  let pos = 0;
  let newPos = 0;
  for (const s of out.spans) {
    expect(s.oldStart).toBeGreaterThanOrEqual(pos);
    expect(s.newStart).toBeGreaterThanOrEqual(newPos);
    expect(s.oldStart - pos).toBe(s.newStart - newPos);
    rebuilt += original.slice(pos, s.oldStart) + out.text.slice(s.newStart, s.newEnd);
    pos = s.oldEnd;
    newPos = s.newEnd;
  }
  return rebuilt + original.slice(pos);
}

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('applyEdits: outcome', () => {
  it('reports spans, stage, lines and a right-aligned snippet', () => {
    const text = numbered(20);
    const out = applyEdits(text, [{ old_text: 'line 10\n', new_text: 'line ten\nline ten and a half\n' }]);
    expect(out.text).toBe(text.replace('line 10\n', 'line ten\nline ten and a half\n'));
    expect(out.edits).toEqual([{ stage: 'exact', replacements: 1, start_line: 10, end_line: 11 }]);
    expect(out.snippet.split('\n')).toEqual([
      ' 6: line 6',
      ' 7: line 7',
      ' 8: line 8',
      ' 9: line 9',
      '10: line ten',
      '11: line ten and a half',
      '12: line 11',
      '13: line 12',
      '14: line 13',
      '15: line 14',
    ]);
    expect(replaySpans(text, out)).toBe(out.text);
  });

  it('separates distant regions with ... and merges near ones', () => {
    const text = numbered(40);
    const out = applyEdits(text, [
      { old_text: 'line 3\n', new_text: 'line three\n' },
      { old_text: 'line 30\n', new_text: 'line thirty\n' },
      { old_text: 'line 33\n', new_text: 'line thirty-three\n' },
    ]);
    const parts = out.snippet.split('\n...\n');
    expect(parts).toHaveLength(2);
    expect(parts[0]?.split('\n')[0]).toBe(' 1: line 1');
    expect(parts[0]?.split('\n').at(-1)).toBe(' 7: line 7');
    expect(parts[1]?.split('\n')[0]).toBe('26: line 26');
    expect(parts[1]?.split('\n').at(-1)).toBe('37: line 37');
  });

  it('maps spans of later edits that land before earlier ones to the original text', () => {
    const text = numbered(30);
    const out = applyEdits(text, [
      { old_text: 'line 20\n', new_text: 'line twenty\n' },
      { old_text: 'line 2\n', new_text: 'line two\nline two bis\nline two ter\n' },
    ]);
    expect(out.spans).toHaveLength(2);
    expect(replaySpans(text, out)).toBe(out.text);
    // Edit 1's lines are reported in the final text, after edit 2 added two lines above it.
    expect(out.edits[0]).toMatchObject({ start_line: 22, end_line: 22 });
    expect(out.edits[1]).toMatchObject({ start_line: 2, end_line: 4 });
  });

  it('counts replace_all replacements and spans every one', () => {
    const text = 'a = 1\nb = 1\nc = 1\n';
    const out = applyEdits(text, [{ old_text: '= 1', new_text: '= 2', replace_all: true }]);
    expect(out.text).toBe('a = 2\nb = 2\nc = 2\n');
    expect(out.edits).toEqual([{ stage: 'exact', replacements: 3, start_line: 1, end_line: 3 }]);
    expect(out.spans).toHaveLength(3);
    expect(replaySpans(text, out)).toBe(out.text);
  });

  it('keeps a BOM and reports spans in offsets of the text with the BOM', () => {
    const text = '\uFEFFone\ntwo\n';
    const out = applyEdits(text, [{ old_text: 'two', new_text: 'TWO' }]);
    expect(out.text).toBe('\uFEFFone\nTWO\n');
    expect(out.spans).toEqual([{ oldStart: 5, oldEnd: 8, newStart: 5, newEnd: 8 }]);
    expect(out.snippet).toBe('1: one\n2: TWO');
  });

  it('treats $ patterns and backslashes in new_text literally', () => {
    const out = applyEdits('x = OLD\n', [{ old_text: 'OLD', new_text: "$& $1 $$ $` $' \\n \\\\" }]);
    expect(out.text).toBe("x = $& $1 $$ $` $' \\n \\\\\n");
  });
});

describe('applyEdits: errors', () => {
  it('refuses an empty old_text', () => {
    expect(fail('abc', [{ old_text: '', new_text: 'x' }]).code).toBe('INVALID_PARAM');
  });

  it('says MULTIPLE_MATCHES with the exact fixed message and the lines', () => {
    const err = fail('x\nfoo\ny\nfoo\n', [{ old_text: 'foo', new_text: 'bar' }]);
    expect(err.code).toBe('MULTIPLE_MATCHES');
    expect(err.message).toBe('Found 2 matches (lines 2, 4); add context to make old_text unique or set replace_all');
    expect(err.details?.lines).toEqual([2, 4]);
  });

  it('counts overlapping occurrences as ambiguous', () => {
    expect(fail('aaa\n', [{ old_text: 'aa', new_text: 'b' }]).code).toBe('MULTIPLE_MATCHES');
  });

  it('names the edit when several are given', () => {
    const err = fail('foo\nfoo\nbar\n', [
      { old_text: 'bar', new_text: 'baz' },
      { old_text: 'foo', new_text: 'qux' },
    ]);
    expect(err.message).toBe('Edit 2: Found 2 matches (lines 1, 2); add context to make old_text unique or set replace_all');
    expect(err.details?.edit_index).toBe(1);
  });

  it('reports MULTIPLE_MATCHES lines of later edits in the original file', () => {
    const err = fail('a\nfoo\nfoo\n', [
      { old_text: 'a\n', new_text: 'a\nnew 1\nnew 2\n' },
      { old_text: 'foo', new_text: 'x' },
    ]);
    expect(err.details?.lines).toEqual([2, 3]);
  });

  it('gives NO_MATCH details a model can retry from', () => {
    const text = 'def run():\n    start()\n    wait(timeout=5)\n    stop()\n';
    const err = fail(text, [{ old_text: '    start()\n    wait(timeout=10)\n    stop()\n', new_text: 'x' }]);
    expect(err.code).toBe('NO_MATCH');
    expect(err.message).toContain('lines 2-4');
    const closest = err.details?.closest as { start_line: number; end_line: number; similarity: number; lines: string };
    expect(closest.start_line).toBe(2);
    expect(closest.end_line).toBe(4);
    expect(closest.similarity).toBeGreaterThan(0.5);
    expect(closest.similarity).toBeLessThanOrEqual(1);
    expect(closest.lines).toBe('2:     start()\n3:     wait(timeout=5)\n4:     stop()');
    expect(err.details?.differences).toEqual(['content']);
    expect(err.details?.edit_index).toBe(0);
  });

  it('refuses an edit quoting text an earlier edit replaced, with the lines of the earlier one', () => {
    const err = fail('one\ntwo\nthree\n', [
      { old_text: 'two\n', new_text: 'TWO\n' },
      { old_text: 'two\nthree', new_text: 'x' },
    ]);
    expect(err.code).toBe('INVALID_PARAM');
    expect(err.message).toBe('Edit 2 overlaps edit 1 (lines 2-2); merge them into one edit');
  });

  it('applies edits in sequence: a later edit may target text an earlier one wrote (a -> b, b -> c)', () => {
    const out = applyEdits('x = a\ny = 1\n', [
      { old_text: 'x = a', new_text: 'x = b' },
      { old_text: 'x = b', new_text: 'x = c' },
    ]);
    expect(out.text).toBe('x = c\ny = 1\n');
    expect(out.spans).toHaveLength(1);
  });

  it('says NO_CHANGE when edits in sequence end where they began', () => {
    expect(fail('a\nb\n', [{ old_text: 'a', new_text: 'z' }, { old_text: 'z', new_text: 'a' }]).code).toBe('NO_CHANGE');
  });

  it('says NO_CHANGE when nothing changes', () => {
    expect(fail('a\nb\n', [{ old_text: 'a', new_text: 'a' }]).code).toBe('NO_CHANGE');
  });

  it('applies all or nothing: a failing second edit leaves no result', () => {
    const err = fail('a\nb\n', [
      { old_text: 'a', new_text: 'A' },
      { old_text: 'zzz', new_text: 'Z' },
    ]);
    expect(err.code).toBe('NO_MATCH');
    expect(err.message).toMatch(/^Edit 2: /);
  });
});

describe('applyEdits: cascade', () => {
  it('prefers an exact match over a tolerant one elsewhere', () => {
    const text = 'if a:\n    go()\n\ndef f():\n    if a:\n        go()\n';
    const out = applyEdits(text, [{ old_text: 'if a:\n    go()\n', new_text: 'if a:\n    stop()\n' }]);
    expect(out.edits[0]?.stage).toBe('exact');
    expect(out.text).toBe('if a:\n    stop()\n\ndef f():\n    if a:\n        go()\n');
  });

  it('never guesses between two tolerant candidates', () => {
    const text = 'a:\n  x: 1  \nb:\n  x: 1 \n';
    expect(fail(text, [{ old_text: '  x: 1\n', new_text: '  x: 2\n' }]).code).toBe('MULTIPLE_MATCHES');
  });

  it('does not split a CRLF pair when old_text starts with a line break', () => {
    const out = applyEdits('a\r\nb\r\n', [{ old_text: '\nb', new_text: '\nc' }]);
    expect(out.text).toBe('a\r\nc\r\n');
  });

  it('replace_all of text starting with a line break in CRLF never overlaps its own matches (regression)', () => {
    const text = 'aa\r\n\r\n\r\n\r\naa';
    const out = applyEdits(text, [{ old_text: '\n\r', new_text: 'x', replace_all: true }]);
    expect(out.text).toBe('aaxxx\naa');
    expect(replaySpans(text, out)).toBe(out.text);
  });

  it('keeps new_text line endings in a file without any line break (nothing to follow)', () => {
    expect(applyEdits('one', [{ old_text: 'one', new_text: 'one\r\ntwo' }]).text).toBe('one\r\ntwo');
  });

  it('writes new lines with the ending of the line it edits in a mixed file', () => {
    const text = 'one\r\ntwo\nend';
    expect(applyEdits(text, [{ old_text: 'two', new_text: 'two\nmore' }]).text).toBe('one\r\ntwo\nmore\nend');
    expect(applyEdits(text, [{ old_text: 'one', new_text: 'one\nmore' }]).text).toBe('one\r\nmore\r\ntwo\nend');
    // The last line has no ending of its own: it takes the one before it.
    expect(applyEdits(text, [{ old_text: 'end', new_text: 'end\nmore' }]).text).toBe('one\r\ntwo\nend\nmore');
  });

  it('keeps each line ending of a mixed block when new_text has as many breaks', () => {
    const text = 'a\r\nb\nc\r\n';
    const out = applyEdits(text, [{ old_text: 'a\r\nb\nc', new_text: 'A\nB\nC' }]);
    expect(out.text).toBe('A\r\nB\nC\r\n');
  });

  it('re-indents with the tab width that makes the offset zero', () => {
    const text = 'func f() {\n\tif x {\n\t\ty()\n\t}\n}\n';
    const out = applyEdits(text, [{ old_text: '  if x {\n    y()\n  }\n', new_text: '  if x {\n    y()\n    z()\n  }\n' }]);
    expect(out.text).toBe('func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n');
  });

  it('keeps blank lines the model left out between kept lines', () => {
    const text = 'a()\n\n\nb()\nc()\n';
    const out = applyEdits(text, [{ old_text: 'a()\nb()\nc()\n', new_text: 'a()\nb()\nd()\n' }]);
    expect(out.text).toBe('a()\n\n\nb()\nd()\n');
  });

  it('drops blank lines the model left out when it replaces both neighbours', () => {
    const text = 'x()\na()\n\nb()\ny()\n';
    const out = applyEdits(text, [{ old_text: 'a()\nb()\n', new_text: 'ab()\n' }]);
    expect(out.text).toBe('x()\nab()\ny()\n');
  });

  it('deletes whole lines at the end of a file without final newline', () => {
    const out = applyEdits('a\n  b\n  c', [{ old_text: 'b\nc\n', new_text: '' }]);
    expect(out.text).toBe('a');
  });

  it('handles a one-line edit in a large file by substring search', () => {
    const body = 'x = 1\n'.repeat(2_000_000);
    const text = `${body}target = 1\n${body}`;
    const out = applyEdits(text, [{ old_text: 'target = 1', new_text: 'target = 2' }]);
    expect(out.text.length).toBe(text.length);
    expect(out.edits[0]).toEqual({ stage: 'exact', replacements: 1, start_line: 2_000_001, end_line: 2_000_001 });
    expect(out.spans).toEqual([{ oldStart: body.length + 9, oldEnd: body.length + 10, newStart: body.length + 9, newEnd: body.length + 10 }]);
  });

  it('finds a tolerant match in a large file', () => {
    const body = Array.from({ length: 200_000 }, (_, i) => `\tv${i} = f(${i})`).join('\n') + '\n';
    const out = applyEdits(body, [{ old_text: '    v150000 = f(150000)\n', new_text: '    v150000 = g(150000)\n' }]);
    expect(out.edits[0]?.stage).toBe('indentation');
    expect(out.text).toBe(body.replace('\tv150000 = f(150000)\n', '\tv150000 = g(150000)\n'));
  });
});
