// Anthropic's text editor tool (str_replace_based_edit_tool): its commands, parameters and answer texts, since
// Claude is trained on them, over toolgate's sandbox, locks, backups, edit engine and durable writes.
import fs from 'node:fs/promises';
import { z } from 'zod';
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { diffSpans, diffWhole, type DiffPreview } from '../edit/diff.js';
import { applyEditsBounded } from '../edit/off-thread.js';
import { insertAfterLine, lineCount } from '../edit/insert-lines.js';
import {
  createdText,
  insertText,
  occurrenceLines,
  strReplaceText,
  undoneText,
  viewText,
} from '../edit/text-editor-view.js';
import { joinRel, walkTree, type WalkEntry } from '../search/walk.js';
import { dropBackup, listBackups, readBackup, returnRemovedFile, type BackupMeta } from '../workspace/backups.js';
import { fsyncDirectory, writeFileAtomic } from '../workspace/atomic.js';
import { sha256Hex, versionOf } from '../workspace/versions.js';
import { looksBinary } from '../workspace/encoding.js';
import { withFileLock } from '../workspace/locks.js';
import { checkWriteSize } from '../workspace/workspace.js';
import { entryOf, type ResolvedPath } from '../workspace/sandbox.js';
import { defineTool, type ToolContext, type ToolResult } from './define.js';
import { commitChange, commitUnlessDryRun, contentChange, modeOf, type Committed } from './change.js';
import { announce } from './plan.js';
import { PathArg, VersionArgs, VersionSchema } from './args.js';
import { enforceVersion, ensureParent, readCurrent, type CurrentFile } from './file-access.js';

const NAME = 'str_replace_based_edit_tool';
/** Backups taken by undo_edit carry this operation: each one has used up one earlier change. */
const UNDO_OPERATION = `${NAME}:undo_edit`;
// Directory view: the reference runs find with -maxdepth 2, leaving out hidden entries.
const VIEW_DEPTH = 2;
const VIEW_MAX_ENTRIES = 1000;

const Input = z.strictObject({
  command: z.enum(['view', 'create', 'str_replace', 'insert', 'undo_edit']).describe('view, create, str_replace, insert or undo_edit.'),
  path: PathArg.describe('File or directory relative to the workspace root (alias file_path).'),
  view_range: z.array(z.number().int()).optional().describe('view: [start_line, end_line], 1-based, inclusive; -1 as end_line reads to the end.'),
  file_text: z.string().optional().describe('create: the content of the new file.'),
  old_str: z.string().optional().describe('str_replace: the text to replace; must match one place in the file.'),
  new_str: z.string().optional().describe('str_replace: the replacement (default empty); insert: the lines to insert (alias insert_text).'),
  insert_line: z.number().int().optional().describe('insert: the line after which new_str goes (0 = the top of the file).'),
  expected_sha256: VersionArgs.expected_sha256.describe(
    'str_replace, insert, undo_edit: sha256 of the file as you viewed it (data.version.sha256 of view); CONFLICT when it changed since. Needed when the server requires versions.',
  ),
});

const Output = z.object({
  command: z.string(),
  path: z.string(),
  applied: z.boolean().describe('Whether the command changed a file (false for view).'),
  entries: z.array(z.string()).optional().describe('view of a directory: the paths listed.'),
  diff_preview: z.string().optional().describe('Changes: unified diff, cut at 100 lines or 10 KiB.'),
  diff_truncated: z.boolean().optional(),
  lines_added: z.number().int().optional(),
  lines_removed: z.number().int().optional(),
  backup_id: z.string().nullable().optional(),
  version: VersionSchema.nullable().optional(),
});

type Args = z.output<typeof Input>;
type Data = z.output<typeof Output>;

