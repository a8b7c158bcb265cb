// Applies one file's V4A hunks to its text: finds each hunk as codex's seek_sequence does, but refuses a hunk that
// fits more than one place instead of taking the first. Pure: strings in, string out.
import { diffArrays } from 'diff';
import { E } from '../errors.js';
import type { PatchError } from './patch-error.js';
import type { UpdateChunk } from './patch-v4a.js';
import { unicodeFold } from './normalize.js';

/** The passes in order; each forgives what the ones before it forgive. */
export type MatchPass = 'exact' | 'trailing_whitespace' | 'whitespace' | 'unicode';

const PASSES: ReadonlyArray<readonly [MatchPass, (line: string) => string]> = [
  ['exact', (l) => l],
  ['trailing_whitespace', (l) => l.trimEnd()],
  ['whitespace', (l) => l.trim()],
  ['unicode', (l) => unicodeFold(l).trim()],
];

const PASS_WORDS: Record<MatchPass, string> = {
  exact: 'exactly',
  trailing_whitespace: 'ignoring trailing whitespace',
  whitespace: 'ignoring surrounding whitespace',
  unicode: 'ignoring whitespace and typographic punctuation',
};

export interface AppliedHunk {
  /** 1-based first line of the file where the hunk's old lines were (where it inserted, for a pure addition). */
  line: number;
  pass: MatchPass;
}

export interface AppliedChunks {
  content: string;
  hunks: AppliedHunk[];
}

/** A file as lines without their endings, and each line's ending ('' for a last line without one). */
interface SplitText {
  text: string[];
  ends: string[];
}

function splitLines(content: string): SplitText {
  const text: string[] = [];
  const ends: string[] = [];
  let i = 0;
  while (i < content.length) {
    const j = content.indexOf('\n', i);
    if (j < 0) {
      text.push(content.slice(i));
      ends.push('');
      break;
    }
    const crlf = j > i && content.charCodeAt(j - 1) === 13;
    text.push(content.slice(i, crlf ? j - 1 : j));
    ends.push(crlf ? '\r\n' : '\n');
    i = j + 1;
  }
  return { text, ends };
}

/** The file's usual line ending, given to every line the patch adds. */
function dominantEnding(ends: string[]): string {
  let crlf = 0;
  let lf = 0;
  for (const e of ends) {
    if (e === '\r\n') crlf++;
    else if (e === '\n') lf++;
  }
  return crlf > lf ? '\r\n' : '\n';
}

/**
 * Line comparisons one search for a hunk may spend (about a tenth of a second): 150,000 identical lines and a hunk of
 * 2,000 of them with other indentation fit at every line under the whitespace pass, 3·10⁸ comparisons on
 * the event loop. Past it the search answers the places found if there are two (MULTIPLE_MATCHES), else
 * TIMEOUT (docs/operations.md, "Work off the main thread").
 */
export const SEEK_BUDGET = 1_000_000;

/** The search for a hunk passed SEEK_BUDGET without deciding; the caller names the hunk. */
export class SeekBudgetSpent extends Error {}

/** Where a pattern fits (0-based line starts) and through which comparison pass. */
interface Found {
  pass: MatchPass;
  positions: number[];
  /** The search's budget ran out: there may be more positions. */
  incomplete?: boolean;
}

/** Looks up lines under each pass, normalising the file once per pass and only when that pass is reached. */
class LineIndex {
  private readonly cache = new Map<MatchPass, string[]>();
  constructor(readonly lines: string[]) {}

  normalized(pass: MatchPass, norm: (l: string) => string): string[] {
    let out = this.cache.get(pass);
    if (!out) {
      out = pass === 'exact' ? this.lines : this.lines.map(norm);
      this.cache.set(pass, out);
    }
    return out;
  }

