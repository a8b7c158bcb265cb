// Writing the replacement the file's way: its line endings, its indentation, its unchanged lines byte for byte.
import { diffArrays, type ArrayChange } from 'diff';
import type { BlockMatch, RangeMatch } from './match.js';
import { foldChar, indentWidth, leadingWhitespace, trimTrailing } from './normalize.js';
import {
  blockEnding,
  lineContent,
  lineEnd,
  lineStart,
  lineTerminator,
  splitModelLines,
  toFileEndings,
  type LineTable,
  type ModelLines,
} from './text.js';

/** text[start, end) becomes `text`. */
export interface Replacement {
  start: number;
  end: number;
  text: string;
}

/** Exact and line-ending matches: new_text as given, with the file's line endings. */
export function rangeReplacement(text: string, m: RangeMatch, newText: string): Replacement {
  return { start: m.start, end: m.end, text: toFileEndings(newText, text, m.start, m.end) };
}

/**
 * A whole-line match. The model's own change (old_text -> new_text, diffed line by line) is replayed
 * on the file's lines: lines the model kept come from the file verbatim (trailing spaces, curly quotes,
 * tabs and all), changed and new lines are re-indented by the offset the match observed and written
 * with the block's line ending.
 */
export function blockReplacement(t: LineTable, m: BlockMatch, oldModel: ModelLines, newText: string): Replacement {
  let start = lineStart(t, m.first);
  let end = lineEnd(t, m.last);
  if (newText === '' && oldModel.trailingNewline) {
    // Deleting whole lines takes a terminator with them: the block's own, else the one before it.
    if (lineTerminator(t, m.last) !== '') end = Math.min(t.starts[m.last + 1] as number, t.text.length);
    else if (m.first > 0) start = lineEnd(t, m.first - 1);
    return { start, end, text: '' };
  }
  const newLines = newText === '' ? [] : splitModelLines(newText).lines;
  const out = replayLines(t, m, oldModel.lines, newLines);
  const eol = blockEnding(t, m.first, m.last);
  let text = '';
  out.forEach((line, i) => {
    text += line.text;
    if (i < out.length - 1) text += line.fileLine >= 0 && line.fileLine < m.last ? lineTerminator(t, line.fileLine) : eol;
  });
  return { start, end, text };
}

interface OutLine {
  text: string;
  /** The file line emitted verbatim, or -1 for a line written from new_text. */
  fileLine: number;
  /** A line new_text adds (not one it rewrites in place). */
  inserted?: boolean;
}

function lineChanges(oldLines: string[], newLines: string[]): ArrayChange<string>[] {
  const changes = diffArrays(oldLines, newLines, { maxEditLength: 2000 });
  if (changes) return changes;
  // Too different to diff cheaply: keep the common head and tail, replace the middle.
  let head = 0;
  while (head < oldLines.length && head < newLines.length && oldLines[head] === newLines[head]) head++;
  let tail = 0;
  while (
    tail < oldLines.length - head &&
    tail < newLines.length - head &&
    oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
  ) tail++;
  const part = (value: string[], added: boolean, removed: boolean) => ({ value, added, removed, count: value.length });
  return [
    part(oldLines.slice(0, head), false, false),
    part(oldLines.slice(head, oldLines.length - tail), false, true),
    part(newLines.slice(head, newLines.length - tail), true, false),
    part(oldLines.slice(oldLines.length - tail), false, false),
  ].filter((c) => c.count > 0);
}

function replayLines(t: LineTable, m: BlockMatch, oldLines: string[], newLines: string[]): OutLine[] {
  const out: OutLine[] = [];
  const indent = indenter(t, m);
  let nextFile = m.first;
  // A blank file line the model left out survives when a neighbour it sits next to survives, unless
  // it sits inside a region the model rewrote into a different number of lines.
  let prevKept = true;
  const visitOld = (j: number, mode: 'keep' | 'delete' | 'replace', replacement = '', rewritten = false) => {
    const f = m.align[j] as number;
    if (f < 0) {
      if (mode === 'replace') out.push({ text: indent.fresh(replacement), fileLine: -1 });
      return;
    }
    const kept = mode !== 'delete';
    // Right after lines new_text adds, the file's skipped blank lines are left out: there the model
    // wrote the region itself, blank lines included, and keeping the file's too doubled them.
    const afterFresh = out.length > 0 && (out[out.length - 1] as OutLine).inserted === true;
    if (!rewritten && !afterFresh && (prevKept || kept)) for (let g = nextFile; g < f; g++) out.push({ text: lineContent(t, g), fileLine: g });
    nextFile = f + 1;
    prevKept = kept;
    if (mode === 'keep') out.push({ text: lineContent(t, f), fileLine: f });
    else if (mode === 'replace') out.push({ text: indent.paired(replacement, oldLines[j] as string, lineContent(t, f)), fileLine: -1 });
  };

  const changes = lineChanges(oldLines, newLines);
  let j = 0;
  for (let c = 0; c < changes.length; c++) {
    const ch = changes[c] as ArrayChange<string>;
    if (!ch.added && !ch.removed) {
      for (let n = 0; n < ch.count; n++) visitOld(j++, 'keep');
      continue;
    }
    // A run of removed and added lines: pair them up in order, then delete or insert the rest.
    const removed: string[] = [];
    const added: string[] = [];
    for (; c < changes.length; c++) {
      const run = changes[c] as ArrayChange<string>;
      if (!run.added && !run.removed) break;
      (run.added ? added : removed).push(...run.value);
    }
    c--;
    const rewrite = removed.length !== added.length;
    removed.forEach((_, n) => {
      visitOld(j++, n < added.length ? 'replace' : 'delete', added[n], rewrite && n > 0);
    });
    for (let n = removed.length; n < added.length; n++) out.push({ text: indent.fresh(added[n] as string), fileLine: -1, inserted: true });
  }
  return out;
}

