// Inserting whole lines after line N (text editor `insert`, edit_file's insert_line): the file's own line
// ending, its BOM kept in front, and no line glued to the one before it. Pure.

const BOM = '\uFEFF';

/** Lines of `text` as the text editor counts them: a final newline does not start another line. */
export function lineCount(text: string): number {
  const body = text.startsWith(BOM) ? text.slice(1) : text;
  if (body === '') return 1;
  const n = body.split('\n').length;
  return body.endsWith('\n') ? n - 1 : n;
}

/** The file's line ending: CRLF when its first line ends so, otherwise LF. */
function endingOf(text: string): string {
  const nl = text.indexOf('\n');
  return nl > 0 && text.charCodeAt(nl - 1) === 13 ? '\r\n' : '\n';
}

export interface Insertion {
  text: string;
  /** Offset in the new text where the inserted lines start. */
  at: number;
  /** The inserted text as written (with the file's line endings). */
  inserted: string;
}

/**
 * `newText` as whole lines after line `afterLine` (0 = the top; lineCount(text) = the end). The caller checks
 * the range. An empty file gets just the new lines.
 */
export function insertAfterLine(text: string, afterLine: number, newText: string): Insertion {
  const bom = text.startsWith(BOM) ? BOM : '';
  const body = bom ? text.slice(1) : text;
  const eol = endingOf(body);
  const lines = newText.replace(/\r\n/g, '\n').split('\n').join(eol);
  let inserted = lines.endsWith(eol) ? lines : lines + eol;
  let at = 0;
  for (let n = 0; n < afterLine; n++) {
    const nl = body.indexOf('\n', at);
    if (nl < 0) {
      at = body.length;
      break;
    }
    at = nl + 1;
  }
  // After a last line without a newline: end that line first, and leave the file without a final newline as it was.
  if (at === body.length && body.length > 0 && !body.endsWith('\n')) inserted = eol + inserted.slice(0, inserted.length - eol.length);
  return { text: bom + body.slice(0, at) + inserted + body.slice(at), at: bom.length + at, inserted };
}
