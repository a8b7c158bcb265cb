// Line bookkeeping for the edit engine: line tables for tolerant matching, line numbers of offsets, line endings.

/**
 * Line starts of a text, built only when a tolerant stage needs whole lines. One Int32Array with a
 * sentinel keeps a 50 MiB file with a million lines at a few megabytes.
 */
export interface LineTable {
  readonly text: string;
  readonly count: number;
  /** starts[i] is the offset of line i; starts[count] is the offset after the last terminator (text.length + 1 without a final newline). */
  readonly starts: Int32Array;
}

export function buildLineTable(text: string): LineTable {
  let count = 0;
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', nl + 1)) count++;
  const finalNewline = text.length > 0 && text.charCodeAt(text.length - 1) === 10;
  if (text.length > 0 && !finalNewline) count++;
  const starts = new Int32Array(count + 1);
  let i = 0;
  let pos = 0;
  while (i < count) {
    starts[i++] = pos;
    const nl = text.indexOf('\n', pos);
    pos = nl === -1 ? text.length + 1 : nl + 1;
  }
  starts[count] = finalNewline || text.length === 0 ? text.length : text.length + 1;
  return { text, count, starts };
}

export function lineStart(t: LineTable, i: number): number {
  return t.starts[i] as number;
}

/** Offset just after the content of line i, before its terminator. */
export function lineEnd(t: LineTable, i: number): number {
  let end = (t.starts[i + 1] as number) - 1;
  if (end > (t.starts[i] as number) && t.text.charCodeAt(end) === 10 && t.text.charCodeAt(end - 1) === 13) end--;
  return end;
}

export function lineContent(t: LineTable, i: number): string {
  return t.text.slice(lineStart(t, i), lineEnd(t, i));
}

/** The terminator of line i: '\r\n', '\n' or '' for a last line without final newline. */
export function lineTerminator(t: LineTable, i: number): string {
  return t.text.slice(lineEnd(t, i), Math.min(t.starts[i + 1] as number, t.text.length));
}

/** Index of the line that contains offset (binary search). */
export function lineIndexAt(t: LineTable, offset: number): number {
  let lo = 0;
  let hi = t.count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((t.starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * 1-based line numbers of many offsets with one forward scan (offsets in any order). Counting '\n'
 * with indexOf costs about as much as one more search over the text.
 */
export function lineNumbersAt(text: string, offsets: readonly number[]): number[] {
  const order = offsets.map((_, i) => i).sort((a, b) => (offsets[a] as number) - (offsets[b] as number));
  const out = new Array<number>(offsets.length);
  let line = 1;
  let nl = text.indexOf('\n');
  for (const idx of order) {
    const off = offsets[idx] as number;
    while (nl !== -1 && nl < off) {
      line++;
      nl = text.indexOf('\n', nl + 1);
    }
    out[idx] = line;
  }
  return out;
}

/** Line number of the last character of [start, end), or of start when the range is empty. */
export function lastLineOffset(start: number, end: number): number {
  return end > start ? end - 1 : start;
}

/** The model's text as lines; a final newline is remembered, not kept as an empty last line. */
export interface ModelLines {
  lines: string[];
  trailingNewline: boolean;
}

export function splitModelLines(s: string): ModelLines {
  const lines = s.split(/\r?\n/);
  let trailingNewline = false;
  if (lines.length > 1 && lines[lines.length - 1] === '') {
    lines.pop();
    trailingNewline = true;
  }
  return { lines, trailingNewline };
}

/** Endings of the line breaks inside text[start, end). */
function endingsIn(text: string, start: number, end: number): string[] {
  const out: string[] = [];
  for (let nl = text.indexOf('\n', start); nl !== -1 && nl < end; nl = text.indexOf('\n', nl + 1)) {
    out.push(nl > 0 && text.charCodeAt(nl - 1) === 13 ? '\r\n' : '\n');
  }
  return out;
}

function majority(eols: readonly string[]): string {
  let crlf = 0;
  for (const e of eols) if (e === '\r\n') crlf++;
  if (crlf * 2 === eols.length) return eols[0] as string;
  return crlf * 2 > eols.length ? '\r\n' : '\n';
}

/** The ending of the line around offsets [start, end): the next break after it, else the previous one; null when the text has none. */
export function endingNear(text: string, start: number, end: number): string | null {
  const next = text.indexOf('\n', end);
  if (next !== -1) return next > 0 && text.charCodeAt(next - 1) === 13 ? '\r\n' : '\n';
  const prev = start > 0 ? text.lastIndexOf('\n', start - 1) : -1;
  if (prev !== -1) return prev > 0 && text.charCodeAt(prev - 1) === 13 ? '\r\n' : '\n';
  return null;
}

/**
 * new_text's line breaks rewritten the way the replaced region text[start, end) writes them: its one
 * ending when consistent, break by break when a mixed region has as many breaks as new_text, else the
 * region's majority; a region without breaks takes the ending of its line. A text without any line
 * break has no convention to follow: new_text keeps its own.
 */
export function toFileEndings(newText: string, text: string, start: number, end: number): string {
  if (!newText.includes('\n')) return newText;
  const region = endingsIn(text, start, end);
  const breaks = (newText.match(/\n/g) ?? []).length;
  let pick: (i: number) => string;
  if (region.length === 0) {
    const eol = endingNear(text, start, end);
    if (eol === null) return newText;
    pick = () => eol;
  } else if (region.every((e) => e === region[0])) {
    pick = () => region[0] as string;
  } else if (region.length === breaks) {
    pick = (i) => region[i] as string;
  } else {
    const eol = majority(region);
    pick = () => eol;
  }
  let i = 0;
  return newText.replace(/\r?\n/g, () => pick(i++));
}

/** The ending new lines in a block of whole lines [first, last] get: the block's own majority, else its neighbours'. */
export function blockEnding(t: LineTable, first: number, last: number): string {
  const eols: string[] = [];
  for (let i = first; i < last; i++) eols.push(lineTerminator(t, i));
  if (eols.length > 0) return majority(eols);
  const own = lineTerminator(t, last);
  if (own !== '') return own;
  if (first > 0) return lineTerminator(t, first - 1);
  return '\n';
}
