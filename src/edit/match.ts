// Finding old_text in a file: the matching cascade of the edit engine. Each stage reports every candidate
// it sees; the engine accepts a stage only when its candidate is unique (or replace_all is set).
//
// The tolerant stages run on the event loop under a work budget (MATCH_WORK_BUDGET line comparisons, each a cached key lookup): a file
// of 150,000 identical lines and an old_text of 2,000 of them held the loop 48 s before. Past the budget the
// search stops: with two places already found it answers them (MULTIPLE_MATCHES, a count that is a lower
// bound), else TIMEOUT, having changed nothing (docs/operations.md, "Work off the main thread").
import { E } from '../errors.js';
import {
  buildLineTable,
  lineContent,
  lineEnd,
  lineIndexAt,
  lineStart,
  splitModelLines,
  type LineTable,
  type ModelLines,
} from './text.js';
import {
  LINE_LEVELS,
  indentWidth,
  lineKey,
  longestWord,
  type LineKey,
  type LineLevel,
} from './normalize.js';

export type MatchStage = 'exact' | 'line_endings' | LineLevel;

/** A match on characters (exact and line_endings stages): any substring, partial lines included. */
export interface RangeMatch {
  kind: 'range';
  start: number;
  end: number;
}

/** A match on whole lines (tolerant stages). */
export interface BlockMatch {
  kind: 'block';
  level: LineLevel;
  /** First and last file line of the block (0-based, inclusive). */
  first: number;
  last: number;
  start: number;
  end: number;
  /** For each line of old_text, the file line it matched, or -1 for a blank line the file does not have. */
  align: Int32Array;
  /** File indentation minus the model's, in columns (indentation-tolerant levels). */
  delta: number;
  tabWidth: number;
  /** The model's first line came without its indentation (copied from the middle of a line's start). */
  flushFirst: boolean;
  /** Blank lines differ between old_text and the file. */
  blankLines: boolean;
}

export type Candidate = RangeMatch | BlockMatch;

export interface StageMatches {
  stage: MatchStage;
  /** Unique mode: up to `limit` candidates, possibly overlapping. All mode: every non-overlapping match. */
  candidates: Candidate[];
  /** How many candidates the stage saw (unique mode counts overlapping ones). */
  total: number;
  /** The work budget ran out while counting: `total` is a lower bound. */
  incomplete?: boolean;
}

/** Line comparisons the tolerant stages may spend on one old_text (well under a tenth of a second idle). */
export const MATCH_WORK_BUDGET = 100_000;

/** Counts the comparisons of one tolerant search; throws BudgetSpent once they pass the limit. */
class WorkBudget {
  spent = 0;
  constructor(readonly limit: number) {}
  spend(n: number): void {
    this.spent += n;
    if (this.spent > this.limit) throw new BudgetSpent();
  }
}

class BudgetSpent extends Error {}

export interface MatchOptions {
  /** replace_all: every non-overlapping match of the first stage that has any. */
  all: boolean;
  /** Candidates kept in unique mode (enough to name their lines in MULTIPLE_MATCHES). */
  limit: number;
  /** Line comparisons the tolerant stages may spend (MATCH_WORK_BUDGET). */
  budget?: number;
}

/** Builds the line table of a text at most once, however many tolerant searches run on it. */
export class LineTableCache {
  #text: string | null = null;
  #table: LineTable | null = null;
  get(text: string): LineTable {
    if (this.#table === null || this.#text !== text) {
      this.#table = buildLineTable(text);
      this.#text = text;
    }
    return this.#table;
  }
}

export function findMatches(text: string, oldText: string, opts: MatchOptions, tables: LineTableCache): StageMatches | null {
  const exact = substringMatches(text, oldText, opts, 'exact', null);
  if (exact) return exact;
  const endings = lineEndingMatches(text, oldText, opts);
  if (endings) return endings;
  return lineMatches(tables.get(text), oldText, opts);
}

