// OpenAI's apply_patch (V4A patches, and the Responses API's per-file operations) over the workspace: every path
// through the sandbox, every file under its lock (a dry run only reads and takes none), the whole patch planned
// before anything is written, and a failed write puts back the files already written and removes the
// directories it made, so a patch applies all or nothing. TOOLGATE_PATCH_MAX_FILES bounds the files one patch names.
import { fstatSync, lstatSync, rmdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { SETTINGS } from '../config.js';
import { ToolError, type VersionStamp } from '../envelope.js';
import { E } from '../errors.js';
import { diffWhole } from '../edit/diff.js';
import { PatchError } from '../edit/patch-error.js';
import { planPatchBounded } from '../edit/off-thread.js';
import { patchPathKey, type PlannedFile } from '../edit/patch-plan.js';
import { countPatchFiles, parsePatch, parseResponsesOperation, ResponsesOperation, type PatchOp } from '../edit/patch-v4a.js';
import { fsyncDirectory, writeFileAtomic } from '../workspace/atomic.js';
import { moveToBackup } from '../workspace/backups.js';
import { looksBinary } from '../workspace/encoding.js';
import { withFileLock } from '../workspace/locks.js';
import { createMissingParents, entryOf, type DirHandle, type ResolvedPath } from '../workspace/sandbox.js';
import { defineTool, type ToolContext } from './define.js';
import { backupRecord, commitChange, modeOf } from './change.js';
import { announce, REMOVED_HEAD_BYTES, type PlannedChange } from './plan.js';
import { sha256Hex } from '../workspace/versions.js';
import { DiffFields, DryRunArg, VersionArgs, VersionSchema } from './args.js';
import { enforceVersion, readCurrent, type CurrentFile } from './file-access.js';

const Sha256 = VersionArgs.expected_sha256.unwrap();

const Input = z
  .strictObject({
    patch: z
      .string()
      .optional()
      .describe("A V4A patch: '*** Begin Patch', then '*** Add File: <path>' ('+' lines), '*** Update File: <path>' (optional '*** Move to: <path>', then '@@' hunks of ' ', '-', '+' lines) or '*** Delete File: <path>' sections, then '*** End Patch'. Alias: input."),
    operation: ResponsesOperation.optional().describe("The Responses API's apply_patch_call operation: {type: create_file|update_file|delete_file, path, diff}."),
    type: z.enum(['create_file', 'update_file', 'delete_file']).optional().describe('The Responses API operation given flat (with path and diff) instead of in operation.'),
    path: z.string().optional().describe('Path of the flat Responses API operation.'),
    diff: z.string().optional().describe("Diff of the flat Responses API operation: '+' lines for create_file, '@@' hunks for update_file."),
    expected_sha256: z
      .union([Sha256, z.array(z.strictObject({ path: z.string(), sha256: Sha256 }))])
      .optional()
      .describe(
        'Versions of the existing files the patch updates, moves or deletes (the sha256 of data.version from read_file or a view): a string when it changes one such file, a list of {path, sha256} for several. CONFLICT when a file changed since; needed when the server requires versions.',
      ),
    dry_run: DryRunArg,
  })
  .describe('Either patch, or one Responses API operation (operation, or type + path + diff).');

const FileResult = z.object({
  path: z.string(),
  operation: z.enum(['create', 'update', 'delete', 'move']),
  move_to: z.string().nullable(),
  ...DiffFields,
  backup_id: z.string().nullable().describe('Backup of the old content (update, move, delete); restore_backup undoes that file.'),
  version: VersionSchema.nullable().describe('Version of the file after the change; null for a delete or a dry run.'),
});

const Output = z.object({
  applied: z.boolean(),
  files: z.array(FileResult).describe('One entry per file, in patch order, each with its own diff.'),
});

type FileOut = z.output<typeof FileResult>;

/** The operations the call asks for, whichever of the three argument forms it used. */
function opsOf(input: z.output<typeof Input>): PatchOp[] {
  const flat = input.type !== undefined || input.path !== undefined || input.diff !== undefined;
  const forms = [input.patch !== undefined, input.operation !== undefined, flat].filter(Boolean).length;
  if (forms !== 1) throw E.patchFormsAmbiguous();
  try {
    if (input.patch !== undefined) return parsePatch(input.patch);
    if (input.operation !== undefined) return [parseResponsesOperation(input.operation)];
    const parsed = ResponsesOperation.safeParse({ type: input.type, path: input.path, diff: input.diff });
    if (!parsed.success) throw E.patchOperationIncomplete();
    return [parseResponsesOperation(parsed.data)];
  } catch (err) {
    throw err instanceof PatchError ? err.toToolError() : err;
  }
}

/** A path of the patch, resolved in the sandbox, with what was read under its lock. */
interface Target {
  p: ResolvedPath;
  current: CurrentFile | null;
}

const UTF8_BOM = '\uFEFF';

/** Files handled between two turns of the event loop: a patch of many files lets other requests (and /livez) in. */
const FILES_PER_TURN = 50;

/** A per-file step that waits for the event loop's next turn once every FILES_PER_TURN files. */
function turnTaker(): () => Promise<void> | undefined {
  let files = 0;
  return () => (++files % FILES_PER_TURN === 0 ? nextTurn() : undefined);
}

/** TOOLGATE_PATCH_MAX_FILES where a workspace was opened without a config. */
const DEFAULT_PATCH_MAX_FILES = Number(SETTINGS.patchMaxFiles.default);

/**
 * Refuses a patch that names more files than TOOLGATE_PATCH_MAX_FILES (a move names two), counted on its text
 * before it is parsed, any path resolved or any file read: every file costs a parse, a lookup, a read and a diff
 * in the answer, and 40,000 of them held the event loop for seconds (docs/api.md, "Tools"). A Responses
 * API operation names one file.
 */
function refuseTooManyFiles(ctx: ToolContext, input: z.output<typeof Input>): void {
  if (input.patch === undefined) return;
  const limit = ctx.ws.limits.patchMaxFiles ?? DEFAULT_PATCH_MAX_FILES;
  const files = countPatchFiles(input.patch);
  if (files > limit) throw E.patchTooManyFiles(files, limit);
}

export const applyPatch = defineTool({
  name: 'apply_patch',
  paramAliases: { input: 'patch' },
  pathsOf: (input) => {
    try {
      return opsOf(Input.parse(input)).flatMap((op) => (op.type === 'update' && op.moveTo !== undefined ? [op.path, op.moveTo] : [op.path]));
    } catch {
      return []; // refused anyway when it runs
    }
  },
  description:
    "Apply a V4A patch (OpenAI's apply_patch format) to one or more files: add, update (with context-matched hunks, optionally moving the file) or delete. The whole patch applies or nothing does; a hunk whose context fits more than one place needs an '@@ <line above it>' header. Returns one diff per file. Also accepts one Responses API operation ({type, path, diff}).",
  summary: 'OpenAI\'s V4A patch (`patch`, alias `input`) or one Responses API operation (`{type, path, diff}`); add, update, move, delete; all files or none; one diff per file',
  risk: 'destructive',
  riskLevel: 'high',
  input: Input,
  example: { patch: '*** Begin Patch\n*** Update File: notes.txt\n@@\n-hello, there\n+hello, there!\n*** End Patch\n' },
  output: Output,
  async run(ctx, input) {
    refuseTooManyFiles(ctx, input);
    const ops = opsOf(input);
    const targets = await resolveTargets(ctx, ops);
    // A dry run writes nothing: it reads without locks, so a preview never holds up a writer.
    if (input.dry_run) return planAndApply(ctx, ops, targets, input);
    // Locks in one global order (real paths sorted), taken one inside the other, so two patches cannot deadlock.
    const locked = [...new Map([...targets.values()].map((t) => [t.p.real, t.p])).values()].sort((a, b) => (a.real < b.real ? -1 : a.real > b.real ? 1 : 0));
    const underLocks = (i: number): Promise<ReturnType<typeof answer>> => {
      if (i === locked.length) return planAndApply(ctx, ops, targets, input);
      const p = locked[i] as ResolvedPath;
      return withFileLock(p.ws, p.real, p.rel, () => underLocks(i + 1), ctx.signal);
    };
    return underLocks(0);
  },
});

/** Resolves every path and move target of the patch before anything is read: a refused path refuses the patch. */
async function resolveTargets(ctx: ToolContext, ops: PatchOp[]): Promise<Map<string, Target>> {
  const targets = new Map<string, Target>();
  // Each real path with the key that named it first: two names of one file are found in one lookup each.
  const named = new Map<string, string>();
  const add = async (path: string, deleting: boolean, receives?: ResolvedPath) => {
    const key = patchPathKey(path);
    if (targets.has(key)) return; // planPatch names the duplicate
    // A move target receives its source: the policy decides it as the file arrives (docs/policy.md, "Moves").
    let p = await ctx.resolve(path, deleting ? { noFollowLeaf: true } : { receives });
    if (deleting && p.leafIsLink) {
      p = await ctx.resolve(path); // a link leading outside is refused as such
      throw E.patchDeleteSymlink(p.rel);
    }
    if (p.stat?.isDirectory()) throw E.isDirectory(p.rel, '; apply_patch changes files only.');
    const other = named.get(p.real);
    if (other !== undefined) throw E.patchFileTwice(other, path);
    named.set(p.real, key);
    targets.set(key, { p, current: null });
  };
  const turn = turnTaker();
  for (const op of ops) {
    await turn();
    await add(op.path, op.type === 'delete' || (op.type === 'update' && op.moveTo !== undefined));
    if (op.type === 'update' && op.moveTo !== undefined) await add(op.moveTo, false, targets.get(patchPathKey(op.path))?.p);
  }
  return targets;
}

const target = (targets: Map<string, Target>, path: string): Target => targets.get(patchPathKey(path)) as Target;

type ExpectedSha256 = z.output<typeof Input>['expected_sha256'];

/**
 * The version rules for the files the patch changes as they are (update, move, delete): each given sha256 must
 * hold, and under TOOLGATE_REQUIRE_VERSION=always each needs one. The V4A format has no place for a version, so
 * it comes as expected_sha256 (one string, or a list by path) or If-Match (one tag per file); one error names
 * every file still missing one, so a caller fixes the call at once.
 */
function checkVersions(ctx: ToolContext, ops: PatchOp[], targets: Map<string, Target>, expected: ExpectedSha256): void {
  const changed = [...new Set(ops.filter((o) => o.type !== 'add').map((o) => patchPathKey(o.path)))];
  const given = new Map<string, string>();
  if (typeof expected === 'string') {
    if (changed.length !== 1) {
      throw E.patchShaNotList(changed.length);
    }
    given.set(changed[0] as string, expected);
  }
  for (const e of Array.isArray(expected) ? expected : []) {
    const key = patchPathKey(e.path);
    if (!changed.includes(key)) throw E.patchShaUnknownPath(e.path);
    if (given.has(key)) throw E.patchShaTwice(e.path);
    given.set(key, e.sha256);
  }
  const unversioned: Target[] = [];
  for (const key of changed) {
    const t = targets.get(key) as Target;
    try {
      enforceVersion(ctx, t.p, t.current, { expected_sha256: given.get(key) }, 'mutation');
    } catch (err) {
      if (!(err instanceof ToolError && err.code === 'VERSION_REQUIRED')) throw err;
      unversioned.push(t);
    }
  }
  if (unversioned.length === 0) return;
  const names = unversioned.map((t) => t.p.rel);
  throw E.patchVersionRequired(names, (unversioned[0] as Target).current?.version ?? null);
}

/** Under every lock (a dry run holds none): read, check versions, plan the whole patch, then write it (or, on a dry run, only answer). */
async function planAndApply(ctx: ToolContext, ops: PatchOp[], targets: Map<string, Target>, input: z.output<typeof Input>) {
  const texts = new Map<string, string | null>();
  const turn = turnTaker();
  for (const [key, t] of targets) {
    await turn();
    t.current = await readCurrent(t.p, t.p.ws.limits.maxEditBytes);
    texts.set(key, t.current ? textOf(t) : null);
  }
  checkVersions(ctx, ops, targets, input.expected_sha256);
  const dryRun = input.dry_run;
  const updated = new Set(ops.filter((o) => o.type === 'update').map((o) => patchPathKey(o.path)));
  for (const key of updated) {
    const t = targets.get(key) as Target;
    if (t.current && looksBinary(t.current.content)) throw E.patchBinaryFile(t.p.rel);
  }
  let plan: PlannedFile[];
  try {
    plan = await planPatchBounded(ops, texts, (path) => target(targets, path).p.realRel, { runtime: ctx.ws.runtime, signal: ctx.signal });
  } catch (err) {
    throw err instanceof PatchError ? err.toToolError() : err;
  }
  await announce(ctx, () => plan.map((f) => plannedChange(f, targets)));
  const results: FileOut[] = [];
  const undo: Undo = [];
  try {
    const turn = turnTaker();
    for (const f of plan) {
      await turn();
      results.push(await applyFile(ctx, f, targets, dryRun, undo));
    }
  } catch (err) {
    // All or nothing: what was written goes back, newest first; the error that stopped the patch is the answer.
    for (const step of undo.reverse()) await step().catch(() => undefined);
    throw err;
  }
  return answer(results, !dryRun);
}

/** One file of the plan as the approval shows it, with the diff and the bytes applyFile writes. */
function plannedChange(f: PlannedFile, targets: Map<string, Target>): PlannedChange {
  const src = target(targets, f.path);
  const before = src.current?.version.sha256 ?? null;
  if (f.kind === 'create') return { op: 'create', kind: 'file', path: src.p.rel, sha256Before: null, sha256After: sha256Hex(bytesOf(null, f.newContent as string)), diff: diffWhole(src.p.rel, null, f.newContent as string) };
  const current = src.current as CurrentFile;
  if (f.kind === 'delete') return { op: 'delete', kind: 'file', path: src.p.rel, sha256Before: before, sha256After: null, diff: diffWhole(src.p.rel, shownOld(src, f), ''), removed: { head: current.content.subarray(0, REMOVED_HEAD_BYTES), size: current.content.length } };
  const after = sha256Hex(bytesOf(src, f.newContent as string));
  if (f.moveTo === undefined) return { op: 'update', kind: 'file', path: src.p.rel, sha256Before: before, sha256After: after, diff: diffWhole(src.p.rel, f.oldContent, f.newContent as string) };
  const dst = target(targets, f.moveTo);
  return { op: 'move', kind: 'file', path: src.p.rel, to: dst.p.rel, sha256Before: before, sha256After: after, diff: diffWhole(dst.p.rel, f.oldContent, f.newContent as string) };
}

/** What a diff shows of a file's old content: its text, or a marker for a binary file (only ever deleted). */
function shownOld(t: Target, f: PlannedFile): string {
  return t.current && looksBinary(t.current.content) ? '[binary]\n' : (f.oldContent ?? '');
}

/** The file's text for the plan: UTF-8 without its BOM (added back when written), lossy for a binary file (only deleted). */
function textOf(t: Target): string {
  const text = (t.current as CurrentFile).content.toString('utf8');
  return text.startsWith(UTF8_BOM) ? text.slice(1) : text;
}

function bytesOf(t: Target | null, text: string): Buffer {
  const bom = t?.current && t.current.content.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])) ? UTF8_BOM : '';
  return Buffer.from(bom + text, 'utf8');
}

