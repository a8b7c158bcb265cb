import { Buffer } from 'node:buffer';
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { applyPatch, diffLines } from 'diff';
import { DIFF_MAX_BYTES, DIFF_MAX_LINES, diffSpans, diffWhole, type ChangedSpan, type DiffPreview } from '../../src/edit/diff.js';

const lines = (n: number, f: (i: number) => string): string => Array.from({ length: n }, (_, i) => `${f(i)}\n`).join('');

/** The counts jsdiff gives for a full, minimal line diff. */
function minimalCounts(oldText: string, newText: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const c of diffLines(oldText, newText)) {
    if (c.added) added += c.count;
    else if (c.removed) removed += c.count;
  }
  return { added, removed };
}

function expectWithinCaps(p: DiffPreview): void {
  expect(Buffer.byteLength(p.diff_preview, 'utf8')).toBeLessThanOrEqual(DIFF_MAX_BYTES);
  expect(p.diff_preview.split('\n').length).toBeLessThanOrEqual(DIFF_MAX_LINES);
}

function expectTruncated(p: DiffPreview): void {
  expect(p.diff_truncated).toBe(true);
  expect(p.diff_preview.endsWith('\n... (truncated)')).toBe(true);
  expectWithinCaps(p);
}

/** Applies one replacement and returns the new text with its span. */
function replaceAt(text: string, start: number, end: number, insert: string): { text: string; span: ChangedSpan } {
  return {
    text: text.slice(0, start) + insert + text.slice(end),
    span: { oldStart: start, oldEnd: end, newStart: start, newEnd: start + insert.length },
  };
}

/** For any two texts: the diff's counts are those of a full minimal diff, and the preview applies back. */
function expectMinimalRoundTrips(text: fc.Arbitrary<string>): void {
  fc.assert(
    fc.property(text, text, (oldText, newText) => {
      const p = diffWhole('p.txt', oldText, newText);
      const full = minimalCounts(oldText, newText);
      expect([p.lines_added, p.lines_removed]).toEqual([full.added, full.removed]);
      if (oldText !== newText) expect(applyPatch(oldText, p.diff_preview)).toBe(newText);
    }),
    { numRuns: 500 },
  );
}

