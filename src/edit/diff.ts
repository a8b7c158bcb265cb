// Unified-diff previews for writes and edits, bounded in time and output size (docs/api.md, "Tools").
//
// Conventions of the preview:
// - Lines are compared with their line endings, so a change from LF to CRLF is a change. In the preview the
//   `\r` of a `\r\n` ending is not shown: a CRLF line renders like an LF line (a lone `\r` elsewhere is kept).
//   An ending-only change therefore shows as `-x` / `+x`.
// - No change (or creating an empty file) gives an empty preview: no headers, no hunks.
// - Normal lines end with `\n`; a cut preview ends with the line `... (truncated)` without a newline. The whole
//   preview, marker included, stays within DIFF_MAX_LINES lines and DIFF_MAX_BYTES UTF-8 bytes.
// - `lines_added` / `lines_removed` count the whole change that the diff describes, however much is shown. When
//   the bounded diff gives up (see MAX_REGION_LINES, MAX_EDIT_LENGTH, DIFF_WORK_BUDGET), a region becomes one
//   whole-region replacement and the counts are those of that replacement.
import { Buffer } from 'node:buffer';
import { diffArrays } from 'diff';

export interface DiffPreview {
  diff_preview: string;
  diff_truncated: boolean;
  lines_added: number;
  lines_removed: number;
}

/** A changed region: character offsets [oldStart, oldEnd) in oldText replaced by [newStart, newEnd) in newText. Spans are sorted and non-overlapping. */
export interface ChangedSpan {
  oldStart: number;
  oldEnd: number;
  newStart: number;
  newEnd: number;
}

export const DIFF_MAX_LINES = 100;
export const DIFF_MAX_BYTES = 10 * 1024;

const CONTEXT_LINES = 3;
/** A region with more lines than this on either side is not handed to jsdiff. */
const MAX_REGION_LINES = 20_000;
/**
 * jsdiff's Myers costs about d²/2 steps plus (n+m)·d line comparisons for n and m lines and d added + removed
 * lines, counting only the lines found on both sides (see lineRuns). Both bounds cap d so that whether a region falls back depends on its content alone (a few tens of ms at
 * most); the timeout is only a backstop for a slow or busy machine.
 */
const MAX_EDIT_LENGTH = 1_000;
const DIFF_WORK_BUDGET = 15_000_000;
const DIFF_TIMEOUT_MS = 200;
const TRUNCATED_MARKER = '... (truncated)';
const NO_NEWLINE_MARKER = '\\ No newline at end of file';
const LF = 10;
const CR = 13;

/**
 * Lines [start, end) of `text` as character offsets; start and end sit on line boundaries.
 * `lines` is Infinity for the unchanged tail of a file: only its first lines are ever read, so it is not counted.
 */
interface LineSlice {
  text: string;
  start: number;
  end: number;
  lines: number;
}

/** Equal slices point into the old text (their content is the same in the new one). */
interface Op extends LineSlice {
  kind: 'equal' | 'delete' | 'insert';
}

interface Hunk {
  oldStart: number; // 0-based index of the first line
  oldLines: number;
  newStart: number;
  newLines: number;
  rows: { tag: ' ' | '-' | '+'; slice: LineSlice }[];
}

/** Full overwrite / create (oldText null = file did not exist). */
export function diffWhole(relPath: string, oldText: string | null, newText: string): DiffPreview {
  const oldName = oldText === null ? '/dev/null' : `a/${relPath}`;
  return render(oldName, `b/${relPath}`, wholeOps(oldText ?? '', newText));
}

/**
 * An edit: hunks built only from the changed spans (plus 3 context lines), so cost depends on the spans, not on the file size (except a cheap newline count to find line numbers).
 * `lineBase` is the number of lines before the texts when they are a window of whole lines of a larger file (at least 3 lines
 * around every span, or the file's own start and end), so hunk headers carry the file's line numbers.
 */
