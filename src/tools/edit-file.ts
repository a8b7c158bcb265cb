import { z } from 'zod';
import type { VersionStamp } from '../envelope.js';
import { E } from '../errors.js';
import { diffSpans, type DiffPreview } from '../edit/diff.js';
import { describeUtf8Edit, planUtf8Edit, type Utf8EditPlan } from '../edit/bytes.js';
import type { EditOutcome, EditRequest } from '../edit/engine.js';
import { applyEditsBounded } from '../edit/off-thread.js';
import { withFileLock } from '../workspace/locks.js';
import { fileBuffers } from '../workspace/buffer-pool.js';
import { withMemory } from '../workspace/memory-budget.js';
import { SMALL_IO_BYTES } from '../workspace/sync-first-io.js';
import type { ResolvedPath } from '../workspace/sandbox.js';
import { checkEncoding, countLines, decodeText, encodeText, looksBinary } from '../workspace/encoding.js';
import { Sha256Snapshots, versionOf } from '../workspace/versions.js';
import { defineTool, type ToolContext, type ToolResult } from './define.js';
import { changeAnswer, commitBesideBackup, commitStaged, commitUnlessDryRun, contentChange, dropStaged, modeOf, stageContent, type Committed, type StageOptions } from './change.js';
import { announce } from './plan.js';
import { insertAfterLine, lineCount } from '../edit/insert-lines.js';
import { DiffFields, DryRunArg, PathArg, VersionArgs, VersionSchema } from './args.js';
import { enforceVersion, readCurrent, readCurrentBytes, type CurrentFile } from './file-access.js';

/**
 * Memory an edit holds per byte of the file, for the memory budget: the file itself, and on the general
 * path its decoded text, the new text and the new bytes.
 */
const EDIT_MEMORY_FACTOR = 3;

const Edit = z.strictObject({
  old_text: z.string().min(1).describe('Text to replace, quoted from the file (a few lines of context make it unique).'),
  new_text: z.string().describe('Replacement text.'),
  replace_all: z.boolean().default(false).describe('Replace every match instead of requiring a unique one.'),
});

const Input = z
  .strictObject({
    path: PathArg,
    old_text: z.string().min(1).optional().describe('Text to replace (alias oldText, old). Use this or edits[].'),
    new_text: z.string().optional().describe('Replacement text (alias newText, new).'),
    replace_all: z.boolean().default(false),
    edits: z.array(Edit).min(1).max(100).optional().describe('Several edits applied in order, all or nothing.'),
    insert_line: z.number().int().min(0).optional().describe('Insert new_text as whole lines after this line (0 = the top) instead of replacing old_text.'),
    encoding: z.string().optional().describe('Encoding of the file (default utf-8); kept when writing back.'),
    dry_run: DryRunArg,
    ...VersionArgs,
  })
  .describe('Either old_text + new_text, or edits[].');

const Output = z.object({
  applied: z.boolean(),
  replacements: z.number().int(),
  edits: z.array(
    z.object({
      stage: z.enum(['exact', 'line_endings', 'trailing_whitespace', 'indentation', 'unicode']).describe('How loosely old_text had to be matched.'),
      replacements: z.number().int(),
      start_line: z.number().int(),
      end_line: z.number().int(),
    }),
  ),
  snippet: z.string().describe('The edited region ±4 lines, with line numbers.'),
  ...DiffFields,
  backup_id: z.string().nullable(),
  version: VersionSchema,
});

function editsOf(input: z.output<typeof Input>): EditRequest[] {
  if (input.edits !== undefined) {
    if (input.old_text !== undefined || input.new_text !== undefined) throw E.editBothForms();
    return input.edits;
  }
  if (input.old_text === undefined || input.new_text === undefined) throw E.editTextsMissing();
  return [{ old_text: input.old_text, new_text: input.new_text, replace_all: input.replace_all }];
}

