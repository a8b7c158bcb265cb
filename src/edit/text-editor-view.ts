// The answers of Anthropic's text editor tool (str_replace_based_edit_tool) worded as its reference implementation
// words them, since models are trained on those texts. Formatting only: no I/O.
import { E } from '../errors.js';

/** Lines of context the reference shows around an edit. */
export const SNIPPET_LINES = 4;

/**
 * The file's lines. Unlike the reference (Python `split("\n")`), a final newline does not add an empty last line:
 * `cat -n` shows none, and line counts then agree with read_file's.
 */
export function editorLines(content: string): string[] {
  if (content === '') return [''];
  const lines = content.split('\n');
  if (content.endsWith('\n')) lines.pop();
  return lines;
}

/** Lines numbered as `cat -n` numbers them: the number right-aligned in 6 columns, a tab, the line. */
export function numberLines(lines: readonly string[], firstLine = 1): string {
  return lines.map((line, i) => `${String(i + firstLine).padStart(6)}\t${line}`).join('\n');
}

/**
 * `cat -n` of the content or of `viewRange` [start, end] (1-based, inclusive, end -1 for the last line). A bad range
 * throws INVALID_PARAM with the reference's own text.
 */
export function catN(content: string, viewRange?: readonly number[]): string {
  const lines = editorLines(content);
  if (viewRange === undefined) return numberLines(lines);
  if (viewRange.length !== 2 || !viewRange.every((n) => Number.isInteger(n))) {
    throw E.viewRangeNotPair();
  }
  const [start, end] = viewRange as [number, number];
  const n = lines.length;
  if (start < 1 || start > n) {
    throw E.viewRangeStartOutside(viewRange, start, n);
  }
  if (end > n) {
    throw E.viewRangeEndPastFile(viewRange, end, n);
  }
  if (end !== -1 && end < start) {
    throw E.viewRangeEndBeforeStart(viewRange, start, end);
  }
  return numberLines(lines.slice(start - 1, end === -1 ? undefined : end), start);
}

/** The `view` answer for a file. */
export function viewText(path: string, content: string, viewRange?: readonly number[]): string {
  return `Here's the result of running \`cat -n\` on ${path}:\n${catN(content, viewRange)}\n`;
}

export function createdText(path: string): string {
  return `File created successfully at: ${path}`;
}

/**
 * 1-based line where each occurrence of `oldStr` starts. The reference lists the lines that contain the whole
 * old_str, which is none for a multi-line old_str; the start lines say where to look in every case.
 */
export function occurrenceLines(content: string, oldStr: string): number[] {
  const out: number[] = [];
  if (oldStr === '') return out;
  let line = 1;
  let counted = 0;
  // Non-overlapping, as Python's str.count counts them.
  for (let at = content.indexOf(oldStr); at >= 0; at = content.indexOf(oldStr, at + oldStr.length)) {
    line += countNewlines(content.slice(counted, at));
    counted = at;
    out.push(line);
  }
  return out;
}

/**
 * The str_replace answer: a numbered snippet of the new content around the replacement. `offset` is where old_str
 * started in the old content (the text before it is unchanged, so its line is the same in the new content).
 */
export function strReplaceText(path: string, newContent: string, offset: number, newStr: string): string {
  const line0 = countNewlines(newContent.slice(0, offset));
  const start = Math.max(0, line0 - SNIPPET_LINES);
  const end = line0 + SNIPPET_LINES + countNewlines(newStr);
  const snippet = editorLines(newContent).slice(start, end + 1);
  return `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of ${path}:\n${numberLines(snippet, start + 1)}\nReview the changes and make sure they are as expected. Edit the file again if necessary.`;
}

/** The insert answer: the inserted lines with up to SNIPPET_LINES lines of the old content either side (lines as editorLines counts them). */
export function insertText(path: string, oldContent: string, insertLine: number, newStr: string): string {
  const lines = editorLines(oldContent);
  const snippet = [...lines.slice(Math.max(0, insertLine - SNIPPET_LINES), insertLine), ...newStr.split('\n'), ...lines.slice(insertLine, insertLine + SNIPPET_LINES)];
  return `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${numberLines(snippet, Math.max(1, insertLine - SNIPPET_LINES + 1))}\nReview the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.`;
}

export function undoneText(path: string, restoredContent: string): string {
  return `Last edit to ${path} undone successfully. ${viewText(path, restoredContent)}`;
}


function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}