export function diffSpans(relPath: string, oldText: string, newText: string, spans: ChangedSpan[], lineBase = 0): DiffPreview {
  checkSpans(oldText, newText, spans);
  // Spans that cancel each other out (an insert undone by the next delete) change nothing.
  if (oldText.length === newText.length && oldText === newText) return { diff_preview: '', diff_truncated: false, lines_added: 0, lines_removed: 0 };
  const ops: Op[] = [];
  let pos = 0;
  for (const r of spanRegions(oldText, newText, spans)) {
    // One forward pass over the old text, gap by gap, gives every line number.
    if (r.oldLo > pos) ops.push({ kind: 'equal', text: oldText, start: pos, end: r.oldLo, lines: countNewlines(oldText, pos, r.oldLo) });
    for (const op of regionOps(oldText, r.oldLo, r.oldHi, newText, r.newLo, r.newHi)) ops.push(op);
    pos = r.oldHi;
  }
  if (pos < oldText.length) ops.push({ kind: 'equal', text: oldText, start: pos, end: oldText.length, lines: Infinity });
  return render(`a/${relPath}`, `b/${relPath}`, ops, lineBase);
}

/** Common prefix and suffix (whole lines) are trimmed by a char scan; only the middle is diffed. */
function wholeOps(oldText: string, newText: string): Op[] {
  if (oldText === newText) return [];
  const shorter = Math.min(oldText.length, newText.length);
  let p = 0;
  while (p < shorter && oldText.charCodeAt(p) === newText.charCodeAt(p)) p++;
  const prefix = p === 0 ? 0 : oldText.lastIndexOf('\n', p - 1) + 1;

  const maxSuffix = shorter - prefix;
  let s = 0;
  while (s < maxSuffix && oldText.charCodeAt(oldText.length - 1 - s) === newText.charCodeAt(newText.length - 1 - s)) s++;
  if (s > 0 && !(isLineStart(oldText, oldText.length - s) && isLineStart(newText, newText.length - s))) {
    // The suffix starts mid-line: keep only the lines after the first newline inside it (same in both texts).
    const nl = oldText.indexOf('\n', oldText.length - s);
    s = nl === -1 ? 0 : oldText.length - nl - 1;
  }

  const ops: Op[] = [];
  if (prefix > 0) ops.push({ kind: 'equal', text: oldText, start: 0, end: prefix, lines: countNewlines(oldText, 0, prefix) });
  for (const op of regionOps(oldText, prefix, oldText.length - s, newText, prefix, newText.length - s)) ops.push(op);
  if (s > 0) ops.push({ kind: 'equal', text: oldText, start: oldText.length - s, end: oldText.length, lines: Infinity });
  return ops;
}

function checkSpans(oldText: string, newText: string, spans: ChangedSpan[]): void {
  let oldPos = 0;
  let newPos = 0;
  for (const sp of spans) {
    const ok =
      sp.oldStart >= oldPos && sp.oldEnd >= sp.oldStart && sp.oldEnd <= oldText.length &&
      sp.newStart >= newPos && sp.newEnd >= sp.newStart && sp.newEnd <= newText.length &&
      sp.oldStart - oldPos === sp.newStart - newPos;
    if (!ok) throw new RangeError(`diffSpans: span ${JSON.stringify(sp)} is out of order or out of range`);
    oldPos = sp.oldEnd;
    newPos = sp.newEnd;
  }
  if (oldText.length - oldPos !== newText.length - newPos) throw new RangeError('diffSpans: texts differ in length outside the spans');
}

interface Region {
  oldLo: number;
  oldHi: number;
  newLo: number;
  newHi: number;
}

/** Each span widened to whole lines (boundaries in both texts); regions that overlap or touch are merged. */
function spanRegions(oldText: string, newText: string, spans: ChangedSpan[]): Region[] {
  const regions: Region[] = [];
  for (const sp of spans) {
    const lo = sp.oldStart === 0 ? 0 : oldText.lastIndexOf('\n', sp.oldStart - 1) + 1;
    let hi: number;
    if (isLineStart(oldText, sp.oldEnd) && isLineStart(newText, sp.newEnd)) {
      hi = sp.oldEnd;
    } else {
      // Text after the span is the same in both until the next span; if the line runs into it, they merge below.
      const nl = oldText.indexOf('\n', sp.oldEnd);
      hi = nl === -1 ? oldText.length : nl + 1;
    }
    const last = regions.at(-1);
    if (last !== undefined && lo <= last.oldHi) {
      last.oldHi = Math.max(last.oldHi, hi);
      last.newHi = sp.newEnd + (last.oldHi - sp.oldEnd);
    } else {
      regions.push({ oldLo: lo, oldHi: hi, newLo: sp.newStart - (sp.oldStart - lo), newHi: sp.newEnd + (hi - sp.oldEnd) });
    }
  }
  return regions;
}

