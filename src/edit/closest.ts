// When old_text is nowhere: the closest region of the file and how it differs, so that a retry succeeds.
import { bigramSimilarity, hasUnicodeTypography, leadingWhitespace, lineKey, longestWord, trimTrailing, unicodeFold } from './normalize.js';
import { buildLineTable, lineContent, lineIndexAt, lineTerminator, splitModelLines, type LineTable } from './text.js';

export interface ClosestRegion {
  start_line: number;
  end_line: number;
  similarity: number;
  /** The region's lines as `12: text`, one per line. */
  lines: string;
}

export interface NoMatchDiagnosis {
  closest: ClosestRegion | null;
  differences: string[];
}

const MAX_WORDS = 6;
const MAX_HITS_PER_WORD = 500;
const MAX_STARTS = 20;
const WINDOW = 3;
const MAX_REGION_LINES = 40;
const MAX_LINE_CHARS = 300;

/** Loose comparison form of a line: folded typography, no indentation, no trailing whitespace. */
function loose(line: string): string {
  return lineKey(line, 'unicode').key;
}

/**
 * Characters the line comparisons of one diagnosis may read (about a tenth of a second): a 5 MB file and a
 * 1 MB old_text of long lines cost 8.5 s on the event loop before. Past it the search stops without naming
 * a region (the NO_MATCH answer then only names what old_text itself gets wrong).
 */
export const DIAGNOSE_CHAR_BUDGET = 3_000_000;

class BudgetSpent extends Error {}

// One diagnosis runs synchronously at a time, so its count can live here.
let charsLeft = DIAGNOSE_CHAR_BUDGET;

function lineSimilarity(model: string, file: string): number {
  charsLeft -= model.length + file.length;
  if (charsLeft < 0) throw new BudgetSpent();
  if (model === file) return 1;
  const a = loose(model);
  const b = loose(file);
  if (a === b) return 0.97;
  return 0.95 * bigramSimilarity(a, b);
}

/**
 * Bounded search: lines containing old_text's longest words vote for where old_text would start; the
 * best few starts are scored line by line (each old line against the file lines a few lines around
 * where it should be, so a dropped blank line does not spoil the score).
 */
export function diagnoseNoMatch(text: string, oldText: string): NoMatchDiagnosis {
  charsLeft = DIAGNOSE_CHAR_BUDGET;
  try {
    return diagnose(text, oldText);
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
    return { closest: null, differences: modelArtifacts(splitModelLines(oldText).lines) };
  }
}

function diagnose(text: string, oldText: string): NoMatchDiagnosis {
  const t = buildLineTable(text);
  const old = splitModelLines(oldText).lines;
  const keys = old.map(loose);
  const votes = new Map<number, number>();
  const words = keys
    .map((k, j) => ({ word: longestWord(k), j }))
    .filter((w) => w.word.length >= 2)
    .sort((a, b) => b.word.length - a.word.length)
    .slice(0, MAX_WORDS);
  for (const { word, j } of words) {
    let hits = 0;
    let lastLine = -1;
    for (let p = text.indexOf(word); p !== -1 && hits < MAX_HITS_PER_WORD; p = text.indexOf(word, p + word.length)) {
      const line = lineIndexAt(t, p);
      if (line === lastLine) continue;
      lastLine = line;
      hits++;
      const sim = lineSimilarity(old[j] as string, lineContent(t, line));
      if (sim >= 0.4) votes.set(line - j, (votes.get(line - j) ?? 0) + sim);
    }
  }
  const starts = [...votes.entries()].sort((a, b) => b[1] - a[1]).slice(0, MAX_STARTS).map(([s]) => s);
  let best: { score: number; pairs: Array<{ j: number; f: number; sim: number }> } | null = null;
  for (const s of starts) {
    const scored = scoreAt(t, old, s);
    if (scored && (best === null || scored.score > best.score)) best = scored;
  }
  if (best === null || best.score < 0.2) return { closest: null, differences: modelArtifacts(old) };
  const matched = best.pairs.filter((p) => p.sim >= 0.5);
  const first = Math.min(...(matched.length ? matched : best.pairs).map((p) => p.f));
  const last = Math.max(...(matched.length ? matched : best.pairs).map((p) => p.f));
  const shownLast = Math.min(last, first + MAX_REGION_LINES - 1);
  const width = String(shownLast + 1).length;
  const lines: string[] = [];
  for (let f = first; f <= shownLast; f++) {
    const content = lineContent(t, f);
    const shown = content.length > MAX_LINE_CHARS ? `${content.slice(0, MAX_LINE_CHARS)}…` : content;
    lines.push(`${String(f + 1).padStart(width)}: ${shown}`);
  }
  return {
    closest: { start_line: first + 1, end_line: last + 1, similarity: Math.round(best.score * 100) / 100, lines: lines.join('\n') },
    differences: differencesOf(t, oldText, old, best.pairs, first, last),
  };
}