  /**
   * Where `pattern` fits at or after `from`, at the first pass that finds it anywhere: every place (`all`) or the
   * first. `onlyAt` tests that one position (the end of the file for `*** End of File`).
   */
  seek(pattern: string[], from: number, opts: { all: boolean; onlyAt?: number }): Found | null {
    const n = this.lines.length;
    const m = pattern.length;
    if (m === 0) return { pass: 'exact', positions: [opts.onlyAt ?? from] };
    if (m > n) return null;
    const lo = opts.onlyAt ?? from;
    const hi = opts.onlyAt ?? n - m;
    if (lo < from || lo > hi) return null;
    let spent = 0;
    for (const [pass, norm] of PASSES) {
      const file = this.normalized(pass, norm);
      const pat = pass === 'exact' ? pattern : pattern.map(norm);
      const positions: number[] = [];
      for (let i = lo; i <= hi; i++) {
        let j = 0;
        while (j < m && file[i + j] === pat[j]) j++;
        spent += j + 1;
        if (spent > SEEK_BUDGET) {
          if (positions.length >= 2) return { pass, positions, incomplete: true };
          throw new SeekBudgetSpent();
        }
        if (j === m) {
          positions.push(i);
          if (!opts.all) break;
        }
      }
      if (positions.length > 0) return { pass, positions };
    }
    return null;
  }
}

/** Work bound of the closest-lines search in a NO_MATCH message (positions × pattern lines). */
const NEAREST_BUDGET = 2_000_000;
const SHOWN_LINES = 12;

function showLines(lines: string[], firstLine?: number): string {
  const shown = lines.slice(0, SHOWN_LINES).map((l, k) => (firstLine === undefined ? `  | ${l}` : `  ${firstLine + k} | ${l}`));
  if (lines.length > SHOWN_LINES) shown.push(`  … (${lines.length - SHOWN_LINES} more lines)`);
  return shown.join('\n');
}

/** The window of the file most like the pattern under the loosest pass, when that is cheap to find. */
function nearest(index: LineIndex, pattern: string[]): { start: number; equal: number } | null {
  const n = index.lines.length;
  const m = pattern.length;
  if (m === 0 || n === 0 || n * m > NEAREST_BUDGET) return null;
  const [pass, norm] = PASSES[PASSES.length - 1] as (typeof PASSES)[number];
  const file = index.normalized(pass, norm);
  const pat = pattern.map(norm);
  let best: { start: number; equal: number } | null = null;
  for (let i = 0; i <= Math.max(0, n - m); i++) {
    let equal = 0;
    for (let j = 0; j < m && i + j < n; j++) if (file[i + j] === pat[j] && pat[j] !== '') equal++;
    if (equal > 0 && (!best || equal > best.equal)) best = { start: i, equal };
  }
  return best;
}

/**
 * Which new line keeps which old line: context lines are copied from the file (its own whitespace, quotes and
 * line endings survive a tolerant match) instead of the patch's version of them.
 */
function keptFromOld(oldLines: string[], newLines: string[]): Map<number, number> {
  const kept = new Map<number, number>();
  let p = 0;
  while (p < oldLines.length && p < newLines.length && oldLines[p] === newLines[p]) {
    kept.set(p, p);
    p++;
  }
  let s = 0;
  while (s < oldLines.length - p && s < newLines.length - p && oldLines[oldLines.length - 1 - s] === newLines[newLines.length - 1 - s]) {
    kept.set(newLines.length - 1 - s, oldLines.length - 1 - s);
    s++;
  }
  const midOld = oldLines.slice(p, oldLines.length - s);
  const midNew = newLines.slice(p, newLines.length - s);
  if (midOld.length === 0 || midNew.length === 0) return kept;
  // Bounded: past this the middle is mostly rewritten and its few shared lines take the patch's version.
  const changes = diffArrays(midOld, midNew, { maxEditLength: 2000 });
  if (!changes) return kept;
  let o = p;
  let nw = p;
  for (const c of changes) {
    const count = c.value.length;
    if (c.added) nw += count;
    else if (c.removed) o += count;
    else for (let k = 0; k < count; k++) kept.set(nw++, o++);
  }
  return kept;
}