// --- exact and line-ending stages: substrings, found with indexOf so a 50 MiB file costs one scan ---

function substringMatches(
  haystack: string,
  needle: string,
  opts: MatchOptions,
  stage: MatchStage,
  toOriginal: ((p: number) => number) | null,
): StageMatches | null {
  const found: Candidate[] = [];
  let total = 0;
  let lastEnd = 0;
  const push = (p: number) => {
    let start = toOriginal ? toOriginal(p) : p;
    const end = toOriginal ? toOriginal(p + needle.length) : p + needle.length;
    // Never split a CRLF pair: a match that starts on its '\n' takes the '\r' with it (unless that
    // '\r' ends the previous replace_all match). The line-ending stage's mapping already does this.
    if (stage === 'exact' && start > lastEnd && haystack.charCodeAt(start) === 10 && haystack.charCodeAt(start - 1) === 13) start--;
    if (opts.all) lastEnd = end;
    found.push({ kind: 'range', start, end });
  };
  if (opts.all) {
    for (let p = haystack.indexOf(needle); p !== -1; p = haystack.indexOf(needle, p + needle.length)) {
      push(p);
      total++;
    }
  } else {
    for (let p = haystack.indexOf(needle); p !== -1; p = haystack.indexOf(needle, p + 1)) {
      if (found.length < opts.limit) push(p);
      total++;
    }
  }
  return total === 0 ? null : { stage, candidates: found, total };
}

function lineEndingMatches(text: string, oldText: string, opts: MatchOptions): StageMatches | null {
  const needle = oldText.replaceAll('\r\n', '\n');
  if (!needle.includes('\n')) return null;
  const fileHasCrlf = text.includes('\r\n');
  if (!fileHasCrlf && needle === oldText) return null;
  if (!fileHasCrlf) return substringMatches(text, needle, opts, 'line_endings', null);
  // Search an LF copy of the file; removed[k] is where the k-th dropped '\r' would sit in that copy.
  const removed: number[] = [];
  for (let r = text.indexOf('\r\n'); r !== -1; r = text.indexOf('\r\n', r + 2)) removed.push(r - removed.length);
  const lf = text.replaceAll('\r\n', '\n');
  const toOriginal = (p: number) => {
    let lo = 0;
    let hi = removed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((removed[mid] as number) < p) lo = mid + 1;
      else hi = mid;
    }
    return p + lo;
  };
  return substringMatches(lf, needle, opts, 'line_endings', toOriginal);
}

// --- tolerant stages: whole lines ---

/** old_text as lines with their keys at every level. */
interface OldLines {
  model: ModelLines;
  keys: Record<LineLevel, LineKey[]>;
}

function oldLinesOf(oldText: string): OldLines {
  const model = splitModelLines(oldText);
  const keys = {} as Record<LineLevel, LineKey[]>;
  for (const level of LINE_LEVELS) keys[level] = model.lines.map((l) => lineKey(l, level));
  return { model, keys };
}

/** Keys of file lines, computed on demand: only lines near an anchor are ever looked at. */
class FileKeys {
  readonly #cache: Record<LineLevel, Map<number, LineKey>> = {
    trailing_whitespace: new Map(),
    indentation: new Map(),
    unicode: new Map(),
  };
  constructor(
    readonly table: LineTable,
    readonly budget: WorkBudget,
  ) {}
  get count(): number {
    return this.table.count;
  }
  key(i: number, level: LineLevel): LineKey {
    this.budget.spend(1);
    const cache = this.#cache[level];
    let k = cache.get(i);
    if (k === undefined) {
      k = lineKey(lineContent(this.table, i), level);
      cache.set(i, k);
    }
    return k;
  }
}

interface Anchor {
  /** Index of the old line the anchor belongs to. */
  j: number;
  /** File lines that may match that old line (ascending), or null for "every line". */
  lines: number[] | null;
}