async function applyFile(ctx: ToolContext, f: PlannedFile, targets: Map<string, Target>, dryRun: boolean, undo: Undo): Promise<FileOut> {
  const src = target(targets, f.path);
  if (f.kind === 'create') {
    const next = bytesOf(null, f.newContent as string);
    const diff = diffWhole(src.p.rel, null, f.newContent as string);
    if (dryRun) return { path: src.p.rel, operation: 'create', move_to: null, ...diff, backup_id: null, version: null };
    ctx.signal.throwIfAborted();
    makeParents(ctx, src.p, undo);
    const committed = await commitChange(ctx, src.p, { current: null, next, operation: 'apply_patch' });
    undo.push(() => fs.unlink(src.p.at));
    return { path: src.p.rel, operation: 'create', move_to: null, ...diff, backup_id: null, version: committed.version };
  }
  const current = src.current as CurrentFile;
  if (f.kind === 'delete') {
    const diff = diffWhole(src.p.rel, shownOld(src, f), '');
    if (dryRun) return { path: src.p.rel, operation: 'delete', move_to: null, ...diff, backup_id: null, version: null };
    const backupId = await removeFile(ctx, src.p, current);
    undo.push(() => putBack(src.p, current));
    return { path: src.p.rel, operation: 'delete', move_to: null, ...diff, backup_id: backupId, version: null };
  }
  if (f.moveTo === undefined) {
    const diff = diffWhole(src.p.rel, f.oldContent, f.newContent as string);
    if (dryRun) return { path: src.p.rel, operation: 'update', move_to: null, ...diff, backup_id: null, version: current.version };
    ctx.signal.throwIfAborted();
    const committed = await commitChange(ctx, src.p, { current, next: bytesOf(src, f.newContent as string), operation: 'apply_patch' });
    undo.push(() => putBack(src.p, current));
    return { path: src.p.rel, operation: 'update', move_to: null, ...diff, backup_id: committed.backupId, version: committed.version };
  }
  const dst = target(targets, f.moveTo);
  const diff = diffWhole(dst.p.rel, f.oldContent, f.newContent as string);
  if (dryRun) return { path: src.p.rel, operation: 'move', move_to: dst.p.rel, ...diff, backup_id: null, version: null };
  ctx.signal.throwIfAborted();
  makeParents(ctx, dst.p, undo);
  const committed = await commitChange(ctx, dst.p, { current: null, next: bytesOf(src, f.newContent as string), operation: 'apply_patch', mode: modeOf(current) });
  undo.push(() => fs.unlink(dst.p.at));
  const backupId = await removeFile(ctx, src.p, current);
  undo.push(() => putBack(src.p, current));
  return { path: src.p.rel, operation: 'move', move_to: dst.p.rel, ...diff, backup_id: backupId, version: committed.version };
}