interface Replacement {
  start: number;
  oldLen: number;
  newLines: string[];
  kept: Map<number, number>;
}

/**
 * Applies one file's hunks in order, each after the previous one. Throws PatchError NO_MATCH or MULTIPLE_MATCHES
 * naming the hunk; the file's line endings and final-newline state are kept.
 */
export function applyChunksDetailed(content: string, chunks: UpdateChunk[], path: string): AppliedChunks {
  const bom = content.startsWith('\uFEFF') ? '\uFEFF' : '';
  const body = bom ? content.slice(1) : content;
  const { text, ends } = splitLines(body);
  const index = new LineIndex(text);
  const replacements: Replacement[] = [];
  const hunks: AppliedHunk[] = [];
  let cursor = 0;

  chunks.forEach((chunk, k) => {
    const label = `Hunk ${k + 1}${chunk.patchLine !== undefined ? ` (patch line ${chunk.patchLine})` : ''} of ${path}`;
    let placed: Placed;
    try {
      placed = placeHunk(index, text, chunk, { path, hunk: k + 1, label }, cursor);
    } catch (err) {
      if (!(err instanceof SeekBudgetSpent)) throw err;
      throw E.hunkSearchBudget(label, SEEK_BUDGET, path, k + 1);
    }
    replacements.push(placed.replacement);
    hunks.push(placed.hunk);
    cursor = placed.cursor;
  });

  const finalNewline = body === '' || body.endsWith('\n');
  return { content: bom + joinReplaced(text, ends, replacements, dominantEnding(ends), finalNewline), hunks };
}

/** Which hunk of which file, for its errors. */
interface HunkName {
  path: string;
  /** 1-based. */
  hunk: number;
  /** "Hunk 2 (patch line 14) of src/a.ts", the start of its messages. */
  label: string;
}

/** Where one hunk goes: its replacement, its report, and where the next hunk's search starts. */
interface Placed {
  replacement: Replacement;
  hunk: AppliedHunk;
  cursor: number;
}

/**
 * Finds one hunk's place from `cursor` on: after its '@@' lines, then its old lines, with the two retries
 * models need (the hunk starting on the '@@' line itself, a last empty line standing for the final newline).
 */
function placeHunk(index: LineIndex, text: string[], chunk: UpdateChunk, name: HunkName, cursor: number): Placed {
  const headers = chunk.changeContext ?? [];
  for (const header of headers) {
    const found = index.seek([header], cursor, { all: false });
    if (!found) {
      const where = cursor > 0 ? ` after line ${cursor}` : '';
      throw E.hunkHeaderNotFound(name.label, header, where, name.path, name.hunk, cursor + 1);
    }
    cursor = (found.positions[0] as number) + 1;
  }

  if (chunk.oldLines.length === 0) {
    // Nothing to find: insert after the @@ line when there is one, else at the end (as codex does).
    const at = headers.length > 0 && !chunk.isEndOfFile ? cursor : text.length;
    return { replacement: { start: at, oldLen: 0, newLines: chunk.newLines, kept: new Map() }, hunk: { line: at + 1, pass: 'exact' }, cursor: at };
  }

  let pattern = chunk.oldLines;
  let repl = chunk.newLines;
  const look = (p: string[]) =>
    chunk.isEndOfFile ? index.seek(p, cursor, { all: false, onlyAt: text.length - p.length }) : index.seek(p, cursor, { all: headers.length === 0 });
  let found = look(pattern);
  if (!found && headers.length > 0 && !chunk.isEndOfFile) {
    // Models often repeat the @@ line as the hunk's first unchanged line: let the hunk start on it.
    cursor--;
    found = look(pattern);
    if (!found) cursor++;
  }
  if (!found && pattern[pattern.length - 1] === '') {
    // A last empty old line often stands for the file's final newline, which is no line here (codex retries too).
    pattern = pattern.slice(0, -1);
    if (repl[repl.length - 1] === '') repl = repl.slice(0, -1);
    found = look(pattern);
  }
  if (!found) throw notFound(index, text, chunk, name, pattern, cursor);
  if (found.positions.length > 1) throw ambiguous(found, name);
  const start = found.positions[0] as number;
  return { replacement: { start, oldLen: pattern.length, newLines: repl, kept: keptFromOld(pattern, repl) }, hunk: { line: start + 1, pass: found.pass }, cursor: start + pattern.length };
}

