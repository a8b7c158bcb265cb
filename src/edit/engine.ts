// The pure core of edit_file: find what the model meant (exact first, then tolerant stages that must be
// unique), apply it the file's way, and report where it landed. No I/O; the tool wraps it.
//
// Cascade (the first stage with any match decides; several candidates there = MULTIPLE_MATCHES):
//   exact              substring, byte for byte (partial lines allowed)
//   line_endings       substring after CRLF -> LF on both sides (partial lines allowed)
//   trailing_whitespace  whole lines, trailing blanks ignored
//   indentation        whole lines, one uniform indentation offset (tabs or spaces; tab widths 4, 8, 2)
//   unicode            whole lines, NFC and plain-ASCII quotes, dashes, spaces, ellipsis
// then the three line levels again with blank lines that only one side has ignored (reported under
// the level that matched). The tolerant levels anchor on line boundaries: old_text's first and last
// lines are whole lines of the file there.
import { ToolError } from '../errors.js';
import { E } from '../errors.js';
import type { ChangedSpan } from './diff.js';
import { diagnoseNoMatch } from './closest.js';
import { LineTableCache, findMatches, type Candidate, type MatchStage } from './match.js';
import { blockReplacement, rangeReplacement, type Replacement } from './replace.js';
import { lastLineOffset, lineNumbersAt, splitModelLines } from './text.js';

export type { MatchStage } from './match.js';

export interface EditRequest {
  old_text: string;
  new_text: string;
  replace_all?: boolean;
}

export interface EditOutcome {
  /** The new full text. */
  text: string;
  /** Sorted, non-overlapping; old offsets in the original text, new offsets in `text`. */
  spans: ChangedSpan[];
  /** Per request: how it matched and where it landed (1-based lines of the new text). */
  edits: Array<{ stage: MatchStage; replacements: number; start_line: number; end_line: number }>;
  /** The edited regions ±4 lines of the new text as `lineNo: line`, regions separated by `...`. */
  snippet: string;
}

/** Candidates named in MULTIPLE_MATCHES (the count is complete unless details.matches_incomplete). */
const LISTED_MATCHES = 100;
const LISTED_IN_MESSAGE = 10;
const SNIPPET_CONTEXT = 4;
const SNIPPET_MAX_LINES = 200;
const SNIPPET_MAX_LINE_CHARS = 500;

interface Span extends ChangedSpan {
  /** Indices of the requests whose changes make up this span. */
  edits: number[];
}

interface EditRecord {
  stage: MatchStage;
  /** Where each replacement's text sits in the current text. */
  ranges: Array<{ start: number; end: number }>;
}

export interface ApplyOptions {
  /**
   * Lines before `text` when it is a window of whole lines cut from a larger file (bytes.ts): line
   * numbers in `edits` and in the snippet are the file's.
   */
  lineBase?: number;
}

const BOM = '\uFEFF';
const stripBom = (s: string) => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s);

export function applyEdits(text: string, edits: EditRequest[], opts: ApplyOptions = {}): EditOutcome {
  checkRequests(edits);
  const several = edits.length > 1;
  // A BOM is the file's, not the text's: matching and line numbers work on the body after it.
  const bom = text.startsWith(BOM) ? BOM : '';
  const original = bom ? text.slice(1) : text;
  let current = original;
  let spans: Span[] = [];
  const records: EditRecord[] = [];
  const tables = new LineTableCache();

  edits.forEach((req, i) => {
    const oldText = stripBom(req.old_text);
    const newText = stripBom(req.new_text);
    const all = req.replace_all === true;
    const found = findMatches(current, oldText, { all, limit: LISTED_MATCHES }, tables);
    if (found === null) throw noMatchError(i, several, oldText, original, spans);
    if (!all && found.total > 1) throw multipleMatchesError(i, several, found.candidates, found.total, found.stage, original, spans, found.incomplete === true);

    const oldModel = splitModelLines(oldText);
    const reps = found.candidates.map((c: Candidate): Replacement =>
      c.kind === 'range' ? rangeReplacement(current, c, newText) : blockReplacement(tables.get(current), c, oldModel, newText),
    );
    // A match inside text an earlier edit wrote is fine: edits apply in sequence, each on the result of the
    // ones before (MultiEdit semantics); mergeSpans folds the change into the earlier span.
    const changes = reps.map((r) => trimmedChange(current, r)).filter((c) => c.end > c.start || c.newLength > 0);
    spans = mergeSpans(spans, changes, i);
    records.push(recordEdit(records, reps, found.stage));
    current = replaced(current, reps);
  });

  if (spans.length === 0 || current === original) {
    throw E.editNoChange(several);
  }
  return outcome(bom, current, spans, records, opts.lineBase ?? 0);
}