/**
 * Where to look: lines that contain the rarest of old_text's longest ASCII words. Every tolerant match
 * of an old line contains its ASCII words verbatim, so the search costs a few indexOf scans.
 */
function findAnchor(t: LineTable, old: OldLines, cap: number): Anchor | null {
  const folded = old.keys.unicode;
  const words: Array<{ word: string; j: number }> = [];
  folded.forEach((k, j) => {
    const word = longestWord(k.key);
    if (word.length >= 2 && !words.some((w) => w.word === word)) words.push({ word, j });
  });
  if (words.length === 0) {
    let best = -1;
    folded.forEach((k, j) => {
      if (k.key !== '' && (best === -1 || k.key.length > (folded[best] as LineKey).key.length)) best = j;
    });
    return best === -1 ? null : { j: best, lines: null };
  }
  words.sort((a, b) => b.word.length - a.word.length);
  let chosen: { word: string; j: number; lines: number[] } | null = null;
  for (const w of words.slice(0, 3)) {
    const lines: number[] = [];
    for (let p = t.text.indexOf(w.word); p !== -1; p = t.text.indexOf(w.word, p + 1)) {
      const line = lineIndexAt(t, p);
      if (lines[lines.length - 1] !== line) lines.push(line);
      // More places than the budget could ever verify: this word cannot anchor (lineMatches refuses).
      if (lines.length > cap) break;
      // Skip to the next line: one candidate per line is enough.
      p = Math.max(p, (t.starts[line + 1] as number) - 1 - w.word.length);
    }
    if (chosen === null || lines.length < chosen.lines.length) chosen = { ...w, lines };
    if (lines.length <= 1) break;
  }
  return chosen && { j: chosen.j, lines: chosen.lines };
}

function lineMatches(t: LineTable, oldText: string, opts: MatchOptions): StageMatches | null {
  const old = oldLinesOf(oldText);
  const budget = new WorkBudget(opts.budget ?? MATCH_WORK_BUDGET);
  const anchor = findAnchor(t, old, budget.limit);
  if (anchor === null) return null;
  // Each place costs at least one comparison: past the budget before the first one, refuse at once.
  const places = anchor.lines?.length ?? t.count;
  if (places > budget.limit) return budgetSpent([], 'trailing_whitespace', opts, budget, places);
  const fk = new FileKeys(t, budget);
  const anchorLines = anchor.lines ?? Array.from({ length: t.count }, (_, i) => i);
  const passes = [false, true].flatMap((loose) => LINE_LEVELS.map((level) => ({ loose, level })));
  // Blocks whose lines match but whose indentation does not shift by one offset: never applied, but as
  // close to old_text as a match can be (a rival, below).
  let near: BlockMatch[] = [];
  let found: BlockMatch[] = [];
  let stage: LineLevel = 'trailing_whitespace';
  const blocksOf = (loose: boolean, level: LineLevel): BlockMatch[] => {
    const blocks: BlockMatch[] = [];
    found = blocks;
    stage = level;
    const seen = new Set<string>();
    for (const line of anchorLines) {
      const m = loose ? verifyLoose(fk, line, anchor.j, old, level, near) : verifyStrict(fk, line - anchor.j, old, level, near);
      if (m === null) continue;
      const id = `${m.first}:${m.last}`;
      if (seen.has(id)) continue;
      seen.add(id);
      blocks.push(m);
    }
    return blocks.sort((a, b) => a.first - b.first || a.last - b.last);
  };
  try {
    for (let p = 0; p < passes.length; p++) {
      const { loose, level } = passes[p] as { loose: boolean; level: LineLevel };
      near = [];
      const blocks = blocksOf(loose, level);
      if (blocks.length === 0) continue;
      if (opts.all) {
        const kept: BlockMatch[] = [];
        for (const b of blocks) if (kept.length === 0 || b.first > (kept[kept.length - 1] as BlockMatch).last) kept.push(b);
        return { stage: level, candidates: kept, total: kept.length };
      }
      if (blocks.length === 1) {
        // Unique at this pass, but a looser pass may fit another region as well, or another region may match
        // every line with an uneven indentation: when that region is no further from old_text, the model's
        // text does not say which one it meant, and the first pass to find one must not decide alone.
        const chosen = blocks[0] as BlockMatch;
        const bar = misfit(t, chosen, old, budget);
        const rivals: BlockMatch[] = [];
        const consider = (b: BlockMatch) => {
          const apart = b.last < chosen.first || b.first > chosen.last;
          if (apart && misfit(t, b, old, budget) <= bar && !rivals.some((r) => r.first <= b.last && b.first <= r.last)) rivals.push(b);
        };
        near.forEach(consider);
        for (const later of passes.slice(p + 1)) {
          near = [];
          blocksOf(later.loose, later.level).forEach(consider);
          near.forEach(consider);
        }
        if (rivals.length > 0) {
          const all = [chosen, ...rivals].sort((a, b) => a.first - b.first);
          return { stage: level, candidates: all.slice(0, opts.limit), total: all.length };
        }
      }
      return { stage: level, candidates: blocks.slice(0, opts.limit), total: blocks.length };
    }
    return null;
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
    return budgetSpent(found, stage, opts, budget, anchorLines.length);
  }
}