export const editFile = defineTool({
  name: 'edit_file',
  aliases: ['edit'],
  paramAliases: { oldText: 'old_text', newText: 'new_text', old: 'old_text', new: 'new_text', old_str: 'old_text', new_str: 'new_text', replaceAll: 'replace_all', file_path: 'path' },
  description:
    'Replace text in a file. old_text must match one place (exactly, or tolerating line endings, trailing spaces, indentation and quote style); the replacement is re-indented to the file and keeps its line endings. Several matches is MULTIPLE_MATCHES (add context or set replace_all); no match names the closest region. edits[] applies several edits all or nothing.',
  summary: 'exact, then tolerant unique matching; `replace_all`; `edits[]` applied in sequence, all or nothing; `insert_line` (insert `new_text` after line N); `snippet`; accepts `file_path`, `old_str`, `new_str`',
  risk: 'write',
  riskLevel: 'high',
  input: Input,
  example: { path: 'notes.txt', old_text: 'hello', new_text: 'hello, world', dry_run: true },
  output: Output,
  async run(ctx, input) {
    const encoding = checkEncoding(input.encoding);
    if (encoding === 'base64') throw E.editBinaryContent();
    if (input.insert_line !== undefined) return insertLines(ctx, input, input.insert_line, encoding);
    const edits = editsOf(input);
    const p = await ctx.resolve(input.path);
    const { limits } = p.ws;
    return withFileLock(p.ws, p.real, p.rel, () =>
      withMemory(p.ws, EDIT_MEMORY_FACTOR * (p.stat?.size ?? 0), ctx.signal, async () => {
        // The old version is hashed while the file is read, into a reused buffer that goes back at the end
        // (editBytes and editText settle only once no write refers to it).
        const hash = new Sha256Snapshots();
        const file = await readCurrentBytes(p, limits.maxEditBytes, { onChunk: (chunk) => hash.update(chunk), alloc: (n) => fileBuffers.take(n) });
        if (!file) throw E.fileNotFound(p.rel);
        try {
          const read = { ...file, hash, version: versionOf(file.stat, hash.digest()) };
          const plan = encoding === 'utf-8' ? planUtf8Edit(file.content, edits) : null;
          return await (plan ? editBytes(ctx, p, input, read, plan) : editText(ctx, p, input, read, edits, encoding));
        } finally {
          fileBuffers.give(file.content);
        }
      }),
      ctx.signal,
    );
  },
});

type EditInput = z.output<typeof Input>;

/** The insert_line form: new_text as whole lines after line N, in the file's line endings. */
async function insertLines(ctx: ToolContext, input: EditInput, after: number, encoding: string): Promise<ToolResult<EditData>> {
  if (input.old_text !== undefined || input.edits !== undefined) throw E.insertWithOldText();
  if (input.new_text === undefined) throw E.insertTextMissing();
  const newText = input.new_text;
  const p = await ctx.resolve(input.path);
  return withFileLock(p.ws, p.real, p.rel, async () => {
    const file = await readCurrent(p, p.ws.limits.maxEditBytes);
    if (!file) throw E.fileNotFound(p.rel);
    enforceVersion(ctx, p, file, input, 'mutation');
    if (encoding === 'utf-8' && looksBinary(file.content)) throw E.editBinaryFile(p.rel);
    const text = decodeText(file.content, encoding, p.rel);
    const lines = lineCount(text);
    if (after > lines) throw E.insertLinePastEnd(after, p.rel, lines);
    const out = insertAfterLine(text, after, newText);
    const diff = diffSpans(p.rel, text, out.text, [{ oldStart: out.at, oldEnd: out.at, newStart: out.at, newEnd: out.at + out.inserted.length }]);
    const bytes = encodeText(out.text, encoding);
    const committed = await commitUnlessDryRun(ctx, p, { current: file, next: bytes, operation: 'edit_file' }, diff, input.dry_run);
    const added = countLines(out.inserted);
    const startLine = after + 1;
    const endLine = after + added;
    const shown = out.text.charCodeAt(0) === 0xfeff ? out.text.slice(1) : out.text;
    const snippet = shown
      .split('\n')
      .slice(Math.max(0, startLine - 5), endLine + 4)
      .map((l, i) => `${Math.max(1, startLine - 4) + i}: ${l}`)
      .join('\n');
    const counts = `${added} line(s) after line ${after}`;
    return changeAnswer(p, {
      diff,
      before: file.version,
      committed,
      originalSize: file.content.length,
      newSize: bytes.length,
      text: committed ? `Inserted ${counts} of '${p.rel}' (${bytes.length} bytes).` : `Would insert ${counts} of '${p.rel}'.`,
      data: { replacements: 0, edits: [{ stage: 'exact' as const, replacements: 0, start_line: startLine, end_line: endLine }], snippet },
      stats: { replacements: 0 },
    });
  }, ctx.signal);
}
type EditData = z.output<typeof Output>;

/** The file as read under the lock, with its version (hashed while it was read). */
interface ReadFile extends CurrentFile {
  hash: Sha256Snapshots;
}

/**
 * The common case (one unique exact match in a UTF-8 file) on bytes: the new file is written from slices of
 * the old one while this thread numbers the lines and hashes the new version from the old one's state
 * before the edit; it is committed only after the version check.
 */
