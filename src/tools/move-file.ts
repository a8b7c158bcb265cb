import type { Stats } from 'node:fs';
import fs from 'node:fs/promises';
import { z } from 'zod';
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { fsyncDirectory, writeFileAtomic } from '../workspace/atomic.js';
import { createBackup, discardBackup } from '../workspace/backups.js';
import { fileState, type FileState } from '../workspace/file-state.js';
import { withFileLock } from '../workspace/locks.js';
import { describeKind, entryOf, type ResolvedPath } from '../workspace/sandbox.js';
import { hasExpectation, sha256Hex, versionOf } from '../workspace/versions.js';
import { isInside } from '../workspace/workspace.js';
import { backupRecord, modeOf } from './change.js';
import { defineTool, type ToolContext } from './define.js';
import { walkTree } from '../search/walk.js';
import { formatBytes } from '../workspace/encoding.js';
import { PathArg, VersionArgs, VersionSchema } from './args.js';
import { enforceVersion, ensureParent, expectationsOf, readCurrent, type CurrentFile } from './file-access.js';
import { announce, REMOVED_HEAD_BYTES } from './plan.js';

const Input = z.strictObject({
  path: PathArg.describe('File or directory to move (relative to the workspace root).'),
  destination: z.string().describe('Its new path, including the name (e.g. "docs/old/notes.md"). Missing parent directories are created.'),
  overwrite: z.boolean().default(false).describe('Replace an existing destination file (it is backed up first). A directory is never overwritten.'),
  ...VersionArgs,
});

const Output = z.object({
  moved: z.boolean(),
  type: z.enum(['file', 'directory']),
  source: z.string(),
  destination: z.string(),
  overwritten: z.boolean(),
  backup_id: z.string().nullable().describe('Backup of the overwritten destination file.'),
  created_directory: z.string().nullable(),
  version: VersionSchema.nullable().describe('Version of the moved file at its new path (null for a directory).'),
});