/** The answer when the budget ran out: the places found so far if there are two, else TIMEOUT. */
function budgetSpent(found: BlockMatch[], stage: LineLevel, opts: MatchOptions, budget: WorkBudget, places: number): StageMatches {
  // As in a finished pass, unique mode counts overlapping places; replace_all needs them all, so it cannot go on.
  if (!opts.all && found.length >= 2) {
    const sorted = [...found].sort((a, b) => a.first - b.first || a.last - b.last);
    return { stage, candidates: sorted.slice(0, opts.limit), total: sorted.length, incomplete: true };
  }
  throw E.looseMatchBudget(places, budget.limit, stage);
}

/**
 * How far a block is from old_text: for each line, the kinds of difference from the model's line (trailing
 * whitespace, indentation, other characters such as quotes), plus one for each model line it has no line for
 * and each file line inside it that no model line stands for (blank lines one side left out).
 */
function misfit(t: LineTable, m: BlockMatch, old: OldLines, budget: WorkBudget): number {
  budget.spend(m.align.length);
  let n = 0;
  let aligned = 0;
  m.align.forEach((f, j) => {
    if (f < 0) {
      n++;
      return;
    }
    aligned++;
    n += differenceKinds(lineContent(t, f), old.model.lines[j] as string);
  });
  return n + (m.last - m.first + 1 - aligned);
}

function differenceKinds(a: string, b: string): number {
  if (a === b) return 0;
  const ta = a.trimEnd();
  const tb = b.trimEnd();
  let kinds = a.slice(ta.length) === b.slice(tb.length) ? 0 : 1;
  const ca = ta.trimStart();
  const cb = tb.trimStart();
  if (ta.length - ca.length !== tb.length - cb.length || ta.slice(0, ta.length - ca.length) !== tb.slice(0, tb.length - cb.length)) kinds++;
  if (ca !== cb) kinds++;
  return kinds;
}

function verifyStrict(fk: FileKeys, first: number, old: OldLines, level: LineLevel, near: BlockMatch[]): BlockMatch | null {
  const keys = old.keys[level];
  const k = keys.length;
  if (first < 0 || first + k > fk.count) return null;
  for (let j = 0; j < k; j++) if (fk.key(first + j, level).key !== (keys[j] as LineKey).key) return null;
  const align = new Int32Array(k);
  for (let j = 0; j < k; j++) align[j] = first + j;
  return finishBlock(fk, align, old, level, false, near);
}

