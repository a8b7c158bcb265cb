// The one way a tool changes a file's content: the backup of the old content, the durable write (unless the
// call was stopped), the new version, and the answer — the same fields, stats and texts for every tool,
// dry run or applied — so that tools cannot drift apart.
import { lstatSync } from 'node:fs';
import type { RiskLevel, VersionStamp } from '../envelope.js';
import type { DiffPreview } from '../edit/diff.js';
import { commitTempFile, discardTempFile, writeFileAtomic, writeTempFile, type AtomicWriteOptions, type CommitOptions, type FileContent, type Stop, type TempFile } from '../workspace/atomic.js';
import { createBackup, discardBackup, type BackupInput } from '../workspace/backups.js';
import { syncInFlight } from '../workspace/sync-first-io.js';
import type { ResolvedPath } from '../workspace/sandbox.js';
import { sha256Hex, versionOf } from '../workspace/versions.js';
import type { ToolContext, ToolResult } from './define.js';
import type { CurrentFile } from './file-access.js';
import { announce, type PlannedChange } from './plan.js';

/** Permission bits of a file, as kept by its backup and its replacement. */
export function modeOf(file: { stat: { mode: number } }): number {
  return file.stat.mode & 0o7777;
}

export interface NewContent {
  /** The file as read under the lock; null for a new file. */
  current: CurrentFile | null;
  next: Buffer;
  /** The tool, recorded with the backup. */
  operation: string;
  /** Keep the old content as a backup (default true). */
  backup?: boolean;
  /** Mode of the new file; default: the current file's, or the atomic writer's default for a new one. */
  mode?: number | undefined;
  /** sha256 of `next` when it was computed already (the plan announced it): not hashed again. */
  nextSha256?: string | undefined;
}

export interface Committed {
  backupId: string | null;
  version: VersionStamp;
}

/**
 * The record every change keeps of the content it replaces or removes (commitChange, edit_file's copy beside its
 * temp file, a delete's rename, a move onto a file): the file, the tool, its mode and version, and who changed it,
 * so that undo_edit and restore_backup see every change the same way (docs/api.md, "Durable writes and backups").
 */
export function backupRecord(ctx: ToolContext, p: ResolvedPath, operation: string, old: { stat: { mode: number; dev: number; ino: number }; version: VersionStamp }): BackupInput {
  const from = { at: p.at, dev: old.stat.dev, ino: old.stat.ino };
  return { rel: p.realRel, operation, mode: modeOf(old), sha256: old.version.sha256, actor: ctx.caller.actor, kept: ctx.keptBackup && ((id) => ctx.keptBackup?.(old.version.sha256, id)), from };
}

/**
 * The planned change of a tool that replaces one file's content (write, append, replace, edit, restore, the text
 * editor): `next` is the new content, or its sha256 when the tool has it already.
 */
export function contentChange(p: ResolvedPath, current: { version: VersionStamp } | null, next: Buffer | string, diff: DiffPreview): PlannedChange {
  return { op: current ? 'update' : 'create', kind: 'file', path: p.rel, sha256Before: current?.version.sha256 ?? null, sha256After: typeof next === 'string' ? next : sha256Hex(next), diff };
}

/** Announces the content change (src/tools/plan.ts), then commits it, or on a dry run only announces it. */
export async function commitUnlessDryRun(ctx: ToolContext, p: ResolvedPath, change: NewContent, diff: DiffPreview, dryRun: boolean): Promise<Committed | null> {
  // The new content's sha256, made for the plan when someone listens, is the commit's too.
  await announce(ctx, () => [contentChange(p, change.current, (change.nextSha256 ??= sha256Hex(change.next)), diff)]);
  return dryRun ? null : commitChange(ctx, p, change);
}

/** Writes of commitChange under way in the process (its services share one thread pool): while another one runs, a backup goes before its own temp file (see there). */
let commitsInFlight = 0;

/** Backs up the old content and replaces the file durably; the caller has checked versions under the lock. */
export async function commitChange(ctx: ToolContext, p: ResolvedPath, change: NewContent): Promise<Committed> {
  const { current } = change;
  // The context itself as the stop: asked whether the call was stopped, it makes no AbortSignal (src/tools/define.ts).
  const opts = { mode: change.mode ?? (current ? modeOf(current) : undefined), stop: ctx };
  // The only write on an idle disk writes its backup while its temp file is fsynced (write_file at one caller:
  // 1.12–1.31×). Beside other writes the thread pool is the limit, and a backup written at once would only
  // queue their fsyncs longer (at 32 callers: 0.89–0.90×): the backup goes first there, as the pool frees.
  const kept = change.backup !== false ? current : null;
  const alone = commitsInFlight === 0 && !syncInFlight();
  commitsInFlight++;
  try {
    if (kept && alone) return await commitBesideBackup(ctx, p, change, kept, opts);
    const backupId = kept ? await createBackup(p.ws, backupRecord(ctx, p, change.operation, kept), kept.content) : null;
    try {
      const st = await writeFileAtomic(p.ws, p.at, change.next, opts);
      return { backupId, version: versionOf(st, change.nextSha256 ?? sha256Hex(change.next)) };
    } catch (err) {
      await dropUnused(p, kept, backupId);
      throw err;
    }
  } finally {
    commitsInFlight--;
  }
}

