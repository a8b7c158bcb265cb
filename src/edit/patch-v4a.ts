// The V4A patch grammar of OpenAI's apply_patch (`*** Begin Patch` … `*** End Patch`), parsed the way codex's
// apply-patch crate parses it, plus the Responses API's per-file operations. Parsing only: see patch-apply.ts.
import { z } from 'zod';
import { E } from '../errors.js';

export interface UpdateChunk {
  /** The `@@ …` lines before the hunk, outermost first; each narrows where the hunk may apply. */
  changeContext?: string[];
  oldLines: string[];
  newLines: string[];
  /** `*** End of File` followed the hunk: its old lines must be the file's last lines. */
  isEndOfFile: boolean;
  /** 1-based line of the patch text where the hunk starts, for messages. */
  patchLine?: number;
}

export type PatchOp =
  | { type: 'add'; path: string; contents: string }
  | { type: 'delete'; path: string }
  | { type: 'update'; path: string; moveTo?: string; chunks: UpdateChunk[] };

const BEGIN_PATCH = '*** Begin Patch';
const END_PATCH = '*** End Patch';
const ADD_FILE = '*** Add File:';
const DELETE_FILE = '*** Delete File:';
const UPDATE_FILE = '*** Update File:';
const MOVE_TO = '*** Move to:';
const END_OF_FILE = '*** End of File';
const FILE_MARKERS = [ADD_FILE, DELETE_FILE, UPDATE_FILE, END_PATCH];

/** `<<EOF`, `<<'EOF'`, `<<"EOF"`, optionally after `apply_patch` (a shell heredoc pasted as the argument). */
const HEREDOC_START = /^(?:(?:apply_patch|applypatch)\s*)?<<-?\s*(?:'([A-Za-z_]\w*)'|"([A-Za-z_]\w*)"|([A-Za-z_]\w*))$/;
/** A unified-diff hunk header (`@@ -12,7 +12,8 @@ def f():`): the numbers are dropped, the text after them kept. */
const UNIFIED_HEADER = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$/;

const quote = (line: string): string => `'${line.length > 120 ? `${line.slice(0, 120)}…` : line}'`;

/** A line that ends the current file section, padded with whitespace or not (codex trims marker lines). */
function isFileBoundary(line: string): boolean {
  if (line.startsWith('*')) return true;
  const t = line.trim();
  return FILE_MARKERS.some((m) => t.startsWith(m));
}

/**
 * Reads hunks from lines[start, end) until a file boundary. `firstNeedsHeader` false lets the first hunk start
 * without `@@` (codex allows it). Returns the hunks and the index of the first line not consumed.
 */
function parseChunks(lines: string[], start: number, end: number, path: string, firstNeedsHeader: boolean, lineBase: number): { chunks: UpdateChunk[]; next: number } {
  const chunks: UpdateChunk[] = [];
  let i = start;
  while (i < end) {
    const first = lines[i] as string;
    // Blank lines between hunks separate them; inside a hunk an empty line is an unchanged empty line.
    if (first.trim() === '') { i++; continue; }
    if (isFileBoundary(first) && first.trim() !== END_OF_FILE) break;
    const patchLine = i + lineBase;
    const context: string[] = [];
    let sawHeader = false;
    while (i < end && (lines[i] as string).startsWith('@@')) {
      const raw = (lines[i] as string).trimEnd();
      const unified = UNIFIED_HEADER.exec(raw);
      const rest = unified ? (unified[1] as string) : raw.slice(2);
      const text = rest.startsWith(' ') ? rest.slice(1) : rest;
      if (text.trim() !== '') context.push(text);
      sawHeader = true;
      i++;
    }
    if (!sawHeader && (firstNeedsHeader || chunks.length > 0)) {
      throw E.patchHunkHeaderMissing(patchLine, path, quote(first));
    }
    const chunk: UpdateChunk = { oldLines: [], newLines: [], isEndOfFile: false, patchLine };
    if (context.length > 0) chunk.changeContext = context;
    let count = 0;
    while (i < end) {
      const line = lines[i] as string;
      if (line.trim() === END_OF_FILE) {
        if (count === 0) throw E.patchHunkEmptyBeforeEof(i + lineBase, path);
        chunk.isEndOfFile = true;
        i++;
        break;
      }
      if (line.startsWith('@@') || isFileBoundary(line)) break;
      const tag = line[0];
      if (tag === undefined) {
        chunk.oldLines.push('');
        chunk.newLines.push('');
      } else if (tag === ' ') {
        chunk.oldLines.push(line.slice(1));
        chunk.newLines.push(line.slice(1));
      } else if (tag === '-') {
        chunk.oldLines.push(line.slice(1));
      } else if (tag === '+') {
        chunk.newLines.push(line.slice(1));
      } else {
        throw E.patchHunkLineUntagged(i + lineBase, quote(line), path);
      }
      count++;
      i++;
    }
    if (count === 0) throw E.patchHunkEmpty(patchLine, path);
    chunks.push(chunk);
  }
  return { chunks, next: i };
}

