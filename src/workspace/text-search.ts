// Literal content search over raw file bytes (search_files): the bytes are scanned with Buffer#indexOf (or a
// precompiled, backtracking-free RegExp over a latin1 view for case-insensitive ASCII queries), and only
// the lines around hits are decoded. User regexes never run here: see regex.ts.
import { escapeRegExp } from './regex.js';

/** One hit per line: 1-based line, 1-based column (UTF-16 units of the decoded line), a trimmed preview. */
export interface ContentHit {
  line: number;
  column: number;
  preview: string;
}

export const PREVIEW_CHARS = 200;
/** Bytes decoded around a hit in a very long line (minified code), so a preview never decodes megabytes. */
const WINDOW_BEFORE = 200;
const WINDOW_AFTER = 800;

/** Finds the byte offset of the next match at or after `from`, or -1. */
export type ByteFinder = (buf: Buffer, from: number) => number;

/**
 * A finder for a literal query. Case-sensitive: Buffer#indexOf on the UTF-8 bytes. Case-insensitive and
 * ASCII: a RegExp with the i flag over the latin1 view, whose offsets are byte offsets (non-ASCII bytes
 * never fold to ASCII without the u flag). Otherwise null: the caller decodes the text (see stringFinder).
 */
export function literalByteFinder(query: string, caseSensitive: boolean): ByteFinder | null {
  if (caseSensitive) {
    const needle = Buffer.from(query, 'utf8');
    return (buf, from) => buf.indexOf(needle, from);
  }
  // eslint-disable-next-line no-control-regex
  if (!/^[\x00-\x7f]*$/.test(query)) return null;
  if (!/[A-Za-z]/.test(query)) {
    const needle = Buffer.from(query, 'latin1');
    return (buf, from) => buf.indexOf(needle, from);
  }
  const re = new RegExp(escapeRegExp(query), 'gi');
  let cached: Buffer | null = null;
  let text = '';
  return (buf, from) => {
    if (cached !== buf) {
      cached = buf;
      text = buf.toString('latin1');
    }
    re.lastIndex = from;
    const m = re.exec(text);
    return m ? m.index : -1;
  };
}

/** Case-insensitive non-ASCII literal: a RegExp with the i and u flags over the decoded text. */
export function literalStringRegExp(query: string): RegExp {
  return new RegExp(escapeRegExp(query), 'giu');
}

function cutPreview(line: string, column: number): string {
  const s = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (s.length <= PREVIEW_CHARS) return s.trim();
  const from = Math.max(0, Math.min(column - 1 - Math.floor(PREVIEW_CHARS / 4), s.length - PREVIEW_CHARS));
  return `${from > 0 ? '…' : ''}${s.slice(from, from + PREVIEW_CHARS).trim()}${from + PREVIEW_CHARS < s.length ? '…' : ''}`;
}

/** Hits (one per line) of a byte finder in `buf`, at most `max`. */
export function byteHits(buf: Buffer, find: ByteFinder, max: number): ContentHit[] {
  const hits: ContentHit[] = [];
  let line = 1;
  let counted = 0; // newlines before this offset are counted in `line`
  let from = 0;
  while (hits.length < max && from <= buf.length) {
    const at = find(buf, from);
    if (at === -1) break;
    for (let p = buf.indexOf(10, counted); p !== -1 && p < at; p = buf.indexOf(10, p + 1)) line++;
    counted = at;
    const lineStart = at === 0 ? 0 : buf.lastIndexOf(10, at - 1) + 1;
    let lineEnd = buf.indexOf(10, at);
    if (lineEnd === -1) lineEnd = buf.length;
    let column: number;
    let preview: string;
    if (lineEnd - lineStart <= WINDOW_BEFORE + WINDOW_AFTER) {
      const before = buf.toString('utf8', lineStart, at);
      column = before.length + 1;
      preview = cutPreview(buf.toString('utf8', lineStart, lineEnd), column);
    } else {
      column = buf.toString('utf8', lineStart, at).length + 1;
      const winStart = Math.max(lineStart, at - WINDOW_BEFORE);
      const win = buf.toString('utf8', winStart, Math.min(lineEnd, at + WINDOW_AFTER)).replace(/^\uFFFD+|\uFFFD+$/g, '');
      preview = cutPreview(win, Math.min(at - winStart + 1, win.length));
      if (winStart > lineStart && !preview.startsWith('…')) preview = `…${preview}`;
      if (!preview.endsWith('…')) preview = `${preview}…`;
    }
    hits.push({ line, column, preview });
    from = lineEnd + 1;
  }
  return hits;
}

/** Hits (one per line) of a global RegExp over decoded text, at most `max` (for patterns known not to backtrack). */
export function stringHits(text: string, re: RegExp, max: number): ContentHit[] {
  const hits: ContentHit[] = [];
  let line = 1;
  let counted = 0;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (hits.length < max && (m = re.exec(text)) !== null) {
    const at = m.index;
    for (let p = text.indexOf('\n', counted); p !== -1 && p < at; p = text.indexOf('\n', p + 1)) line++;
    counted = at;
    const start = at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
    let end = text.indexOf('\n', at);
    if (end === -1) end = text.length;
    hits.push({ line, column: at - start + 1, preview: cutPreview(text.slice(start, end), at - start + 1) });
    if (end >= text.length) break;
    re.lastIndex = end + 1;
  }
  return hits;
}