/** Line diff of one line-aligned region, bounded; falls back to replacing the region whole. */
function regionOps(oldText: string, oldLo: number, oldHi: number, newText: string, newLo: number, newHi: number): Op[] {
  const oldCount = countLines(oldText, oldLo, oldHi);
  const newCount = countLines(newText, newLo, newHi);
  const replaceWhole = (): Op[] => {
    const ops: Op[] = [];
    if (oldCount > 0) ops.push({ kind: 'delete', text: oldText, start: oldLo, end: oldHi, lines: oldCount });
    if (newCount > 0) ops.push({ kind: 'insert', text: newText, start: newLo, end: newHi, lines: newCount });
    return ops;
  };
  if (oldCount === 0 || newCount === 0 || oldCount > MAX_REGION_LINES || newCount > MAX_REGION_LINES) return replaceWhole();

  const oldLines = splitLines(oldText, oldLo, oldHi);
  const newLines = splitLines(newText, newLo, newHi);
  const runs = lineRuns(oldLines, newLines);
  if (runs === undefined) return replaceWhole();

  const ops: Op[] = [];
  let o = oldLo;
  let n = newLo;
  let oi = 0;
  let ni = 0;
  for (const r of runs) {
    if (r.kind === 'insert') {
      const len = sumLengths(newLines, ni, ni + r.count);
      ops.push({ kind: 'insert', text: newText, start: n, end: n + len, lines: r.count });
      n += len;
      ni += r.count;
    } else {
      const len = sumLengths(oldLines, oi, oi + r.count);
      ops.push({ kind: r.kind, text: oldText, start: o, end: o + len, lines: r.count });
      o += len;
      oi += r.count;
      if (r.kind === 'equal') {
        n += len;
        ni += r.count;
      }
    }
  }
  return ops;
}

interface Run {
  kind: 'equal' | 'delete' | 'insert';
  count: number;
}

/**
 * A minimal line diff as runs, or undefined when it is over the bounds. A line found on one side only can be in no
 * common subsequence, so (as GNU diff does) Myers only sees the lines that both sides have: its cost grows with the
 * square of the differing lines it sees, and a rewrite that changes every line then costs a set lookup per line.
 */
function lineRuns(oldLines: string[], newLines: string[]): Run[] | undefined {
  const inOld = new Set(oldLines);
  const newKept: number[] = [];
  for (let j = 0; j < newLines.length; j++) if (inOld.has(newLines[j] as string)) newKept.push(j);
  // The old lines kept are those among the new ones kept: a rewrite that keeps no line builds no second set.
  const oldKept: number[] = [];
  if (newKept.length > 0) {
    const common = new Set(newKept.map((j) => newLines[j] as string));
    for (let i = 0; i < oldLines.length; i++) if (common.has(oldLines[i] as string)) oldKept.push(i);
  }

  // Index pairs of the common lines, in order.
  const pairs: Array<[number, number]> = [];
  if (oldKept.length > 0) {
    const keptOld = oldKept.map((i) => oldLines[i] as string);
    const keptNew = newKept.map((j) => newLines[j] as string);
    const changes = diffArrays(keptOld, keptNew, {
      maxEditLength: Math.min(MAX_EDIT_LENGTH, Math.floor(DIFF_WORK_BUDGET / (keptOld.length + keptNew.length))),
      timeout: DIFF_TIMEOUT_MS,
    });
    if (changes === undefined) return undefined;
    let fi = 0;
    let fj = 0;
    for (const c of changes) {
      if (c.added) fj += c.count;
      else if (c.removed) fi += c.count;
      else for (let k = 0; k < c.count; k++) pairs.push([oldKept[fi++] as number, newKept[fj++] as number]);
    }
  }

  const runs: Run[] = [];
  const push = (kind: Run['kind'], count: number): void => {
    if (count === 0) return;
    const last = runs.at(-1);
    if (last?.kind === kind) last.count += count;
    else runs.push({ kind, count });
  };
  let i = 0;
  let j = 0;
  for (const [a, b] of pairs) {
    push('delete', a - i);
    push('insert', b - j);
    push('equal', 1);
    i = a + 1;
    j = b + 1;
  }
  push('delete', oldLines.length - i);
  push('insert', newLines.length - j);
  return runs;
}

function sumLengths(lines: string[], from: number, to: number): number {
  let len = 0;
  for (let k = from; k < to; k++) len += (lines[k] as string).length;
  return len;
}