function pathAfter(marker: string, trimmed: string, lineNo: number): string {
  const path = trimmed.slice(marker.length).trim();
  if (path === '') throw E.patchMarkerWithoutPath(lineNo, marker);
  return path;
}

/** The lines between the patch markers, with a heredoc wrapper and surrounding blank lines removed. */
function patchBody(text: string): { lines: string[]; start: number; end: number } {
  const lines = text.split(/\r?\n/);
  let start = 0;
  let end = lines.length;
  const trimEnds = () => {
    while (start < end && (lines[start] as string).trim() === '') start++;
    while (end > start && (lines[end - 1] as string).trim() === '') end--;
  };
  trimEnds();
  if (start === end) throw E.patchEmpty();
  const heredoc = HEREDOC_START.exec((lines[start] as string).trim());
  if (heredoc) {
    const delimiter = heredoc[1] ?? heredoc[2] ?? heredoc[3];
    if (end - start < 2 || (lines[end - 1] as string).trim() !== delimiter) {
      throw E.patchHeredocUnclosed((lines[start] as string).trim(), delimiter);
    }
    start++;
    end--;
    trimEnds();
    if (start === end) throw E.patchHeredocEmpty();
  }
  const first = (lines[start] as string).trim();
  if (first !== BEGIN_PATCH) throw E.patchFirstLineNotBegin(start + 1, quote(first));
  if (end - start < 2 || (lines[end - 1] as string).trim() !== END_PATCH) {
    throw E.patchLastLineNotEnd(end, quote((lines[end - 1] as string).trim()));
  }
  return { lines, start: start + 1, end: end - 1 };
}

/** The markers that name a file (a section's, or a move's destination), anywhere in a text. */
const NAMING_MARKER = new RegExp([ADD_FILE, UPDATE_FILE, DELETE_FILE, MOVE_TO].map((m) => m.replace(/\*/g, '\\*')).join('|'), 'g');

/** Whether String.prototype.trim removes this character (JavaScript's WhiteSpace and LineTerminator). */
function trimmed(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 160) return false;
  return code === 160 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}

/**
 * The files a patch names (each section's file, and a move's destination), counted on its text without parsing
 * it, so that a patch over a bound is refused before the parse, whose work and memory grow with every file. A
 * marker counts where parsePatch would read it: first on its line but for whitespace (parsePatch trims lines).
 * Exact for a patch that parses, never lower than what parsePatch would name: one search for the markers,
 * then a look back over the whitespace before each (no two share any), so the work is linear in the text.
 */
export function countPatchFiles(text: string): number {
  let files = 0;
  NAMING_MARKER.lastIndex = 0;
  for (let hit = NAMING_MARKER.exec(text); hit !== null; hit = NAMING_MARKER.exec(text)) {
    let k = hit.index - 1;
    while (k >= 0 && text.charCodeAt(k) !== 10 && trimmed(text.charCodeAt(k))) k--;
    if (k < 0 || text.charCodeAt(k) === 10) files++;
  }
  return files;
}