/** How a change's new content is written: its mode, the call's signal (see commitTempFile), and when to free the old file's blocks. */
export type StageOptions = AtomicWriteOptions & CommitOptions & { stop: Stop };

/** commitChange's overlapped form (edit_file's too): the temp file and the backup written at once (commitStaged). */
export function commitBesideBackup(ctx: ToolContext, p: ResolvedPath, change: NewContent, current: CurrentFile, opts: StageOptions): Promise<Committed> {
  return commitStaged(ctx, p, writeTempFile(p.ws, change.next, opts), change.operation, current, change.nextSha256 ?? change.next, opts);
}

/**
 * Starts writing a change's new content to a temp file (writeTempFile): the thread pool writes and fsyncs it
 * while the caller goes on (hashing, diffing, checking the version); commitStaged or dropStaged ends it.
 */
export function stageContent(p: ResolvedPath, next: FileContent, opts: StageOptions): Promise<TempFile> {
  const temp = writeTempFile(p.ws, next, opts);
  temp.catch(ignore); // awaited later; a failure meanwhile is not an unhandled rejection
  return temp;
}

/**
 * Commits a change whose temp file is under way: the backup written beside it, the new hash computed meanwhile
 * (`next` is the new content, or its sha256 when the tool has it already); the rename waits for both, so the
 * old content is kept before it is replaced. On any failure the change is refused and its temp file removed.
 */
export async function commitStaged(ctx: ToolContext, p: ResolvedPath, temp: Promise<TempFile>, operation: string, current: CurrentFile, next: Buffer | string, opts: StageOptions): Promise<Committed> {
  temp.catch(ignore); // awaited after the backup; a failure meanwhile is not an unhandled rejection
  const backup = createBackup(p.ws, backupRecord(ctx, p, operation, current), current.content);
  try {
    const sha = typeof next === 'string' ? next : sha256Hex(next);
    const backupId = await backup;
    const st = await commitTempFile(await temp, p.at, opts);
    return { backupId, version: versionOf(st, sha) };
  } catch (err) {
    // It reads the old content's buffer, which the caller may reuse. Kept, it would be a backup of a change
    // not made, still linked to the file it was taken from: it goes.
    await dropUnused(p, current, await backup.catch(() => null));
    await dropStaged(temp);
    throw err;
  }
}

/**
 * Removes the backup of a change that failed before its rename: the file still is the inode that was read (and
 * maybe linked as the backup). A failure after the rename (the directory's fsync) keeps it: the change was made.
 */
async function dropUnused(p: ResolvedPath, current: CurrentFile | null, backupId: string | null): Promise<void> {
  if (backupId === null || current === null) return;
  const st = lstatSync(p.at, { throwIfNoEntry: false });
  if (st && st.dev === current.stat.dev && st.ino === current.stat.ino) await discardBackup(p.ws, backupId);
}

/** Removes a staged temp file once it is written: the change was refused before its commit. */
export async function dropStaged(temp: Promise<TempFile>): Promise<void> {
  await temp.then(discardTempFile, ignore);
}

/** A failure handled elsewhere (one function for every write, not a closure each). */
function ignore(): void {}

export interface ChangeAnswer<E, B extends VersionStamp | null> {
  diff: DiffPreview;
  /** The version before the change (null for a new file). */
  before: B;
  /** What the commit did; null on a dry run. */
  committed: Committed | null;
  originalSize: number;
  newSize: number;
  /** One sentence: what would happen on a dry run ("Would …"), what happened otherwise. */
  text: string;
  /** Lines after the sentence (e.g. a directory created on the way). */
  notes?: string[];
  /** The tool's own data fields besides applied, the diff, backup_id and version. */
  data: E;
  /** The tool's own stats besides sizes, bytes written and line counts. */
  stats?: Record<string, number>;
  riskLevel?: RiskLevel;
}

const DRY_RUN = '[Dry Run] ';
const TRUNCATED_NOTE = '(Diff preview truncated. Use read_file to verify full content.)';

/** The answer of a change tool, dry run (status partial) or applied. */
export function changeAnswer<E extends object, B extends VersionStamp | null>(p: ResolvedPath, a: ChangeAnswer<E, B>) {
  const applied = a.committed !== null;
  const version: B | VersionStamp = a.committed?.version ?? a.before;
  const stats = {
    ...a.stats,
    bytes_written: applied ? a.newSize : 0,
    original_size: a.originalSize,
    new_size: a.newSize,
    lines_added: a.diff.lines_added,
    lines_removed: a.diff.lines_removed,
  };
  const lines = [applied ? a.text : DRY_RUN + a.text, ...(applied ? (a.notes ?? []) : [])];
  if (applied && a.diff.diff_truncated) lines.push(TRUNCATED_NOTE);
  const result: ToolResult<E & DiffPreview & { applied: boolean; backup_id: string | null; version: B | VersionStamp }> = {
    data: { ...a.data, applied, ...a.diff, backup_id: a.committed?.backupId ?? null, version },
    text: lines.join('\n'),
    stats,
    partial: applied ? a.diff.diff_truncated : true,
    pathResolved: p.rel,
    version,
    ...(a.riskLevel && { riskLevel: a.riskLevel }),
  };
  if (a.committed) result.audit = { sha256_before: a.before?.sha256 ?? null, sha256_after: a.committed.version.sha256, bytes_written: a.newSize };
  return result;
}
