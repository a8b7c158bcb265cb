// How the tolerant edit stages compare a line of the file with a line the model sent.

/** The tolerant stages in cascade order; each also forgives what the ones before it forgive. */
export type LineLevel = 'trailing_whitespace' | 'indentation' | 'unicode';
export const LINE_LEVELS: readonly LineLevel[] = ['trailing_whitespace', 'indentation', 'unicode'];

const TRAILING_WS = /[ \t\f\v\r]+$/;
const LEADING_WS = /^[ \t]*/;

export function trimTrailing(line: string): string {
  return line.replace(TRAILING_WS, '');
}

export function leadingWhitespace(line: string): string {
  return (LEADING_WS.exec(line) as RegExpExecArray)[0];
}

// Typography a model straightens (or adds): quotes, dashes, exotic spaces, the ellipsis.
const UNICODE_MAP: Record<string, string> = {
  '\u2018': "'", '\u2019': "'", '\u201A': "'", '\u201B': "'", '\u2032': "'",
  '\u201C': '"', '\u201D': '"', '\u201E': '"', '\u201F': '"', '\u2033': '"',
  '\u2010': '-', '\u2011': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u2015': '-', '\u2212': '-',
  '\u00A0': ' ', '\u2007': ' ', '\u202F': ' ', '\u205F': ' ', '\u3000': ' ',
  '\u2000': ' ', '\u2001': ' ', '\u2002': ' ', '\u2003': ' ', '\u2004': ' ', '\u2005': ' ',
  '\u2006': ' ', '\u2008': ' ', '\u2009': ' ', '\u200A': ' ',
  '\u2026': '...',
};
const UNICODE_CHARS = /[\u2018\u2019\u201A\u201B\u2032\u201C\u201D\u201E\u201F\u2033\u2010-\u2015\u2212\u00A0\u2007\u202F\u205F\u3000\u2000-\u2006\u2008-\u200A\u2026]/g;
// eslint-disable-next-line no-control-regex
const ASCII_ONLY = /^[\x00-\x7F]*$/;

/** NFC plus plain-ASCII typography; ASCII lines (most code) pass through untouched. */
export function unicodeFold(line: string): string {
  if (ASCII_ONLY.test(line)) return line;
  return line.normalize('NFC').replace(UNICODE_CHARS, (c) => UNICODE_MAP[c] as string);
}

/** One character's fold, for aligning a model line with a file line character by character. */
export function foldChar(c: string): string {
  return UNICODE_MAP[c] ?? c;
}

export function hasUnicodeTypography(s: string): { quotes: boolean; dashes: boolean; spaces: boolean; other: boolean } {
  return {
    quotes: /[\u2018\u2019\u201A\u201B\u2032\u201C\u201D\u201E\u201F\u2033]/.test(s),
    dashes: /[\u2010-\u2015\u2212]/.test(s),
    spaces: /[\u00A0\u2007\u202F\u205F\u3000\u2000-\u2006\u2008-\u200A]/.test(s),
    other: s.normalize('NFC') !== s || s.includes('\u2026'),
  };
}

/** A line split the way a level compares it: indentation apart, content without trailing whitespace. */
export interface LineKey {
  /** What must be equal (includes the indentation at the trailing_whitespace level). */
  key: string;
  /** Leading whitespace as the level sees it (after unicode folding at the unicode level). */
  indent: string;
}

export function lineKey(line: string, level: LineLevel): LineKey {
  if (level === 'trailing_whitespace') {
    const key = trimTrailing(line);
    return { key, indent: leadingWhitespace(key) };
  }
  const folded = level === 'unicode' ? trimTrailing(unicodeFold(line)) : trimTrailing(line);
  const indent = leadingWhitespace(folded);
  return { key: folded.slice(indent.length), indent };
}

/** Columns an indentation occupies with tabs stopping every tabWidth columns. */
export function indentWidth(indent: string, tabWidth: number): number {
  let w = 0;
  for (let i = 0; i < indent.length; i++) {
    if (indent.charCodeAt(i) === 9) w += tabWidth - (w % tabWidth);
    else w++;
  }
  return w;
}

const WORD = /[A-Za-z0-9_]{2,}/g;

/** The longest ASCII word of a line: a substring every tolerant match of the line contains verbatim. */
export function longestWord(line: string): string {
  let best = '';
  for (const m of line.matchAll(WORD)) if (m[0].length > best.length) best = m[0];
  return best;
}

/** Dice coefficient over character bigrams (bounded), 0..1. */
export function bigramSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const x = a.length > 400 ? a.slice(0, 400) : a;
  const y = b.length > 400 ? b.slice(0, 400) : b;
  if (x.length < 2 || y.length < 2) return x === y ? 1 : 0;
  const counts = new Map<string, number>();
  for (let i = 0; i < x.length - 1; i++) {
    const g = x.slice(i, i + 2);
    counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  let common = 0;
  for (let i = 0; i < y.length - 1; i++) {
    const g = y.slice(i, i + 2);
    const c = counts.get(g);
    if (c) {
      common++;
      counts.set(g, c - 1);
    }
  }
  return (2 * common) / (x.length - 1 + y.length - 1);
}