export const textEditor = defineTool({
  name: NAME,
  aliases: ['text_editor'],
  paramAliases: { file_path: 'path', insert_text: 'new_str' },
  viewing: (input) => input.command === 'view',
  description:
    "Anthropic's text editor tool. view: a file `cat -n` style (view_range [start, end], -1 = end) or a directory two levels deep; create: a new file (file_text); str_replace: replace old_str, which must match one place, with new_str; insert: new_str after line insert_line (0 = top); undo_edit: undo your last change to the file.",
  summary: 'Anthropic\'s text editor: `view` (`cat -n`, `view_range`, directories two levels deep), `create`, `str_replace` (through the edit engine), `insert`, `undo_edit` (your last change, from the backups); the reference tool\'s texts',
  risk: 'write',
  riskLevel: 'high',
  input: Input,
  example: { command: 'str_replace', path: 'notes.txt', old_str: 'world', new_str: 'there' },
  output: Output,
  async run(ctx, input) {
    if (input.expected_sha256 !== undefined && (input.command === 'view' || input.command === 'create')) {
      throw E.editorShaNotTaken(input.command);
    }
    const p = await ctx.resolve(input.path, { allowRoot: input.command === 'view' });
    if (input.command === 'view') return view(ctx, p, input);
    if (p.stat?.isDirectory()) throw E.editorIsDirectory(p.rel);
    if (input.command === 'create') return create(ctx, p, input);
    return withFileLock(p.ws, p.real, p.rel, async () => {
      const current = await readCurrent(p, p.ws.limits.maxEditBytes);
      // An undo may find the file gone: the change it takes back deleted it.
      if (!current && input.command !== 'undo_edit') throw E.editorPathMissing(p.rel);
      enforceEditorVersion(ctx, p, current, input.expected_sha256);
      if (input.command === 'undo_edit') return undo(ctx, p, current);
      if (!current) throw E.editorPathMissing(p.rel);
      if (looksBinary(current.content)) throw E.editorBinaryFile(p.rel);
      const text = current.content.toString('utf8');
      return input.command === 'str_replace' ? strReplace(ctx, p, input, current, text) : insert(ctx, p, input, current, text);
    }, ctx.signal);
  },
});

/**
 * The version rules, with VERSION_REQUIRED in this tool's terms: the reference schema has no version, so the
 * message names the one this tool takes (expected_sha256, or If-Match) and where a caller finds it.
 */
function enforceEditorVersion(ctx: ToolContext, p: ResolvedPath, current: CurrentFile | null, expectedSha256: string | undefined): void {
  try {
    enforceVersion(ctx, p, current, { expected_sha256: expectedSha256 }, 'mutation');
  } catch (err) {
    if (!(err instanceof ToolError && err.code === 'VERSION_REQUIRED')) throw err;
    throw E.editorVersionRequired(p.rel, err.details);
  }
}

function required<T>(value: T | undefined, parameter: 'file_text' | 'old_str' | 'new_str' | 'insert_line', command: string): T {
  if (value === undefined) throw E.editorParameterMissing(parameter, command);
  return value;
}

/** A file's text as the editor shows it: without a BOM. */
const shown = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

function result(p: ResolvedPath, command: string, text: string, extra: Partial<Data> & { diff?: DiffPreview; committed?: Committed | null } = {}): ToolResult<Data> {
  const { diff, committed, ...rest } = extra;
  const version = committed?.version ?? rest.version ?? null;
  return {
    data: { command, path: p.rel, applied: Boolean(committed), ...rest, ...diff, ...(committed !== undefined && { backup_id: committed?.backupId ?? null }), version },
    text,
    stats: diff ? { lines_added: diff.lines_added, lines_removed: diff.lines_removed } : {},
    partial: diff?.diff_truncated ?? false,
    pathResolved: p.rel,
    version,
  };
}

async function view(ctx: ToolContext, p: ResolvedPath, input: Args): Promise<ToolResult<Data>> {
  if (!p.stat) throw E.editorPathMissing(p.rel);
  if (p.stat.isDirectory()) {
    if (input.view_range !== undefined) throw E.editorViewRangeOnDirectory();
    const found: WalkEntry[] = [];
    const walk = await walkTree(p.ws, p, {
      maxDepth: VIEW_DEPTH,
      maxEntries: VIEW_MAX_ENTRIES,
      deadline: Date.now() + p.ws.limits.searchTimeoutMs,
      signal: ctx.signal,
      includeHidden: false,
      onEntry: (e) => {
        found.push(e);
      },
    });
    const entries = found.map((e) => joinRel(p.rel, e.relFromStart)).sort();
    const more = walk.truncated ? `\n(listing stopped after ${entries.length} entries; view a subdirectory)` : '';
    return result(p, 'view', `Here's the files and directories up to 2 levels deep in ${p.rel}, excluding hidden items:\n${[p.rel, ...entries].join('\n')}${more}\n`, { entries });
  }
  const { maxReadBytes, maxOutputBytes } = p.ws.limits;
  const file = await readCurrent(p, maxReadBytes, 'TOOLGATE_MAX_READ_BYTES');
  if (!file) throw E.editorPathMissing(p.rel);
  if (looksBinary(file.content)) throw E.editorViewBinary(p.rel);
  const text = viewText(p.rel, shown(file.content.toString('utf8')), input.view_range);
  if (Buffer.byteLength(text) > maxOutputBytes) {
    throw E.editorViewTooLarge(p.rel, maxOutputBytes);
  }
  return { ...result(p, 'view', text, { version: file.version }), audit: { sha256_before: file.version.sha256, bytes_read: file.content.length } };
}