describe('diffWhole', () => {
  it('shows a create against /dev/null', () => {
    const p = diffWhole('src/a.txt', null, 'one\ntwo\n');
    expect(p).toEqual({
      diff_preview: '--- /dev/null\n+++ b/src/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n',
      diff_truncated: false,
      lines_added: 2,
      lines_removed: 0,
    });
  });

  it('gives an empty preview for no change and for creating an empty file', () => {
    expect(diffWhole('a.txt', 'same\n', 'same\n')).toEqual({ diff_preview: '', diff_truncated: false, lines_added: 0, lines_removed: 0 });
    expect(diffWhole('a.txt', null, '')).toEqual({ diff_preview: '', diff_truncated: false, lines_added: 0, lines_removed: 0 });
  });

  it('shows an update with three lines of context', () => {
    const oldText = lines(10, (i) => `l${i + 1}`);
    const newText = oldText.replace('l5\n', 'L5\n');
    const p = diffWhole('a.txt', oldText, newText);
    expect(p.diff_preview).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n');
    expect([p.lines_added, p.lines_removed]).toEqual([1, 1]);
  });

  it('keeps far-apart changes in separate hunks and close ones in one', () => {
    const oldText = lines(40, (i) => `l${i + 1}`);
    const newText = oldText.replace('l5\n', 'L5\n').replace('l12\n', 'L12\n').replace('l30\n', '');
    const p = diffWhole('a.txt', oldText, newText);
    const headers = p.diff_preview.split('\n').filter((l) => l.startsWith('@@'));
    expect(headers).toEqual(['@@ -2,14 +2,14 @@', '@@ -27,7 +27,6 @@']);
    expect(applyPatch(oldText, p.diff_preview)).toBe(newText);
  });

  it('shows deleting all content as a hunk to +0,0', () => {
    const p = diffWhole('a.txt', 'a\nb\n', '');
    expect(p.diff_preview).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +0,0 @@\n-a\n-b\n');
    expect([p.lines_added, p.lines_removed]).toEqual([0, 2]);
  });

  it('marks a missing newline at end of file', () => {
    expect(diffWhole('a.txt', 'a\nb', 'a\nc').diff_preview).toBe(
      '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n',
    );
    // Adding the final newline changes the last line.
    const p = diffWhole('a.txt', 'a\nb', 'a\nb\n');
    expect(p.diff_preview).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n');
    expect([p.lines_added, p.lines_removed]).toEqual([1, 1]);
    // An unchanged last line without newline shows the marker once, after the context line.
    expect(diffWhole('a.txt', 'a\nb\nc', 'A\nb\nc').diff_preview).toBe(
      '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n',
    );
  });

  it('shows CRLF lines without their \\r and counts each as one line', () => {
    const p = diffWhole('w.txt', 'x\r\ny\r\nz\r\n', 'x\r\nY\r\nz\r\n');
    expect(p.diff_preview).toBe('--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n');
    expect([p.lines_added, p.lines_removed]).toEqual([1, 1]);
  });

  it('counts a line-ending-only change as a change', () => {
    const p = diffWhole('w.txt', 'a\nb\nc\n', 'a\r\nb\nc\n');
    expect([p.lines_added, p.lines_removed]).toEqual([1, 1]);
    expect(p.diff_preview).toContain('-a\n+a\n');
    expect(p.diff_preview).not.toContain('\r');
  });

  it('handles unicode (astral characters, CJK) in lines', () => {
    const oldText = 'héllo\n日本語\n😀 smile\nend\n';
    const newText = 'héllo\n日本語です\n😀 smile\nend\n';
    const p = diffWhole('u.txt', oldText, newText);
    expect(p.diff_preview).toContain('-日本語\n+日本語です\n');
    expect(applyPatch(oldText, p.diff_preview)).toBe(newText);
  });

  it('cuts the preview at DIFF_MAX_LINES lines with exact counts', () => {
    const oldText = lines(500, (i) => `old ${i}`);
    const newText = lines(450, (i) => `new ${i}`);
    const p = diffWhole('a.txt', oldText, newText);
    expectTruncated(p);
    expect(p.diff_preview.split('\n')).toHaveLength(DIFF_MAX_LINES);
    expect([p.lines_added, p.lines_removed]).toEqual([450, 500]);
  });

  it('cuts the preview at DIFF_MAX_BYTES bytes, on a character boundary', () => {
    const oldText = lines(40, (i) => `${i} ${'é😀'.repeat(100)}`);
    const newText = lines(40, (i) => `${i} ${'ü😀'.repeat(100)}`);
    const p = diffWhole('u.txt', oldText, newText);
    expectTruncated(p);
    expect(p.diff_preview.split('\n').length).toBeLessThan(DIFF_MAX_LINES);
    expect(Buffer.from(p.diff_preview, 'utf8').toString('utf8')).toBe(p.diff_preview); // no lone surrogate
    expect([p.lines_added, p.lines_removed]).toEqual([40, 40]);
  });

  it('shows the start of a single line longer than the byte cap', () => {
    const oldText = 'a'.repeat(200_000);
    const newText = 'b'.repeat(200_000);
    const p = diffWhole('min.js', oldText, newText);
    expectTruncated(p);
    expect(p.diff_preview).toMatch(/^--- a\/min\.js\n\+\+\+ b\/min\.js\n@@ -1,1 \+1,1 @@\n-a{9000,}\n\.\.\. \(truncated\)$/);
    expect([p.lines_added, p.lines_removed]).toEqual([1, 1]);
  });

  it('fits a diff of exactly DIFF_MAX_LINES lines without truncating', () => {
    // 2 headers + 1 hunk header + 97 added lines = 100 lines.
    const p = diffWhole('a.txt', null, lines(97, (i) => `${i}`));
    expect(p.diff_truncated).toBe(false);
    expect(p.diff_preview.split('\n')).toHaveLength(DIFF_MAX_LINES + 1); // trailing newline
  });

  it('has exact counts when the preview is cut (agrees with a full minimal diff)', () => {
    const oldText = lines(2000, (i) => `line ${i}`);
    const newText = lines(2000, (i) => (i % 10 === 3 ? `LINE ${i}` : i % 25 === 0 ? `line ${i}\nextra ${i}` : `line ${i}`));
    const p = diffWhole('a.txt', oldText, newText);
    expectTruncated(p);
    const full = minimalCounts(oldText, newText);
    expect([p.lines_added, p.lines_removed]).toEqual([full.added, full.removed]);
  });

  it('falls back to one whole-middle hunk for a 5 MiB file with every line changed', () => {
    const n = 100_000;
    const oldText = `same head\n${lines(n, (i) => `old line ${i} `.padEnd(52, 'o'))}same tail\n`;
    const newText = `same head\n${lines(n, (i) => `new line ${i} `.padEnd(52, 'n'))}same tail\n`;
    expect(oldText.length).toBeGreaterThan(5 * 1024 * 1024);
    const p = diffWhole('big.txt', oldText, newText);
    expectTruncated(p);
    expect([p.lines_added, p.lines_removed]).toEqual([n, n]);
    expect(p.diff_preview).toContain(`@@ -1,${n + 2} +1,${n + 2} @@\n same head\n-old line 0 `);
  });

  it('falls back to a whole-middle replacement when the edit is too long to diff', () => {
    // Neighbours swapped: every line is on both sides, and a minimal diff has 2000 + 2000 edits, over the
    // bound, so the middle (first to last changed line) is replaced whole and counted as such.
    const oldText = lines(4000, (i) => `line ${i}`);
    const newText = lines(4000, (i) => `line ${i % 2 === 0 ? i + 1 : i - 1}`);
    const p = diffWhole('a.txt', oldText, newText);
    expectTruncated(p);
    expect([p.lines_added, p.lines_removed]).toEqual([4000, 4000]);
    expect(p.diff_preview).toContain('@@ -1,4000 +1,4000 @@\n-line 0\n-line 1\n-line 2\n');
  });

  it('diffs exactly when the changed lines are on one side only, however many there are', () => {
    // Every other line changed: 2000 + 2000 edits, but the changed lines are unique to their side, so the
    // diff only has to align the 2000 lines both sides share.
    const oldText = lines(4000, (i) => `line ${i}`);
    const newText = lines(4000, (i) => (i % 2 === 0 ? `LINE ${i}` : `line ${i}`));
    const p = diffWhole('a.txt', oldText, newText);
    expectTruncated(p);
    expect([p.lines_added, p.lines_removed]).toEqual([2000, 2000]);
    expect(p.diff_preview).toContain('@@ -1,4000 +1,4000 @@\n-line 0\n+LINE 0\n line 1\n-line 2\n+LINE 2\n');
  });

  it('matches minimal counts when most lines are on one side only (property)', () => {
    const text = fc
      .array(fc.integer({ min: 0, max: 40 }).map((n) => `l${n}`), { maxLength: 30 })
      .map((ls) => (ls.length === 0 ? '' : `${ls.join('\n')}\n`));
    expectMinimalRoundTrips(text);
  });

  it('round-trips through applyPatch and matches minimal counts (property)', () => {
    const text = fc
      .tuple(fc.array(fc.constantFrom('a', 'b', 'c', 'dd', ''), { maxLength: 12 }), fc.boolean())
      .map(([ls, eol]) => (ls.length === 0 ? '' : ls.join('\n') + (eol ? '\n' : '')));
    expectMinimalRoundTrips(text);
  });

  it('counts mixed CRLF / LF texts exactly and never shows a CRLF (property)', () => {
    // A lone \r ending the file is content, not a line ending, and stays visible: keep it out of this property.
    const text = fc
      .array(fc.constantFrom('a', 'a\r', 'b\r', ''), { maxLength: 10 })
      .map((ls) => ls.join('\n'))
      .map((s) => (s.endsWith('\r') ? `${s}\n` : s));
    fc.assert(
      fc.property(text, text, (oldText, newText) => {
        const p = diffWhole('p.txt', oldText, newText);
        const full = minimalCounts(oldText, newText);
        expect([p.lines_added, p.lines_removed]).toEqual([full.added, full.removed]);
        expect(p.diff_preview).not.toContain('\r\n');
      }),
      { numRuns: 500 },
    );
  });
});

