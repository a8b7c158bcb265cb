// edit_file on the bytes of a UTF-8 file, for the common case: one edit whose old_text occurs exactly
// once, byte for byte. The match is found with Buffer#indexOf, only a window of whole lines around it is
// decoded and handed to the engine, and the new file is the old bytes before the window, the window's new
// bytes and the old bytes after it: a large file is neither decoded nor re-encoded nor copied.
//
// Why the window gives the engine's answer on the whole text: the exact stage takes the first stage with a
// unique match (unique in the file, so unique in the window); what it writes depends on the matched text,
// the line break just before and just after it (line endings of new_text), and the snippet and diff look
// at most SNIPPET/diff context lines around the change. The window holds WINDOW_CONTEXT whole lines on each
// side (or reaches the file's start or end), so every one of those looks sees the same text. Line numbers
// are the window's plus the lines before it. test/edit/bytes.test.ts runs the edit corpus and
// random edits through both paths.
import { isUtf8 } from 'node:buffer';
import { applyEdits, type EditOutcome, type EditRequest } from './engine.js';
import { looksBinary } from '../workspace/encoding.js';

/** Whole lines kept on each side of the match: more than the snippet (4) and diff (3) context and the one line break the engine looks past. */
const WINDOW_CONTEXT = 6;
const LF = 10;

export interface Utf8EditPlan {
  /** The new file: old bytes [0, head), then `middle`, then old bytes [tail, end). */
  head: number;
  tail: number;
  middle: Buffer;
  /** The window's old text (old bytes [head, tail) decoded). */
  windowText: string;
  /** The engine's outcome on the window with line numbers relative to it (see describeUtf8Edit for the file's). */
  windowOutcome: EditOutcome;
  edits: EditRequest[];
}

export interface Utf8EditDescription {
  /** The engine's outcome with the file's line numbers; `text` and `spans` are of the window. */
  outcome: EditOutcome;
  /** Lines of the file before the window (the diff's line base). */
  lineBase: number;
}

/** With the u flag a surrogate pair is one code point, so this finds only lone surrogates. */
const LONE_SURROGATE = /\p{Surrogate}/u;
const stripBom = (s: string) => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s);

/** Start of the line `lines` lines above the line that contains byte `at` (or 0). */
function linesBack(buf: Buffer, at: number, lines: number): number {
  let start = at === 0 ? 0 : buf.lastIndexOf(LF, at - 1) + 1;
  for (let k = 0; k < lines && start > 0; k++) {
    // start - 1 is the break that ends the line above; its own start follows the break before that.
    start = start >= 2 ? buf.lastIndexOf(LF, start - 2) + 1 : 0;
  }
  return start;
}

/** End (after the break) of the line `lines` lines below the line that contains byte `at`, or the file's end. */
function linesForward(buf: Buffer, at: number, lines: number): number {
  let end = at;
  for (let k = 0; k <= lines && end < buf.length; k++) {
    const nl = buf.indexOf(LF, end);
    end = nl === -1 ? buf.length : nl + 1;
  }
  return end;
}

/** Line breaks in buf[from, to). */
export function countLineBreaks(buf: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = buf.indexOf(LF, from); i !== -1 && i < to; i = buf.indexOf(LF, i + 1)) n++;
  return n;
}

/**
 * The edit as a byte splice, or null when the fast path does not apply (several edits, no unique exact
 * match, not valid UTF-8, binary, a new_text or old_text with lone surrogates, or anything the engine
 * refuses): the caller then runs the engine on the whole decoded text, which also produces every error.
 */
export function planUtf8Edit(buf: Buffer, edits: EditRequest[]): Utf8EditPlan | null {
  if (edits.length !== 1) return null;
  const req = edits[0] as EditRequest;
  if (typeof req?.old_text !== 'string' || typeof req.new_text !== 'string') return null;
  // A lone surrogate has no UTF-8 form (Buffer.from would write U+FFFD and could match one in the file).
  if (LONE_SURROGATE.test(req.old_text) || LONE_SURROGATE.test(req.new_text)) return null;
  const oldText = stripBom(req.old_text);
  if (oldText === '') return null;
  if (looksBinary(buf) || !isUtf8(buf)) return null;

  const body = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  const needle = Buffer.from(oldText, 'utf8');
  // Both texts are valid UTF-8, so a byte match starts and ends on character boundaries and is a match of
  // the decoded strings, and the other way round; overlapping matches count, as in the engine.
  const at = buf.indexOf(needle, body);
  if (at === -1 || buf.indexOf(needle, at + 1) !== -1) return null;

  const head = linesBack(buf, at, WINDOW_CONTEXT);
  const tail = linesForward(buf, at + needle.length, WINDOW_CONTEXT);
  const windowText = buf.toString('utf8', head, tail);
  let windowOutcome: EditOutcome;
  try {
    windowOutcome = applyEdits(windowText, edits);
  } catch {
    return null;
  }
  if (windowOutcome.edits[0]?.stage !== 'exact') return null;
  return { head, tail, middle: Buffer.from(windowOutcome.text, 'utf8'), windowText, windowOutcome, edits };
}

/**
 * Line numbers for a planned edit: counts the lines before the window (the one pass over the file's head
 * this path makes; callers run it while the new file is being written) and numbers edits and snippet.
 */
export function describeUtf8Edit(buf: Buffer, plan: Utf8EditPlan): Utf8EditDescription {
  const lineBase = countLineBreaks(buf, 0, plan.head);
  const outcome = lineBase === 0 ? plan.windowOutcome : applyEdits(plan.windowText, plan.edits, { lineBase });
  return { outcome, lineBase };
}