/** What a rollback does, newest step first. */
type Undo = Array<() => Promise<unknown>>;

/**
 * Creates a new file's missing parents through createMissingParents one directory at a time, so the patch
 * knows exactly which ones it made (not one another writer made meanwhile) and a rollback removes only those.
 */
function makeParents(ctx: ToolContext, p: ResolvedPath, undo: Undo): void {
  while (p.missing.length > 0) {
    const [seg, ...rest] = p.missing as [string, ...string[]];
    const parent = p.dir;
    const step: ResolvedPath = { ...p, missing: [seg], name: rest[0] ?? p.name };
    if (createMissingParents(step, ctx.handles) !== null) {
      const made = fstatSync(step.dir.fd);
      undo.push(async () => removeMadeDir(parent, seg, made));
    }
    p.dir = step.dir;
    p.missing = rest;
    p.at = entryOf(p.dir, [...rest, p.name].join('/'));
  }
}

/**
 * Undo of a directory the patch made: removed through its parent's handle only while it is still that
 * directory and empty (rmdir refuses a non-empty one), so nothing put there since is lost.
 */
function removeMadeDir(parent: DirHandle, name: string, made: { dev: number; ino: number }): void {
  const at = entryOf(parent, name);
  const now = lstatSync(at, { throwIfNoEntry: false });
  if (now?.isDirectory() && now.dev === made.dev && now.ino === made.ino) rmdirSync(at);
}