async function editBytes(ctx: ToolContext, p: ResolvedPath, input: EditInput, file: ReadFile, plan: Utf8EditPlan): Promise<ToolResult<EditData>> {
  const { content } = file;
  const chunks = [content.subarray(0, plan.head), plan.middle, content.subarray(plan.tail)];
  const opts = stageOptions(ctx, file);
  const temp = input.dry_run ? null : stageContent(p, chunks, opts);
  const before = file.version;
  let change: Change;
  let newSha: () => string;
  try {
    enforceVersion(ctx, p, file, input, 'mutation');
    const { outcome, lineBase } = describeUtf8Edit(content, plan);
    const diff = diffSpans(p.rel, plan.windowText, outcome.text, outcome.spans, lineBase);
    const size = chunks.reduce((n, c) => n + c.length, 0);
    change = { outcome, diff, originalSize: content.length, newSize: size, before };
    let sha: string | null = null;
    newSha = () => (sha ??= file.hash.hashOfHead(content, plan.head).update(plan.middle).update(chunks[2] as Buffer).digest('hex'));
    // Told before the backup: an approved repeat that would change something else is refused with nothing written.
    await announce(ctx, () => [contentChange(p, file, newSha(), diff)]);
  } catch (err) {
    if (temp) await dropStaged(temp); // refused before the commit: the temp file goes
    throw err;
  }
  if (!temp) return dryRun(p, change);
  // Accepted: the backup (the old inode linked, or a copy) is made beside the temp file (thread pool); the rename waits for both.
  return answer(p, change, await commitStaged(ctx, p, temp, 'edit_file', file, newSha(), opts));
}

/** Every other edit: the engine on the whole decoded text (tolerant stages, several edits, other encodings, and every error). */
async function editText(ctx: ToolContext, p: ResolvedPath, input: EditInput, file: CurrentFile, edits: EditRequest[], encoding: string): Promise<ToolResult<EditData>> {
  const before = file.version;
  enforceVersion(ctx, p, file, input, 'mutation');
  if (encoding === 'utf-8' && looksBinary(file.content)) throw E.editBinaryFile(p.rel);
  const oldText = decodeText(file.content, encoding, p.rel);
  const outcome = await applyEditsBounded(oldText, edits, { runtime: ctx.ws.runtime, signal: ctx.signal });
  const diff = diffSpans(p.rel, oldText, outcome.text, outcome.spans);
  const bytes = encodeText(outcome.text, encoding);
  const change = { outcome, diff, originalSize: file.content.length, newSize: bytes.length, before };
  await announce(ctx, () => [contentChange(p, file, bytes, diff)]);
  if (input.dry_run) return dryRun(p, change);
  // The new hash is computed while the temp file and the backup are written.
  const committed = await commitBesideBackup(ctx, p, { current: file, next: bytes, operation: 'edit_file' }, file, stageOptions(ctx, file));
  return answer(p, change, committed);
}

/** An edit keeps the file's mode; a large old file's blocks are freed after the answer (see commitTempFile). */
function stageOptions(ctx: ToolContext, file: CurrentFile): StageOptions {
  return { mode: modeOf(file), stop: ctx, releaseLater: file.content.length > SMALL_IO_BYTES };
}

interface Change {
  outcome: Pick<EditOutcome, 'edits' | 'snippet'>;
  diff: DiffPreview;
  originalSize: number;
  newSize: number;
  before: VersionStamp;
}

/** The answer, dry run (committed null) or applied, in the words every change tool uses (change.ts). */
function answer(p: ResolvedPath, change: Change, committed: Committed | null): ToolResult<EditData> {
  const { outcome, diff, before } = change;
  const replacements = outcome.edits.reduce((n, e) => n + e.replacements, 0);
  const tolerant = outcome.edits.filter((e) => e.stage !== 'exact').map((e) => e.stage);
  const note = tolerant.length > 0 ? ` (matched ignoring ${[...new Set(tolerant)].join(', ').replaceAll('_', ' ')})` : '';
  const counts = `${replacements} replacement(s), +${diff.lines_added}/-${diff.lines_removed} lines`;
  return changeAnswer(p, {
    diff,
    before,
    committed,
    originalSize: change.originalSize,
    newSize: change.newSize,
    text: committed ? `Edited '${p.rel}' (${counts}, ${change.newSize} bytes)${note}.` : `Would edit '${p.rel}' (${counts})${note}.`,
    data: { replacements, edits: outcome.edits, snippet: outcome.snippet },
    stats: { replacements },
  });
}

function dryRun(p: ResolvedPath, change: Change): ToolResult<EditData> {
  return answer(p, change, null);
}