/** NO_MATCH for a hunk's old lines, with a hint: they are before the cursor, or the closest lines in the file. */
function notFound(index: LineIndex, text: string[], chunk: UpdateChunk, name: HunkName, pattern: string[], cursor: number): PatchError {
  const searched = chunk.isEndOfFile ? 'at the end of the file' : cursor > 0 ? `from line ${cursor + 1} to the end` : 'in the whole file';
  let hint = '';
  const earlier = cursor > 0 && !chunk.isEndOfFile ? index.seek(pattern, 0, { all: false }) : null;
  if (earlier) hint = `\nThey are at line ${(earlier.positions[0] as number) + 1}, before the previous hunk or @@ line: hunks must follow the file's order.`;
  else {
    const near = nearest(index, pattern);
    if (near) {
      const shown = text.slice(near.start, near.start + pattern.length);
      hint = `\nThe closest lines are ${near.start + 1}-${near.start + shown.length} (${near.equal} of ${pattern.length} equal):\n${showLines(shown, near.start + 1)}`;
    }
  }
  return E.hunkNotFound(name.label, searched, showLines(chunk.oldLines), hint, name.path, name.hunk, chunk.oldLines.slice(0, SHOWN_LINES));
}

/** MULTIPLE_MATCHES for a hunk whose old lines fit several places. */
function ambiguous(found: Found, name: HunkName): PatchError {
  const lines = found.positions.map((p) => p + 1);
  // Past the search's budget the count is a lower bound.
  const count = found.incomplete ? `at least ${lines.length}` : `${lines.length}`;
  const listed = lines.slice(0, 10).join(', ') + (lines.length > 10 ? `, … (${count} in all)` : '');
  return E.hunkAmbiguous(name.label, count, listed, PASS_WORDS[found.pass], name.path, name.hunk, lines.slice(0, 50), found.pass, found.incomplete === true);
}

/**
 * The file's lines with the replacements made, joined: kept lines keep their own endings, new lines take the
 * dominant one, and the last line keeps the file's final-newline state.
 */
function joinReplaced(text: string[], ends: string[], replacements: Replacement[], eol: string, finalNewline: boolean): string {
  const outText: string[] = [];
  const outEnds: string[] = [];
  const keep = (i: number) => {
    outText.push(text[i] as string);
    outEnds.push(ends[i] as string);
  };
  let at = 0;
  for (const r of replacements) {
    for (; at < r.start; at++) keep(at);
    r.newLines.forEach((line, j) => {
      const old = r.kept.get(j);
      if (old !== undefined) return keep(r.start + old);
      outText.push(line);
      outEnds.push(eol);
    });
    at = r.start + r.oldLen;
  }
  for (; at < text.length; at++) keep(at);

  // A line that was last without an ending may now have lines after it; the last line keeps the file's state.
  let out = '';
  for (let i = 0; i < outText.length; i++) {
    const last = i === outText.length - 1;
    const end = outEnds[i] as string;
    out += outText[i] + (last ? (finalNewline ? end || eol : '') : end || eol);
  }
  return out;
}

/** applyChunksDetailed without the per-hunk report. */
export function applyChunks(content: string, chunks: UpdateChunk[], path: string): string {
  return applyChunksDetailed(content, chunks, path).content;
}