async function create(ctx: ToolContext, p: ResolvedPath, input: Args): Promise<ToolResult<Data>> {
  const fileText = required(input.file_text, 'file_text', 'create');
  const bytes = Buffer.from(fileText, 'utf8');
  checkWriteSize(p.ws, bytes.length, E.editorCreateTooLarge);
  if (p.stat) throw E.editorFileExists(p.rel);
  const diff = diffWhole(p.rel, null, fileText);
  // Told before the parents are made: a new file has no old content to change under the lock.
  await announce(ctx, () => [contentChange(p, null, bytes, diff)]);
  ensureParent(ctx, p, true);
  return withFileLock(p.ws, p.real, p.rel, async () => {
    const current = await readCurrent(p, p.ws.limits.maxEditBytes);
    if (current) throw E.editorFileExists(p.rel);
    const committed = await commitChange(ctx, p, { current: null, next: bytes, operation: NAME });
    return { ...result(p, 'create', createdText(p.rel), { diff, committed }), riskLevel: 'medium' as const };
  }, ctx.signal);
}

async function strReplace(ctx: ToolContext, p: ResolvedPath, input: Args, current: CurrentFile, text: string): Promise<ToolResult<Data>> {
  const oldStr = required(input.old_str, 'old_str', 'str_replace');
  const newStr = input.new_str ?? '';
  let outcome;
  try {
    outcome = await applyEditsBounded(text, [{ old_text: oldStr, new_text: newStr }], { runtime: ctx.ws.runtime, signal: ctx.signal });
  } catch (err) {
    // The engine's codes and details, in the reference's words.
    if (err instanceof ToolError && err.code === 'NO_MATCH') throw E.editorNoMatch(p.rel, oldStr, err.details);
    if (err instanceof ToolError && err.code === 'MULTIPLE_MATCHES') {
      const exact = occurrenceLines(shown(text), oldStr);
      const lines = exact.length > 1 ? exact : ((err.details?.lines as number[] | undefined) ?? []);
      throw E.editorMultipleMatches(oldStr, lines, err.details);
    }
    throw err;
  }
  const next = Buffer.from(outcome.text, 'utf8');
  const diff = diffSpans(p.rel, text, outcome.text, outcome.spans);
  const committed = await commitUnlessDryRun(ctx, p, { current, next, operation: NAME }, diff, false);
  const newText = shown(outcome.text);
  const startLine = outcome.edits[0]?.start_line ?? 1;
  return result(p, 'str_replace', strReplaceText(p.rel, newText, offsetOfLine(newText, startLine), newStr), { diff, committed });
}

async function insert(ctx: ToolContext, p: ResolvedPath, input: Args, current: CurrentFile, text: string): Promise<ToolResult<Data>> {
  const insertLine = required(input.insert_line, 'insert_line', 'insert');
  const newStr = required(input.new_str, 'new_str', 'insert');
  const lines = lineCount(text);
  if (insertLine < 0 || insertLine > lines) throw E.editorInsertLineInvalid(insertLine, lines);
  const out = insertAfterLine(text, insertLine, newStr);
  const diff = diffSpans(p.rel, text, out.text, [{ oldStart: out.at, oldEnd: out.at, newStart: out.at, newEnd: out.at + out.inserted.length }]);
  const committed = await commitUnlessDryRun(ctx, p, { current, next: Buffer.from(out.text, 'utf8'), operation: NAME }, diff, false);
  return result(p, 'insert', insertText(p.rel, shown(text), insertLine, newStr), { diff, committed });
}