/** The delete of delete_file: a rename into the backups (an unlink with backups off), then the directory synced. */
async function removeFile(ctx: ToolContext, p: ResolvedPath, current: CurrentFile): Promise<string | null> {
  ctx.signal.throwIfAborted();
  const backupId = await moveToBackup(p.ws, p.at, backupRecord(ctx, p, 'apply_patch', current), current.content.length, current.stat);
  if (backupId === null) await fs.unlink(p.at);
  await fsyncDirectory(entryOf(p.dir, '.'));
  return backupId;
}

/** Undo of one written file: its old content, durably, with its old mode. */
function putBack(p: ResolvedPath, current: CurrentFile): Promise<unknown> {
  return writeFileAtomic(p.ws, p.at, current.content, { mode: modeOf(current) });
}

const LETTER: Record<FileOut['operation'], string> = { create: 'A', update: 'M', delete: 'D', move: 'M' };

/** codex's summary ("Success. Updated the following files:" and A/M/D lines), inside the envelope. */
function answer(files: FileOut[], applied: boolean) {
  const lines = files.map((f) => `${LETTER[f.operation]} ${f.move_to ?? f.path}`);
  const added = files.reduce((n, f) => n + f.lines_added, 0);
  const removed = files.reduce((n, f) => n + f.lines_removed, 0);
  const truncated = files.some((f) => f.diff_truncated);
  const head = applied ? 'Success. Updated the following files:' : '[Dry Run] Would update the following files:';
  const versions = files.map((f) => f.version).filter((v): v is VersionStamp => v !== null);
  return {
    data: { applied, files },
    text: [head, ...lines].join('\n'),
    stats: { files: files.length, lines_added: added, lines_removed: removed },
    partial: !applied || truncated,
    pathResolved: files[0]?.move_to ?? files[0]?.path ?? null,
    ...(files.length === 1 && { version: versions[0] ?? null }),
  };
}