function scoreAt(t: LineTable, old: string[], start: number) {
  const pairs: Array<{ j: number; f: number; sim: number }> = [];
  let total = 0;
  let counted = 0;
  let floor = -1;
  old.forEach((line, j) => {
    if (loose(line) === '') return;
    counted++;
    let bestSim = 0;
    let bestF = -1;
    const lo = Math.max(0, floor + 1, start + j - WINDOW);
    const hi = Math.min(t.count - 1, start + j + WINDOW);
    for (let f = lo; f <= hi; f++) {
      const sim = lineSimilarity(line, lineContent(t, f));
      if (sim > bestSim) {
        bestSim = sim;
        bestF = f;
      }
    }
    total += bestSim;
    if (bestF >= 0) {
      pairs.push({ j, f: bestF, sim: bestSim });
      if (bestSim >= 0.5) floor = bestF;
    }
  });
  if (counted === 0 || pairs.length === 0) return null;
  return { score: total / counted, pairs };
}

/** What separates old_text from the region, in the words a model can act on. */
function differencesOf(
  t: LineTable,
  oldText: string,
  old: string[],
  pairs: Array<{ j: number; f: number; sim: number }>,
  first: number,
  last: number,
): string[] {
  const found = new Set<string>();
  for (const { j, f } of pairs) {
    const m = old[j] as string;
    const fl = lineContent(t, f);
    if (m === fl) continue;
    if (trimTrailing(m) === trimTrailing(fl)) {
      found.add('trailing whitespace');
      continue;
    }
    const mBody = trimTrailing(m).slice(leadingWhitespace(m).length);
    const fBody = trimTrailing(fl).slice(leadingWhitespace(fl).length);
    const sameText = mBody === fBody || unicodeFold(mBody) === unicodeFold(fBody);
    // A flush-left line whose text differs is a partial or changed line, not an indentation problem.
    if (leadingWhitespace(m) !== leadingWhitespace(fl) && (sameText || leadingWhitespace(m) !== '')) found.add('indentation');
    if (trimTrailing(m) !== m || trimTrailing(fl) !== fl) found.add('trailing whitespace');
    if (mBody === fBody) continue;
    if (sameText) {
      const a = hasUnicodeTypography(mBody);
      const b = hasUnicodeTypography(fBody);
      if (a.quotes || b.quotes) found.add('quotes');
      if (a.dashes || b.dashes) found.add('dashes');
      if (a.spaces || b.spaces) found.add('non-breaking spaces');
      if (a.other || b.other) found.add('unicode normalization');
      continue;
    }
    const fm = unicodeFold(mBody);
    const ff = unicodeFold(fBody);
    if (fm.length > 0 && ff.includes(fm)) found.add('partial line');
    else found.add('content');
  }
  // Line endings: the region's against old_text's.
  const oldCrlf = oldText.includes('\r\n');
  const oldLf = /(^|[^\r])\n/.test(oldText);
  let fileCrlf = false;
  let fileLf = false;
  for (let f = first; f < last; f++) {
    if (lineTerminator(t, f) === '\r\n') fileCrlf = true;
    else fileLf = true;
  }
  if ((oldCrlf && fileLf && !fileCrlf) || (oldLf && fileCrlf && !fileLf)) found.add('line endings');
  // Blank lines inside the region against those of old_text.
  const blanks = (lines: string[]) => lines.filter((l) => l.trim() === '').length;
  const regionLines: string[] = [];
  for (let f = first; f <= last; f++) regionLines.push(lineContent(t, f));
  const inner = old.slice(old.findIndex((l) => l.trim() !== ''), old.length - [...old].reverse().findIndex((l) => l.trim() !== ''));
  if (blanks(inner) !== blanks(regionLines)) found.add('blank lines');
  if (pairs.length < old.filter((l) => l.trim() !== '').length) found.add('content');
  for (const a of modelArtifacts(old)) found.add(a);
  return [...found];
}

/** Artifacts of how the model saw the file, worth naming even without a closest region. */
function modelArtifacts(old: string[]): string[] {
  const numbered = old.filter((l) => /^\s*\d+(: |\t|\s*[|│→] ?)/.test(l)).length;
  return numbered > 0 && numbered * 2 >= old.length ? ['line number prefixes'] : [];
}