/** Indentation for lines written from new_text, in the file's style. */
function indenter(t: LineTable, m: BlockMatch) {
  const byWidth = new Map<number, string>();
  let tabs: boolean | null = null;
  for (let f = m.first; f <= m.last; f++) {
    const line = lineContent(t, f);
    const ind = leadingWhitespace(line);
    if (ind === '' || ind.length === line.length) continue;
    tabs ??= ind.startsWith('\t');
    const w = indentWidth(ind, m.tabWidth);
    if (!byWidth.has(w)) byWidth.set(w, ind);
  }
  const useTabs = () => (tabs ??= fileUsesTabs(t));
  const render = (modelIndent: string): string => {
    if (m.level === 'trailing_whitespace') return modelIndent;
    const w = Math.max(0, indentWidth(modelIndent, m.tabWidth) + m.delta);
    if (w === 0) return '';
    const seen = byWidth.get(w);
    if (seen !== undefined) return seen;
    return useTabs() ? '\t'.repeat(Math.floor(w / m.tabWidth)) + ' '.repeat(w % m.tabWidth) : ' '.repeat(w);
  };
  return {
    fresh(line: string): string {
      const ind = leadingWhitespace(line);
      if (ind.length === line.length) return line.trim() === '' ? '' : line;
      return render(ind) + line.slice(ind.length);
    },
    paired(line: string, oldLine: string, fileLine: string): string {
      const nInd = leadingWhitespace(line);
      const oInd = leadingWhitespace(oldLine);
      const fInd = leadingWhitespace(fileLine);
      if (nInd.length === line.length) return '';
      const ind = nInd === oInd ? fInd : render(nInd);
      const nBody = trimTrailing(line);
      return ind + transferContent(oldLine.slice(oInd.length), fileLine.slice(fInd.length), nBody.slice(nInd.length)) + line.slice(nBody.length);
    },
  };
}

/**
 * A changed line keeps the file's characters where the model left them alone: when the model's old
 * line and the file's line agree character by character up to typography (curly quotes, dashes, NBSP),
 * the common head and tail of old -> new are taken from the file.
 */
function transferContent(oldBody: string, fileBody: string, newBody: string): string {
  const o = trimTrailing(oldBody);
  const f = trimTrailing(fileBody);
  if (o === f) return newBody;
  // Folded offset of every character boundary; the folded texts must agree (… counts as three dots).
  const boundaries = (s: string) => {
    const at = new Array<number>(s.length + 1);
    let folded = '';
    for (let i = 0; i < s.length; i++) {
      at[i] = folded.length;
      folded += foldChar(s[i] as string);
    }
    at[s.length] = folded.length;
    return { at, folded };
  };
  const ob = boundaries(o);
  const fb = boundaries(f);
  if (ob.folded !== fb.folded) return newBody;
  const fileIndex = new Map<number, number>();
  fb.at.forEach((pos, i) => {
    if (!fileIndex.has(pos)) fileIndex.set(pos, i);
  });
  let head = 0;
  while (head < o.length && head < newBody.length && o[head] === newBody[head]) head++;
  let tail = 0;
  while (tail < o.length - head && tail < newBody.length - head && o[o.length - 1 - tail] === newBody[newBody.length - 1 - tail]) tail++;
  // Shrink both to boundaries the file shares (never cut a file character's expansion in half).
  while (head > 0 && !fileIndex.has(ob.at[head] as number)) head--;
  while (tail > 0 && !fileIndex.has(ob.at[o.length - tail] as number)) tail--;
  const fHead = fileIndex.get(ob.at[head] as number) as number;
  const fTail = fileIndex.get(ob.at[o.length - tail] as number) as number;
  return f.slice(0, fHead) + newBody.slice(head, newBody.length - tail) + f.slice(fTail);
}

/** Whether the file indents with tabs, judged from its first few thousand indented lines. */
function fileUsesTabs(t: LineTable): boolean {
  let tabs = 0;
  let spaces = 0;
  for (let i = 0; i < t.count && tabs + spaces < 2000; i++) {
    const c = t.text.charCodeAt(t.starts[i] as number);
    if (c === 9) tabs++;
    else if (c === 32) spaces++;
  }
  return tabs > spaces;
}