async function lstatOrNull(real: string): Promise<Stats | null> {
  try {
    return await fs.lstat(real);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Why an existing destination cannot be replaced, or null when it can (a regular file, with overwrite). */
function destinationRefusal(dst: ResolvedPath, st: Stats, srcIsDir: boolean, overwrite: boolean): ToolError | null {
  if (st.isDirectory()) {
    return E.moveOntoDirectory(dst.rel);
  }
  if (!overwrite) return E.moveDestinationExists(dst.rel);
  if (srcIsDir) return E.moveDirectoryOntoFile(dst.rel);
  if (st.isSymbolicLink()) return E.moveDestinationBecameLink(dst.rel);
  if (!st.isFile()) return E.moveDestinationNotRegular(describeKind(st), dst.rel);
  return null;
}

export const moveFile = defineTool({
  name: 'move_file',
  paramAliases: { source: 'path', dest: 'destination', target: 'destination' },
  description:
    'Move or rename a file or directory inside the workspace. An existing destination file is replaced only with overwrite: true (and backed up); a directory is never overwritten. Pass the version of the source you read to guard the move.',
  summary: 'both paths sandboxed; `overwrite`',
  risk: 'write',
  riskLevel: 'high',
  input: Input,
  example: { path: 'notes.txt', destination: 'archive/notes.txt' },
  output: Output,
  async run(ctx, input) {
    // Both names are acted on as they are: a symlink there is the object, never followed.
    const src = await ctx.resolve(input.path, { noFollowLeaf: true });
    const dst = await ctx.resolve(input.destination, { noFollowLeaf: true, receives: src });
    const isDir = await checkMove(ctx, input, src, dst);
    // Both names are locked, always in the same order, so two opposite moves cannot deadlock.
    const [first, second] = src.real < dst.real ? [src, dst] : [dst, src];
    return withFileLock(
      first.ws,
      first.real,
      first.rel,
      () => withFileLock(second.ws, second.real, second.rel, () => moveLocked(ctx, input, src, dst, isDir), ctx.signal),
      ctx.signal,
    );
  },
});

type MoveInput = z.output<typeof Input>;

/** The refusals known before the locks: what the source is, where it may go, what may be replaced. True for a directory. */
async function checkMove(ctx: ToolContext, input: MoveInput, src: ResolvedPath, dst: ResolvedPath): Promise<boolean> {
  if (src.leafIsLink) {
    await ctx.resolve(input.path); // a link leading outside is refused as such
    throw E.moveSymlink(src.rel);
  }
  if (!src.stat) throw E.fileNotFound(src.rel);
  const isDir = src.stat.isDirectory();
  if (!isDir && !src.stat.isFile()) throw E.notRegularFile(describeKind(src.stat), src.rel);
  if (src.real === dst.real) throw E.moveOntoItself(src.rel);
  if (isDir && isInside(src.real, dst.real)) throw E.moveIntoItself(src.rel, dst.rel);
  if (isDir && isInside(src.real, src.ws.stateDir)) throw E.moveStateDirectory(src.rel);
  if (isDir && hasExpectation(expectationsOf(ctx, input))) throw E.moveDirectoryVersion();
  if (dst.leafIsLink) {
    await ctx.resolve(input.destination);
    throw input.overwrite ? E.moveOntoSymlink(dst.rel) : E.moveDestinationIsLink(dst.rel);
  }
  if (dst.stat) {
    const refusal = destinationRefusal(dst, dst.stat, isDir, input.overwrite);
    if (refusal) throw refusal;
  }
  return isDir;
}

/**
 * The move under both locks: the source and destination looked at again, the move announced (and approved),
 * the replaced file backed up, then the rename (or a copy across volumes) made durable.
 */
async function moveLocked(ctx: ToolContext, input: MoveInput, src: ResolvedPath, dst: ResolvedPath, isDir: boolean) {
  const current = await sourceNow(ctx, input, src, isDir);
  let backupId: string | null = null;
  const dstStat = await lstatOrNull(dst.at);
  let old: CurrentFile | null = null;
  if (dstStat) {
    const refusal = destinationRefusal(dst, dstStat, isDir, input.overwrite);
    if (refusal) throw refusal;
    old = await readCurrent(dst, dst.ws.limits.maxEditBytes);
  }
  // A directory's "version" for the approval: what it holds (names, sizes, times), so a file put there after the approval is a different move.
  const tree = isDir && ctx.planned ? await treeOf(ctx, src) : null;
  const sha = current?.version.sha256 ?? (tree ? sha256Hex(tree.identity) : null);
  await announce(ctx, () => [
    ...(old ? [{ op: 'delete', kind: 'file', path: dst.rel, sha256Before: old.version.sha256, sha256After: null, removed: { head: old.content.subarray(0, REMOVED_HEAD_BYTES), size: old.content.length } } as const] : []),
    { op: 'move', kind: isDir ? 'directory' : 'file', path: src.rel, to: dst.rel, sha256Before: sha, sha256After: sha, ...(tree && { listing: tree.listing }) },
  ]);
  // Made only now, under the locks and after the announcement: an approved repeat that is refused leaves no directory behind.
  const createdDir = ensureParent(ctx, dst, true);
  if (old) backupId = await createBackup(dst.ws, backupRecord(ctx, dst, 'move_file', old), old.content);
  try {
    ctx.signal.throwIfAborted(); // stopped (time limit): refuse before the move, never after answering
    await fs.rename(src.at, dst.at);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EXDEV') await moveAcrossVolumes(src, dst, isDir, current);
    else {
      // Nothing was moved: the old destination keeps its content, and its backup (maybe its own inode, linked) goes.
      if (backupId !== null) await discardBackup(dst.ws, backupId);
      throw err;
    }
  }
  if (isDir) await decideArrived(ctx, input.destination, src, dst);
  await fsyncDirectory(entryOf(dst.dir, '.'));
  if (src.dir.real !== dst.dir.real) await fsyncDirectory(entryOf(src.dir, '.'));
  const version = current ? versionOf(await fs.lstat(dst.at), current.version.sha256) : null;
  let text = `Moved ${isDir ? 'directory' : 'file'} '${src.rel}' to '${dst.rel}'.`;
  if (dstStat) text += ` Overwrote the old '${dst.rel}'${backupId ? ` (backup_id '${backupId}')` : ''}.`;
  if (createdDir) text += `\n(Created directory: ${createdDir})`;
  return {
    data: {
      moved: true,
      type: isDir ? 'directory' : 'file',
      source: src.rel,
      destination: dst.rel,
      overwritten: dstStat !== null,
      backup_id: backupId,
      created_directory: createdDir,
      version,
    },
    text,
    stats: { bytes_written: 0 },
    pathResolved: src.rel,
    version,
    audit: { sha256_before: current?.version.sha256 ?? null, sha256_after: current?.version.sha256 ?? null },
  } as const;
}

/** The source under the locks: still a directory, or the file (whose version the caller may guard) as it is now. */
async function sourceNow(ctx: ToolContext, input: MoveInput, src: ResolvedPath, isDir: boolean): Promise<FileState | null> {
  if (isDir) {
    const st = await lstatOrNull(src.at);
    if (!st) throw E.fileNotFound(src.rel);
    if (!st.isDirectory()) throw E.movedWhileMoving(src.rel);
    return null;
  }
  const current = await fileState(src, ctx.signal);
  if (!current) throw E.fileNotFound(src.rel);
  enforceVersion(ctx, src, { content: Buffer.alloc(0), ...current }, input, 'mutation');
  return current;
}

/** Entries a moved directory's listing shows (and binds); past it the listing says it was cut. */
const TREE_MAX_ENTRIES = 1000;

/** What a directory holds, for the approval of its move: one line per entry (files with their size), breadth-first. */
async function treeOf(ctx: ToolContext, dir: ResolvedPath): Promise<{ listing: { text: string; truncated: boolean }; identity: string }> {
  const lines: string[] = [];
  const identity: string[] = [];
  const walk = await walkTree(dir.ws, dir, {
    maxDepth: 64,
    maxEntries: TREE_MAX_ENTRIES,
    deadline: Date.now() + dir.ws.limits.searchTimeoutMs,
    signal: ctx.signal,
    includeHidden: true,
    reportSkipped: true,
    stats: true,
    onEntry: (e) => {
      const isDir = e.kind === 'directory';
      lines.push(isDir ? `${e.relFromStart}/` : e.kind === 'file' ? `${e.relFromStart} (${formatBytes(e.stat?.size ?? 0)})` : `${e.relFromStart} (${e.kind})`);
      identity.push(`${e.kind}\0${e.relFromStart}\0${e.stat?.size ?? ''}\0${e.stat?.mtimeMs ?? ''}`);
    },
  });
  if (lines.length === 0) lines.push('(empty)');
  return { listing: { text: `${lines.join('\n')}\n`, truncated: walk.truncated }, identity: identity.join('\n') };
}

/** rename(2) cannot cross file systems (nested mounts, other projects): copy durably, then unlink the source. */
async function moveAcrossVolumes(src: ResolvedPath, dst: ResolvedPath, isDir: boolean, current: FileState | null): Promise<void> {
  const limit = dst.ws.limits.maxEditBytes;
  if (isDir || !current) throw E.moveAcrossVolumes(src.rel, dst.rel);
  const copy = await readCurrent(src, limit);
  if (!copy || copy.version.sha256 !== current.version.sha256) throw E.movedWhileMoving(src.rel);
  await writeFileAtomic(dst.ws, dst.at, copy.content, { mode: modeOf(copy) });
  await fs.unlink(src.at);
}

/**
 * A file written into a directory while the policy checked its paths arrives unchecked: the policy decides the
 * tree again where it now is (docs/policy.md, "Moves"), and a refusal puts the directory back.
 */
async function decideArrived(ctx: ToolContext, destination: string, src: ResolvedPath, dst: ResolvedPath): Promise<void> {
  try {
    await ctx.resolve(destination, { noFollowLeaf: true, arrived: true });
  } catch (err) {
    // A directory moved by a rename only (one volume), so a rename puts it back.
    await fs.rename(dst.at, src.at);
    throw err;
  }
}
