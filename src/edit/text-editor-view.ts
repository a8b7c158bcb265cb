// The answers of Anthropic's text editor tool (str_replace_based_edit_tool) worded as its reference implementation
// words them, since models are trained on those texts. Formatting only: no I/O.
import { ToolError } from '../errors.js';

/** Lines of context the reference shows around an edit. */
export const SNIPPET_LINES = 4;

/** Python's repr of a list of ints, as the reference prints ranges and line lists. */
const pyList = (xs: readonly number[]): string => `[${xs.join(', ')}]`;

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
    throw new ToolError('INVALID_PARAM', 'Invalid `view_range`. It should be a list of two integers.');
  }
  const [start, end] = viewRange as [number, number];
  const n = lines.length;
  if (start < 1 || start > n) {
    throw new ToolError('INVALID_PARAM', `Invalid \`view_range\`: ${pyList(viewRange)}. Its first element \`${start}\` should be within the range of lines of the file: ${pyList([1, n])}`);
  }
  if (end > n) {
    throw new ToolError('INVALID_PARAM', `Invalid \`view_range\`: ${pyList(viewRange)}. Its second element \`${end}\` should be smaller than the number of lines in the file: \`${n}\``);
  }
  if (end !== -1 && end < start) {
    throw new ToolError('INVALID_PARAM', `Invalid \`view_range\`: ${pyList(viewRange)}. Its second element \`${end}\` should be larger or equal than its first \`${start}\``);
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

export function fileExistsText(path: string): string {
  return `File already exists at: ${path}. Cannot overwrite files using command \`create\`.`;
}

export function pathMissingText(path: string): string {
  return `The path ${path} does not exist. Please provide a valid path.`;
}

export function directoryText(path: string): string {
  return `The path ${path} is a directory and only the \`view\` command can be used on directories`;
}

export function missingParameterText(parameter: 'file_text' | 'old_str' | 'new_str' | 'insert_line', command: string): string {
  return `Parameter \`${parameter}\` is required for command: ${command}`;
}

export function noMatchText(path: string, oldStr: string): string {
  return `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`;
}

export function multipleMatchesText(oldStr: string, lines: readonly number[]): string {
  return `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines ${pyList(lines)}. Please ensure it is unique`;
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

export function invalidInsertLineText(insertLine: number, lineCount: number): string {
  return `Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range of lines of the file: ${pyList([0, lineCount])}`;
}

export function undoneText(path: string, restoredContent: string): string {
  return `Last edit to ${path} undone successfully. ${viewText(path, restoredContent)}`;
}

export function noHistoryText(path: string): string {
  return `No edit history found for ${path}.`;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}