/** Refuses a call without edits, or with an edit whose texts are not strings or whose old_text is empty. */
function checkRequests(edits: EditRequest[]): void {
  if (!Array.isArray(edits) || edits.length === 0) {
    throw E.noEditGiven();
  }
  const several = edits.length > 1;
  const label = (i: number) => (several ? `Edit ${i + 1}: ` : '');
  edits.forEach((e, i) => {
    if (typeof e?.old_text !== 'string' || typeof e.new_text !== 'string') {
      throw E.editTextsNotStrings(label(i), i);
    }
    if (stripBom(e.old_text) === '') {
      throw E.editOldTextEmpty(label(i), i);
    }
  });
}

/** `current` with each replacement's range (sorted, non-overlapping) replaced by its text. */
function replaced(current: string, reps: Replacement[]): string {
  const parts: string[] = [];
  let pos = 0;
  for (const r of reps) {
    parts.push(current.slice(pos, r.start), r.text);
    pos = r.end;
  }
  parts.push(current.slice(pos));
  return parts.join('');
}

/** The record of an edit about to be made: where its texts will sit; earlier records' ranges move with it. */
function recordEdit(records: EditRecord[], reps: Replacement[], stage: MatchStage): EditRecord {
  const map = positionMapper(reps);
  for (const rec of records) rec.ranges = rec.ranges.map((r) => ({ start: map(r.start, 'start'), end: map(r.end, 'end') }));
  let shift = 0;
  const ranges = reps.map((r) => {
    const start = r.start + shift;
    shift += r.text.length - (r.end - r.start);
    return { start, end: start + r.text.length };
  });
  return { stage, ranges };
}

/** The outcome in the file's terms: offsets past the BOM, line numbers past `lineBase`, and the snippet. */
function outcome(bom: string, current: string, spans: Span[], records: EditRecord[], lineBase: number): EditOutcome {
  const offsets = records.flatMap((r) => {
    const first = r.ranges[0] as { start: number; end: number };
    const last = r.ranges[r.ranges.length - 1] as { start: number; end: number };
    return [first.start, lastLineOffset(last.start, last.end)];
  });
  const lines = lineNumbersAt(current, offsets);
  const shiftBom = bom.length;
  return {
    text: bom + current,
    spans: spans.map((s) => ({
      oldStart: s.oldStart + shiftBom,
      oldEnd: s.oldEnd + shiftBom,
      newStart: s.newStart + shiftBom,
      newEnd: s.newEnd + shiftBom,
    })),
    edits: records.map((r, i) => ({
      stage: r.stage,
      replacements: r.ranges.length,
      start_line: lineBase + (lines[2 * i] as number),
      end_line: lineBase + (lines[2 * i + 1] as number),
    })),
    snippet: buildSnippet(current, records.flatMap((r) => r.ranges), lineBase),
  };
}

/** Whether [s, e) and [xs, xe) share a character, or one is an empty range strictly inside the other. */
function intersects(s: number, e: number, xs: number, xe: number): boolean {
  if (s === e) return xs < s && s < xe;
  if (xs === xe) return s < xs && xs < e;
  return s < xe && xs < e;
}