/** Parses a whole V4A patch. Throws PatchError INVALID_PATCH naming the patch line that is wrong. */
export function parsePatch(text: string): PatchOp[] {
  const { lines, start, end } = patchBody(text);
  const ops: PatchOp[] = [];
  let i = start;
  while (i < end) {
    const raw = lines[i] as string;
    const t = raw.trim();
    const lineNo = i + 1;
    if (t === '') { i++; continue; }
    if (t.startsWith(ADD_FILE)) {
      const path = pathAfter(ADD_FILE, t, lineNo);
      i++;
      const contents: string[] = [];
      while (i < end && (lines[i] as string).startsWith('+')) contents.push((lines[i++] as string).slice(1));
      ops.push({ type: 'add', path, contents: contents.map((l) => `${l}\n`).join('') });
      // codex ends an added file at the first line without '+'; say so rather than "not a file header".
      const next = lines[i];
      if (i < end && next !== undefined && next.trim() !== '' && !isFileBoundary(next)) {
        throw E.patchAddLineUntagged(i + 1, path, quote(next));
      }
    } else if (t.startsWith(DELETE_FILE)) {
      ops.push({ type: 'delete', path: pathAfter(DELETE_FILE, t, lineNo) });
      i++;
    } else if (t.startsWith(UPDATE_FILE)) {
      const path = pathAfter(UPDATE_FILE, t, lineNo);
      i++;
      let moveTo: string | undefined;
      const maybeMove = (lines[i] ?? '').trim();
      if (i < end && maybeMove.startsWith(MOVE_TO)) {
        moveTo = pathAfter(MOVE_TO, maybeMove, i + 1);
        i++;
      }
      const { chunks, next } = parseChunks(lines, i, end, path, false, 1);
      if (chunks.length === 0) throw E.patchUpdateWithoutHunks(lineNo, path);
      i = next;
      ops.push(moveTo !== undefined && moveTo !== path ? { type: 'update', path, moveTo, chunks } : { type: 'update', path, chunks });
    } else if (t === END_PATCH) {
      throw E.patchTextAfterEnd(lineNo);
    } else {
      throw E.patchNotFileHeader(lineNo, quote(t), /^[+\-@]/.test(t));
    }
  }
  if (ops.length === 0) throw E.patchNamesNoFile();
  return ops;
}

/** The Responses API's `apply_patch_call.operation`. */
export const ResponsesOperation = z.discriminatedUnion('type', [
  z.object({ type: z.literal('create_file'), path: z.string().min(1), diff: z.string() }),
  z.object({ type: z.literal('update_file'), path: z.string().min(1), diff: z.string() }),
  z.object({ type: z.literal('delete_file'), path: z.string().min(1), diff: z.string().optional() }),
]);
export type ResponsesOperation = z.infer<typeof ResponsesOperation>;

function diffLines(diff: string): string[] {
  const lines = diff.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * One Responses API operation as a PatchOp. create_file's diff is '+' lines joined with '\n' as OpenAI's Agents
 * SDK joins them (a final '+' line gives the final newline); update_file's diff is the hunks without file headers.
 */
export function parseResponsesOperation(operation: ResponsesOperation): PatchOp {
  const op = ResponsesOperation.parse(operation);
  if (op.type === 'delete_file') return { type: 'delete', path: op.path };
  if (op.diff.trim().startsWith(BEGIN_PATCH)) {
    // A whole patch in the diff field: accept it when it is about this one file (a move names two), refused
    // before its parse when it names more.
    if (countPatchFiles(op.diff) > 2) throw E.patchDiffHoldsOtherPatch(op.type, op.path);
    const ops = parsePatch(op.diff);
    const only = ops[0];
    if (ops.length === 1 && only && only.path === op.path && (only.type === 'add') === (op.type === 'create_file')) return only;
    throw E.patchDiffHoldsOtherPatch(op.type, op.path);
  }
  const lines = diffLines(op.diff);
  if (op.type === 'create_file') {
    const bad = lines.findIndex((l) => !l.startsWith('+'));
    if (bad >= 0) throw E.patchCreateDiffLineUntagged(bad + 1, op.path, quote(lines[bad] as string));
    return { type: 'add', path: op.path, contents: lines.map((l) => l.slice(1)).join('\n') };
  }
  const { chunks, next } = parseChunks(lines, 0, lines.length, op.path, false, 1);
  if (next < lines.length) throw E.patchUpdateDiffNotHunk(next + 1, quote(lines[next] as string), op.path);
  if (chunks.length === 0) throw E.patchUpdateDiffWithoutHunks(op.path);
  return { type: 'update', path: op.path, chunks };
}