/** Hunks with CONTEXT_LINES of context; changes separated by at most 2·CONTEXT_LINES equal lines share a hunk. */
function* buildHunks(ops: Op[], lineBase: number): Generator<Hunk> {
  let oldLine = lineBase;
  let newLine = lineBase;
  let equals: Op[] = []; // equal ops since the last change
  let hunk: Hunk | null = null;
  let dels: LineSlice[] = [];
  let inss: LineSlice[] = [];
  // Removed lines are shown before added ones within a run of changes, whatever order jsdiff gave them in.
  const flushChanges = (h: Hunk): void => {
    for (const slice of dels) h.rows.push({ tag: '-', slice });
    for (const slice of inss) h.rows.push({ tag: '+', slice });
    dels = [];
    inss = [];
  };
  const addContext = (h: Hunk, slices: LineSlice[]): void => {
    flushChanges(h);
    for (const slice of slices) {
      h.rows.push({ tag: ' ', slice });
      h.oldLines += slice.lines;
      h.newLines += slice.lines;
    }
  };

  for (const op of ops) {
    if (op.kind === 'equal') {
      equals.push(op);
      continue;
    }
    if (equals.length > 0 || hunk === null) {
      let gap = 0;
      for (const e of equals) gap += e.lines;
      if (hunk !== null && gap <= 2 * CONTEXT_LINES) {
        addContext(hunk, equals);
      } else {
        if (hunk !== null) {
          addContext(hunk, headLines(equals, CONTEXT_LINES));
          yield hunk;
        }
        const lead = tailLines(equals, CONTEXT_LINES);
        let leadCount = 0;
        for (const l of lead) leadCount += l.lines;
        hunk = { oldStart: oldLine + gap - leadCount, oldLines: 0, newStart: newLine + gap - leadCount, newLines: 0, rows: [] };
        addContext(hunk, lead);
      }
      oldLine += gap;
      newLine += gap;
      equals = [];
    }
    if (op.kind === 'delete') {
      dels.push(op);
      hunk.oldLines += op.lines;
      oldLine += op.lines;
    } else {
      inss.push(op);
      hunk.newLines += op.lines;
      newLine += op.lines;
    }
  }
  if (hunk !== null) {
    addContext(hunk, headLines(equals, CONTEXT_LINES));
    yield hunk;
  }
}

/** The first k lines of consecutive equal slices. */
function headLines(slices: LineSlice[], k: number): LineSlice[] {
  const out: LineSlice[] = [];
  for (const s of slices) {
    if (k === 0) break;
    let pos = s.start;
    let n = 0;
    while (n < k && pos < s.end) {
      const nl = s.text.indexOf('\n', pos);
      pos = nl === -1 || nl >= s.end ? s.end : nl + 1;
      n++;
    }
    if (n > 0) out.push({ text: s.text, start: s.start, end: pos, lines: n });
    k -= n;
  }
  return out;
}

/** The last k lines of consecutive equal slices. */
function tailLines(slices: LineSlice[], k: number): LineSlice[] {
  const out: LineSlice[] = [];
  for (let i = slices.length - 1; i >= 0 && k > 0; i--) {
    const s = slices[i]!;
    let pos = s.end;
    let n = 0;
    while (n < k && pos > s.start) {
      // s.end is a line boundary, so the newline ending the previous line is before pos - 1.
      pos = pos >= 2 ? Math.max(s.start, s.text.lastIndexOf('\n', pos - 2) + 1) : 0;
      n++;
    }
    if (n > 0) out.unshift({ text: s.text, start: pos, end: s.end, lines: n });
    k -= n;
  }
  return out;
}

function render(oldName: string, newName: string, ops: Op[], lineBase = 0): DiffPreview {
  let added = 0;
  let removed = 0;
  for (const op of ops) {
    if (op.kind === 'insert') added += op.lines;
    else if (op.kind === 'delete') removed += op.lines;
  }
  if (added === 0 && removed === 0) return { diff_preview: '', diff_truncated: false, lines_added: 0, lines_removed: 0 };

  const out = new PreviewWriter();
  if (out.line(`--- ${oldName}`) && out.line(`+++ ${newName}`)) {
    for (const h of buildHunks(ops, lineBase)) {
      if (!renderHunk(out, h)) break;
    }
  }
  const { text, truncated } = out.finish();
  return { diff_preview: text, diff_truncated: truncated, lines_added: added, lines_removed: removed };
}