interface Change {
  start: number;
  end: number;
  newLength: number;
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** The part of a replacement that really changes something (common head and tail left out). */
function trimmedChange(text: string, r: Replacement): Change {
  const oldLen = r.end - r.start;
  const newLen = r.text.length;
  let head = 0;
  while (head < oldLen && head < newLen && text.charCodeAt(r.start + head) === r.text.charCodeAt(head)) head++;
  if (head > 0 && head < oldLen && isLowSurrogate(text.charCodeAt(r.start + head))) head--;
  let tail = 0;
  while (tail < oldLen - head && tail < newLen - head && text.charCodeAt(r.end - 1 - tail) === r.text.charCodeAt(newLen - 1 - tail)) tail++;
  if (tail > 0 && tail < oldLen - head && isLowSurrogate(text.charCodeAt(r.end - tail))) tail--;
  return { start: r.start + head, end: r.end - tail, newLength: newLen - head - tail };
}

/**
 * Folds one request's changes (in current-text coordinates) into the spans so far. Spans that touch
 * merge, so the result stays sorted and non-overlapping in both the original and the new text.
 */
function mergeSpans(existing: Span[], changes: Change[], editIndex: number): Span[] {
  type Item = { start: number; end: number; span?: Span; change?: Change };
  const items: Item[] = [
    ...existing.map((s) => ({ start: s.newStart, end: s.newEnd, span: s })),
    ...changes.map((c) => ({ start: c.start, end: c.end, change: c })),
  ].sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Span[] = [];
  let toOriginal = 0; // original offset minus current offset, outside spans
  let toNew = 0; // new offset minus current offset, outside this request's changes
  for (let i = 0; i < items.length; ) {
    const start = (items[i] as Item).start;
    let end = (items[i] as Item).end;
    let spanDelta = 0;
    let changeDelta = 0;
    const editSet = new Set<number>();
    for (; i < items.length && (items[i] as Item).start <= end; i++) {
      const it = items[i] as Item;
      end = Math.max(end, it.end);
      if (it.span) {
        spanDelta += it.span.oldEnd - it.span.oldStart - (it.span.newEnd - it.span.newStart);
        it.span.edits.forEach((e) => editSet.add(e));
      } else if (it.change) {
        changeDelta += it.change.newLength - (it.change.end - it.change.start);
        editSet.add(editIndex);
      }
    }
    out.push({
      oldStart: start + toOriginal,
      oldEnd: end + toOriginal + spanDelta,
      newStart: start + toNew,
      newEnd: end + toNew + changeDelta,
      edits: [...editSet].sort((a, b) => a - b),
    });
    toOriginal += spanDelta;
    toNew += changeDelta;
  }
  return out;
}

/** Maps an offset of the text before a request to the text after it (an offset inside a replaced range goes to its edge). */
function positionMapper(reps: Replacement[]): (x: number, side: 'start' | 'end') => number {
  const before: number[] = [];
  let d = 0;
  for (const r of reps) {
    before.push(d);
    d += r.text.length - (r.end - r.start);
  }
  return (x, side) => {
    // Last replacement that starts before x.
    let lo = 0;
    let hi = reps.length - 1;
    let k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((reps[mid] as Replacement).start < x) {
        k = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (k === -1) return x;
    const r = reps[k] as Replacement;
    const shift = before[k] as number;
    if (x >= r.end) return x + shift + r.text.length - (r.end - r.start);
    return side === 'start' ? r.start + shift : r.start + shift + r.text.length;
  };
}

/** An offset of the current text as an offset of the original (inside a changed span: the span's start). */
function toOriginalOffset(spans: Span[], x: number): number {
  let shift = 0;
  for (const s of spans) {
    if (s.newEnd <= x) {
      shift = s.oldEnd - s.newEnd;
      continue;
    }
    if (s.newStart < x) return s.oldStart;
    break;
  }
  return x + shift;
}

function noMatchError(i: number, several: boolean, oldText: string, original: string, spans: Span[]): ToolError {
  // Not found now but present in the original file: an earlier edit already changed that text.
  if (i > 0 && spans.length > 0) {
    const before = findMatches(original, oldText, { all: true, limit: LISTED_MATCHES }, new LineTableCache());
    for (const c of before?.candidates ?? []) {
      const hit = spans.find((s) => intersects(c.start, Math.max(c.end, c.start + 1), s.oldStart, s.oldEnd));
      if (hit) return overlapError(i, hit, original);
    }
  }
  const diagnosis = diagnoseNoMatch(original, oldText);
  if (!diagnosis.closest) return E.editNoMatch(several, i, diagnosis.differences);
  return E.editNoMatchClosest(several, i, diagnosis.closest, diagnosis.differences);
}

function multipleMatchesError(
  i: number,
  several: boolean,
  candidates: Candidate[],
  total: number,
  stage: MatchStage,
  original: string,
  spans: Span[],
  /** The matcher's work budget ran out (match.ts): `total` is a lower bound. */
  incomplete: boolean,
): ToolError {
  const lines = lineNumbersAt(original, candidates.map((c) => toOriginalOffset(spans, c.start)));
  const listed = lines.slice(0, LISTED_IN_MESSAGE).join(', ') + (total > LISTED_IN_MESSAGE ? ', …' : '');
  return E.editMultipleMatches(several, i, total, listed, lines, stage, incomplete);
}

function overlapError(i: number, span: Span, original: string): ToolError {
  const other = Math.max(...span.edits.filter((e) => e < i));
  const [a, b] = lineNumbersAt(original, [span.oldStart, lastLineOffset(span.oldStart, span.oldEnd)]);
  return E.editsOverlap(i, other, a, b);
}

/** The edited regions of the new text with SNIPPET_CONTEXT lines around them, numbered. */
function buildSnippet(text: string, ranges: Array<{ start: number; end: number }>, lineBase: number): string {
  const offsets = ranges.flatMap((r) => [r.start, lastLineOffset(r.start, r.end)]);
  const lineNos = lineNumbersAt(text, offsets).map((n) => lineBase + n);
  const regions: Array<[number, number]> = [];
  for (let k = 0; k < ranges.length; k++) {
    regions.push([Math.max(lineBase + 1, (lineNos[2 * k] as number) - SNIPPET_CONTEXT), (lineNos[2 * k + 1] as number) + SNIPPET_CONTEXT]);
  }
  regions.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const r of regions) {
    const prev = merged[merged.length - 1];
    if (prev && r[0] <= prev[1] + 1) prev[1] = Math.max(prev[1], r[1]);
    else merged.push([...r]);
  }

  const blocks: Array<Array<[number, string]>> = [];
  let shown = 0;
  let truncated = false;
  let line = lineBase + 1;
  let pos = 0;
  const ended = () => pos > text.length || (pos === text.length && (text.length === 0 || text.endsWith('\n')));
  for (const [from, to] of merged) {
    while (line < from && !ended()) {
      const nl = text.indexOf('\n', pos);
      pos = nl === -1 ? text.length + 1 : nl + 1;
      line++;
    }
    const block: Array<[number, string]> = [];
    while (line <= to && !ended()) {
      if (shown === SNIPPET_MAX_LINES) {
        truncated = true;
        break;
      }
      const nl = text.indexOf('\n', pos);
      let content = text.slice(pos, nl === -1 ? text.length : nl);
      if (content.endsWith('\r')) content = content.slice(0, -1);
      if (content.length > SNIPPET_MAX_LINE_CHARS) content = `${content.slice(0, SNIPPET_MAX_LINE_CHARS)}…`;
      block.push([line, content]);
      shown++;
      pos = nl === -1 ? text.length + 1 : nl + 1;
      line++;
    }
    if (block.length) blocks.push(block);
    if (truncated) break;
  }
  const lastShown = blocks.at(-1)?.at(-1)?.[0] ?? 1;
  const width = String(lastShown).length;
  const parts = blocks.map((b) => b.map(([n, l]) => `${String(n).padStart(width)}: ${l}`).join('\n'));
  return parts.join('\n...\n') + (truncated ? '\n...' : '');
}