describe('diffSpans', () => {
  const file = lines(20, (i) => `line ${i + 1}`);

  it('builds a hunk from one span', () => {
    const at = file.indexOf('line 10');
    const { text, span } = replaceAt(file, at, at + 4, 'LINE');
    const p = diffSpans('a.txt', file, text, [span]);
    expect(p.diff_preview).toBe(
      '--- a/a.txt\n+++ b/a.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+LINE 10\n line 11\n line 12\n line 13\n',
    );
    expect([p.lines_added, p.lines_removed]).toEqual([1, 1]);
  });

  it('handles a span at the start of the file', () => {
    const { text, span } = replaceAt(file, 0, 0, 'new first\n');
    const p = diffSpans('a.txt', file, text, [span]);
    expect(p.diff_preview).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n+new first\n line 1\n line 2\n line 3\n');
    expect([p.lines_added, p.lines_removed]).toEqual([1, 0]);
  });

  it('handles a span at the end of a file without a final newline', () => {
    const oldText = 'a\nb\nc\nd\ne';
    const { text, span } = replaceAt(oldText, oldText.length - 1, oldText.length, 'E\nf');
    const p = diffSpans('a.txt', oldText, text, [span]);
    expect(p.diff_preview).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -2,4 +2,5 @@\n b\n c\n d\n-e\n\\ No newline at end of file\n+E\n+f\n\\ No newline at end of file\n');
    expect([p.lines_added, p.lines_removed]).toEqual([2, 1]);
    expect(applyPatch(oldText, p.diff_preview)).toBe(text);
  });

  it('diffs inside the span region for minimal lines', () => {
    // One span covering three lines of which only the middle one really changes.
    const at = file.indexOf('line 4');
    const end = file.indexOf('line 7');
    const { text, span } = replaceAt(file, at, end, 'line 4\nLINE 5\nline 6\n');
    const p = diffSpans('a.txt', file, text, [span]);
    expect([p.lines_added, p.lines_removed]).toEqual([1, 1]);
    expect(p.diff_preview).toContain('@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+LINE 5\n line 6\n line 7\n line 8\n');
  });

  it('makes one hunk per distant span and merges spans whose context touches', () => {
    const big = lines(60, (i) => `line ${i + 1}`);
    const edits: [string, string][] = [
      ['line 5\n', 'LINE 5\n'],
      ['line 11\n', 'LINE 11\n'], // 5 lines from line 5's change: contexts touch, one hunk
      ['line 40\n', ''], // far away: its own hunk
    ];
    let text = big;
    const spans: ChangedSpan[] = [];
    let shift = 0;
    for (const [from, to] of edits) {
      const at = big.indexOf(from);
      text = text.slice(0, at + shift) + to + text.slice(at + shift + from.length);
      spans.push({ oldStart: at, oldEnd: at + from.length, newStart: at + shift, newEnd: at + shift + to.length });
      shift += to.length - from.length;
    }
    const p = diffSpans('a.txt', big, text, spans);
    const headers = p.diff_preview.split('\n').filter((l) => l.startsWith('@@'));
    expect(headers).toEqual(['@@ -2,13 +2,13 @@', '@@ -37,7 +37,6 @@']);
    expect([p.lines_added, p.lines_removed]).toEqual([2, 3]);
    expect(applyPatch(big, p.diff_preview)).toBe(text);
  });

  it('merges adjacent spans on the same line into one change', () => {
    const at = file.indexOf('line 8');
    // "line 8" -> "LINE 8!" as two touching spans: "line" -> "LINE" and " 8" -> " 8!".
    const text = file.slice(0, at) + 'LINE 8!' + file.slice(at + 6);
    const spans: ChangedSpan[] = [
      { oldStart: at, oldEnd: at + 4, newStart: at, newEnd: at + 4 },
      { oldStart: at + 4, oldEnd: at + 6, newStart: at + 4, newEnd: at + 7 },
    ];
    const p = diffSpans('a.txt', file, text, spans);
    expect(p.diff_preview).toContain('@@ -5,7 +5,7 @@\n line 5\n line 6\n line 7\n-line 8\n+LINE 8!\n line 9\n');
    expect([p.lines_added, p.lines_removed]).toEqual([1, 1]);
  });

  it('handles a span that joins two lines', () => {
    const at = file.indexOf('\nline 3');
    const { text, span } = replaceAt(file, at, at + 1, ' ');
    const p = diffSpans('a.txt', file, text, [span]);
    expect(p.diff_preview).toContain('-line 2\n-line 3\n+line 2 line 3\n');
    expect([p.lines_added, p.lines_removed]).toEqual([1, 2]);
  });

  it('keeps CRLF endings out of the preview', () => {
    const oldText = 'a\r\nb\r\nc\r\n';
    const { text, span } = replaceAt(oldText, 3, 4, 'B');
    const p = diffSpans('w.txt', oldText, text, [span]);
    expect(p.diff_preview).toBe('--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n');
  });

  it('gives an empty preview for no spans or a no-op span', () => {
    expect(diffSpans('a.txt', file, file, []).diff_preview).toBe('');
    const p = diffSpans('a.txt', file, file, [{ oldStart: 10, oldEnd: 14, newStart: 10, newEnd: 14 }]);
    expect(p).toEqual({ diff_preview: '', diff_truncated: false, lines_added: 0, lines_removed: 0 });
  });

  it('rejects spans that are out of order or inconsistent with the texts', () => {
    expect(() =>
      diffSpans('a.txt', file, file, [
        { oldStart: 10, oldEnd: 12, newStart: 10, newEnd: 12 },
        { oldStart: 5, oldEnd: 6, newStart: 5, newEnd: 6 },
      ]),
    ).toThrow(RangeError);
    expect(() => diffSpans('a.txt', file, `${file}x`, [{ oldStart: 0, oldEnd: 1, newStart: 0, newEnd: 1 }])).toThrow(RangeError);
  });

  it('has exact counts when a span replaces many lines and the preview is cut', () => {
    const oldText = lines(1000, (i) => `line ${i}`);
    const at = oldText.indexOf('line 100\n');
    const end = oldText.indexOf('line 700\n');
    const { text, span } = replaceAt(oldText, at, end, lines(50, (i) => `new ${i}`));
    const p = diffSpans('a.txt', oldText, text, [span]);
    expectTruncated(p);
    expect([p.lines_added, p.lines_removed]).toEqual([50, 600]);
  });

  it('finds the right line numbers for a one-line change in a 50 MiB string', () => {
    const oldText = `${'a'.repeat(49)}\n`.repeat(1024 * 1024);
    const at = 700_000 * 50 + 10; // inside line 700001
    const { text, span } = replaceAt(oldText, at, at + 1, 'B');
    const p = diffSpans('huge.txt', oldText, text, [span]);
    const row = 'a'.repeat(49);
    const changed = `${'a'.repeat(10)}B${'a'.repeat(38)}`;
    expect(p.diff_preview).toBe(
      `--- a/huge.txt\n+++ b/huge.txt\n@@ -699998,7 +699998,7 @@\n ${row}\n ${row}\n ${row}\n-${row}\n+${changed}\n ${row}\n ${row}\n ${row}\n`,
    );
    expect([p.lines_added, p.lines_removed]).toEqual([1, 1]);
  });

  it('round-trips through applyPatch for random edits (property)', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'c', ''), { maxLength: 15 }).map((ls) => ls.join('\n'));
    const edit = fc.record({ gap: fc.nat(6), del: fc.nat(5), ins: fc.constantFrom('', 'x', '\n', 'y\n', '\nz', 'a\nb\n') });
    fc.assert(
      fc.property(text, fc.array(edit, { maxLength: 4 }), (oldText, edits) => {
        let newText = '';
        let pos = 0;
        const spans: ChangedSpan[] = [];
        for (const e of edits) {
          const start = Math.min(oldText.length, pos + e.gap);
          const end = Math.min(oldText.length, start + e.del);
          newText += oldText.slice(pos, start);
          spans.push({ oldStart: start, oldEnd: end, newStart: newText.length, newEnd: newText.length + e.ins.length });
          newText += e.ins;
          pos = end;
        }
        newText += oldText.slice(pos);
        const p = diffSpans('p.txt', oldText, newText, spans);
        const rows = p.diff_preview.split('\n').slice(2);
        expect(p.lines_added).toBe(rows.filter((l) => l.startsWith('+')).length);
        expect(p.lines_removed).toBe(rows.filter((l) => l.startsWith('-')).length);
        if (oldText === newText) expect(p.diff_preview).toBe('');
        else expect(applyPatch(oldText, p.diff_preview)).toBe(newText);
      }),
      { numRuns: Number(process.env.DIFF_PROPERTY_RUNS ?? 1000) },
    );
  });
});