function renderHunk(out: PreviewWriter, h: Hunk): boolean {
  // An empty range is named by the line before it, as GNU diff does (`-0,0` for an empty old file).
  const oldStart = h.oldLines > 0 ? h.oldStart + 1 : h.oldStart;
  const newStart = h.newLines > 0 ? h.newStart + 1 : h.newStart;
  if (!out.line(`@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`)) return false;
  for (const { tag, slice } of h.rows) {
    const { text, end } = slice;
    let pos = slice.start;
    while (pos < end) {
      const nl = text.indexOf('\n', pos);
      const hasNewline = nl !== -1 && nl < end;
      const lineEnd = hasNewline ? nl : end;
      const contentEnd = hasNewline && lineEnd > pos && text.charCodeAt(lineEnd - 1) === CR ? lineEnd - 1 : lineEnd;
      if (!out.content(tag, text, pos, contentEnd)) return false;
      if (!hasNewline && !out.line(NO_NEWLINE_MARKER)) return false;
      pos = hasNewline ? nl + 1 : end;
    }
  }
  return true;
}

/** Collects preview lines until the line or byte cap; never slices more of a long line than could be shown. */
class PreviewWriter {
  private readonly parts: string[] = [];
  private readonly sizes: number[] = [];
  private bytes = 0;
  private truncated = false;

  /** Appends a whole line (a newline is added); false once the preview is full. */
  line(s: string): boolean {
    return this.content('', s, 0, s.length);
  }

  /** Appends tag + text[from, to) as one line; a line too long for the remaining bytes is cut and ends the preview. */
  content(tag: string, text: string, from: number, to: number): boolean {
    if (this.truncated) return false;
    const room = DIFF_MAX_BYTES - this.bytes - 1; // bytes left for the line itself, before its newline
    if (this.parts.length >= DIFF_MAX_LINES || room < tag.length) {
      this.truncated = true;
      return false;
    }
    // Every UTF-16 unit is at least one UTF-8 byte, so room + 1 units are enough to learn the line does not fit.
    const cut = Math.min(to, from + room - tag.length + 1);
    const s = tag + text.slice(from, cut);
    const size = Buffer.byteLength(s, 'utf8');
    if (cut === to && size <= room) {
      this.push(`${s}\n`, size + 1);
      return true;
    }
    this.truncated = true;
    // Keep the part of the long line that still leaves room for the marker.
    const partialRoom = room - TRUNCATED_MARKER.length;
    if (this.parts.length + 2 <= DIFF_MAX_LINES && partialRoom > tag.length) {
      const part = utf8Prefix(s, partialRoom);
      this.push(`${part}\n`, Buffer.byteLength(part, 'utf8') + 1);
    }
    return false;
  }

  finish(): { text: string; truncated: boolean } {
    if (this.truncated) {
      const markerSize = Buffer.byteLength(TRUNCATED_MARKER, 'utf8');
      while (this.parts.length > 0 && (this.parts.length + 1 > DIFF_MAX_LINES || this.bytes + markerSize > DIFF_MAX_BYTES)) {
        this.parts.pop();
        this.bytes -= this.sizes.pop() ?? 0;
      }
      this.parts.push(TRUNCATED_MARKER);
    }
    return { text: this.parts.join(''), truncated: this.truncated };
  }

  private push(s: string, size: number): void {
    this.parts.push(s);
    this.sizes.push(size);
    this.bytes += size;
  }
}

/** The longest prefix of s that fits in maxBytes of UTF-8, never splitting a surrogate pair. */
function utf8Prefix(s: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    let units = 1;
    let size: number;
    if (c < 0x80) size = 1;
    else if (c < 0x800) size = 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      size = 4;
      units = 2;
    } else size = 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += units;
  }
  return s.slice(0, i);
}

function isLineStart(text: string, pos: number): boolean {
  return pos === 0 || text.charCodeAt(pos - 1) === LF;
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Lines in a line-aligned range: its newlines, plus a last line without one. */
function countLines(text: string, from: number, to: number): number {
  if (to <= from) return 0;
  return countNewlines(text, from, to) + (text.charCodeAt(to - 1) === LF ? 0 : 1);
}

/** Lines of a line-aligned range, each with its ending (so endings take part in the comparison). */
function splitLines(text: string, from: number, to: number): string[] {
  const lines: string[] = [];
  let pos = from;
  while (pos < to) {
    const nl = text.indexOf('\n', pos);
    const end = nl === -1 || nl >= to ? to : nl + 1;
    lines.push(text.slice(pos, end));
    pos = end;
  }
  return lines;
}