/** Like verifyStrict, but blank lines may be missing on either side (a model dropped or added one). */
function verifyLoose(fk: FileKeys, line: number, j0: number, old: OldLines, level: LineLevel, near: BlockMatch[]): BlockMatch | null {
  const keys = old.keys[level];
  const k = keys.length;
  const key = (j: number) => (keys[j] as LineKey).key;
  if (key(j0) === '' || fk.key(line, level).key !== key(j0)) return null;
  const blank = (f: number) => fk.key(f, level).key === '';
  const align = new Int32Array(k).fill(-1);
  align[j0] = line;
  let f = line - 1;
  for (let j = j0 - 1; j >= 0; j--) {
    if (key(j) === '') {
      if (f >= 0 && blank(f)) align[j] = f--;
      continue;
    }
    while (f >= 0 && blank(f)) f--;
    if (f < 0 || fk.key(f, level).key !== key(j)) return null;
    align[j] = f--;
  }
  f = line + 1;
  for (let j = j0 + 1; j < k; j++) {
    if (key(j) === '') {
      if (f < fk.count && blank(f)) align[j] = f++;
      continue;
    }
    while (f < fk.count && blank(f)) f++;
    if (f >= fk.count || fk.key(f, level).key !== key(j)) return null;
    align[j] = f++;
  }
  return finishBlock(fk, align, old, level, true, near);
}

/** The block of an alignment, or null; one whose indentation fits no single offset goes to `near`. */
function finishBlock(fk: FileKeys, align: Int32Array, old: OldLines, level: LineLevel, loose: boolean, near: BlockMatch[]): BlockMatch | null {
  let first = -1;
  let last = -1;
  let alignedCount = 0;
  for (const f of align) {
    if (f < 0) continue;
    if (first === -1) first = f;
    last = f;
    alignedCount++;
  }
  if (first === -1) return null;
  const blankLines = loose && (alignedCount !== align.length || last - first + 1 !== align.length);
  if (loose && !blankLines) return null;
  let fit: IndentFit | null = { delta: 0, tabWidth: 4, flushFirst: false };
  if (level !== 'trailing_whitespace') {
    const pairs: IndentPair[] = [];
    align.forEach((f, j) => {
      const o = old.keys[level][j] as LineKey;
      if (f >= 0 && o.key !== '') pairs.push({ j, model: o.indent, file: fk.key(f, level).indent });
    });
    fit = fitIndentation(pairs);
  }
  const t = fk.table;
  const block: BlockMatch = { kind: 'block', level, first, last, start: lineStart(t, first), end: lineEnd(t, last), align, blankLines, ...(fit ?? { delta: 0, tabWidth: 4, flushFirst: false }) };
  if (fit === null) {
    near.push(block);
    return null;
  }
  return block;
}

interface IndentPair {
  j: number;
  model: string;
  file: string;
}

interface IndentFit {
  delta: number;
  tabWidth: number;
  flushFirst: boolean;
}

/**
 * The uniform indentation offset between the model's lines and the file's, trying common tab widths
 * (one that makes the offset zero wins). The first line may come flush left when the model copied it
 * from after its indentation.
 */
function fitIndentation(pairs: IndentPair[]): IndentFit | null {
  if (pairs.length === 0 || pairs.every((p) => p.model === p.file)) return { delta: 0, tabWidth: 4, flushFirst: false };
  const hasTab = pairs.some((p) => p.model.includes('\t') || p.file.includes('\t'));
  const head = pairs[0] as IndentPair;
  const flushCandidate = head.j === 0 && head.model === '' && head.file !== '' && pairs.length > 1;
  let found: IndentFit | null = null;
  for (const tabWidth of hasTab ? [4, 8, 2] : [4]) {
    const offsets = pairs.map((p) => indentWidth(p.file, tabWidth) - indentWidth(p.model, tabWidth));
    const ruling = flushCandidate ? offsets.slice(1) : offsets;
    const delta = ruling[0] as number;
    if (!ruling.every((d) => d === delta)) continue;
    const fit = { delta, tabWidth, flushFirst: flushCandidate && offsets[0] !== delta };
    if (delta === 0) return fit;
    found ??= fit;
  }
  return found;
}