/**
 * The caller's last change to the file that no undo has taken back yet: its backups newest first, each undo
 * (UNDO_OPERATION) using up one earlier change, as the reference's per-file history stack pops.
 */
function lastChange(metas: BackupMeta[], actor: string | null): { meta: BackupMeta; changedSinceBy: string | null } | null {
  let undone = 0;
  let changedSinceBy: string | null = null;
  for (const m of metas) {
    if (m.actor === undefined) continue;
    if (m.actor !== actor) {
      // Someone else changed the file after the caller: putting the caller's old content back would undo theirs too.
      changedSinceBy ??= m.actor ?? 'a caller without a token';
      continue;
    }
    if (m.operation === UNDO_OPERATION) undone++;
    else if (undone > 0) undone--;
    else return { meta: m, changedSinceBy };
  }
  return null;
}

async function undo(ctx: ToolContext, p: ResolvedPath, current: CurrentFile | null): Promise<ToolResult<Data>> {
  const last = lastChange(await listBackups(p.ws, p.realRel), ctx.caller.actor);
  if (!last) throw current ? E.editorNoHistory(p.rel) : E.editorPathMissing(p.rel);
  const { meta } = last;
  if (last.changedSinceBy !== null) {
    throw E.editorUndoWouldUndoOthers(p.rel, last.changedSinceBy, meta.backup_id);
  }
  if (meta.removed) return undoRemoval(ctx, p, current, meta);
  // Gone without a change of the caller's that removed it (deleted outside toolgate): nothing to put content into.
  if (!current) throw E.editorPathMissing(p.rel);
  const { content } = await readBackup(p.ws, meta.backup_id);
  const old = current.content.toString('utf8');
  const restored = content.toString('utf8');
  const diff = diffWhole(p.rel, old, restored);
  const committed = await commitUnlessDryRun(ctx, p, { current, next: content, operation: UNDO_OPERATION, mode: meta.mode ?? modeOf(current) }, diff, false);
  return result(p, 'undo_edit', undoneText(p.rel, shown(restored)), { diff, committed });
}

/**
 * The caller's last change deleted the file: it comes back from the backup the delete moved it into, with its
 * content, mode and version, and that backup goes (the change is taken back, so the next undo takes back the
 * change before it). A file created there since is not overwritten.
 */
async function undoRemoval(ctx: ToolContext, p: ResolvedPath, current: CurrentFile | null, meta: BackupMeta): Promise<ToolResult<Data>> {
  if (current) throw E.editorUndoDeleteRecreated(p.rel, meta.backup_id);
  // The editor changes files up to this size; a larger one comes back with restore_backup.
  const { maxEditBytes } = p.ws.limits;
  if (meta.size_bytes > maxEditBytes) throw E.fileOverLimit(p.rel, meta.size_bytes, 'TOOLGATE_MAX_EDIT_BYTES', maxEditBytes);
  const { content } = await readBackup(p.ws, meta.backup_id);
  const text = content.toString('utf8');
  const diff = diffWhole(p.rel, null, looksBinary(content) ? '[binary]\n' : text);
  const sha256 = meta.sha256 ?? sha256Hex(content);
  await announce(ctx, () => [{ op: 'create', kind: 'file', path: p.rel, sha256Before: null, sha256After: sha256, diff }]);
  ctx.signal.throwIfAborted(); // stopped (time limit): refuse before the file returns, never after answering
  ensureParent(ctx, p, true);
  let st;
  if (await returnRemovedFile(p.ws, meta, p.at)) {
    await fsyncDirectory(entryOf(p.dir, '.'));
    st = await fs.lstat(p.at);
  } else {
    st = await writeFileAtomic(p.ws, p.at, content, { mode: meta.mode, stop: ctx });
    await dropBackup(p.ws, meta);
  }
  const committed: Committed = { backupId: null, version: versionOf(st, sha256) };
  return { ...result(p, 'undo_edit', undoneText(p.rel, shown(text)), { diff, committed }), audit: { sha256_before: null, sha256_after: sha256, bytes_written: content.length } };
}

/** Offset where 1-based line `line` starts. */
function offsetOfLine(text: string, line: number): number {
  let at = 0;
  for (let n = 1; n < line; n++) {
    const nl = text.indexOf('\n', at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  return at;
}

