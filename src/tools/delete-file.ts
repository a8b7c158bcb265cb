import fs from 'node:fs/promises';
import { z } from 'zod';
import { E } from '../errors.js';
import { fsyncDirectory } from '../workspace/atomic.js';
import { moveToBackup } from '../workspace/backups.js';
import { fileState } from '../workspace/file-state.js';
import { entryOf } from '../workspace/sandbox.js';
import { withFileLock } from '../workspace/locks.js';
import { formatBytes } from '../workspace/encoding.js';
import { backupRecord } from './change.js';
import { defineTool } from './define.js';
import { DryRunArg, PathArg, VersionArgs, VersionSchema } from './args.js';
import { enforceVersion, readHead } from './file-access.js';
import { announce, REMOVED_HEAD_BYTES } from './plan.js';

const Input = z.strictObject({
  path: PathArg,
  dry_run: DryRunArg,
  ...VersionArgs,
});

const Output = z.object({
  deleted: z.boolean(),
  backup_id: z.string().nullable().describe('restore_backup with this id brings the file back; null on a dry run or with backups disabled.'),
  version: VersionSchema.describe('Version of the file that was (or would be) deleted.'),
});

export const deleteFile = defineTool({
  name: 'delete_file',
  aliases: ['file-delete'],
  description:
    'Delete one file (never a directory). The file is moved into the backups first, so restore_backup can undo it. Pass the version you read to make sure you delete what you saw; dry_run only checks.',
  summary: 'files only; moved to a backup first',
  risk: 'destructive',
  // Deleting what is already gone leaves the workspace as it was (the second call says NOT_FOUND).
  idempotent: true,
  riskLevel: 'high',
  input: Input,
  example: { path: 'archive/notes.txt', dry_run: true },
  output: Output,
  async run(ctx, input) {
    // The name itself is deleted, so a symlink there is the object (never its target).
    const p = await ctx.resolve(input.path, { noFollowLeaf: true });
    if (p.leafIsLink) {
      const target = await ctx.resolve(input.path); // a link leading outside is refused as such
      throw E.deleteSymlink(p.rel, target.realRel);
    }
    if (p.stat?.isDirectory()) throw E.isDirectory(p.rel, '; delete_file removes files only.');

    return withFileLock(p.ws, p.real, p.rel, async () => {
      const current = await fileState(p, ctx.signal);
      if (!current) throw E.fileNotFound(p.rel);
      enforceVersion(ctx, p, { content: Buffer.alloc(0), ...current }, input, 'mutation');
      const size = current.stat.size;
      await announce(ctx, () => [
        { op: 'delete', kind: 'file', path: p.rel, sha256Before: current.version.sha256, sha256After: null, removed: readHead(p, REMOVED_HEAD_BYTES) ?? { head: Buffer.alloc(0), size } },
      ]);
      if (input.dry_run) {
        return {
          data: { deleted: false, backup_id: null, version: current.version },
          text: `[Dry Run] Would delete '${p.rel}' (${formatBytes(size)}).`,
          stats: { original_size: size },
          partial: true,
          pathResolved: p.rel,
        };
      }
      ctx.signal.throwIfAborted(); // stopped (time limit): refuse before the delete, never after answering
      // The rename into the backups is the delete; without backups the file is unlinked.
      const backupId = await moveToBackup(p.ws, p.at, backupRecord(ctx, p, 'delete_file', current), size, current.stat);
      if (backupId === null) await fs.unlink(p.at);
      await fsyncDirectory(entryOf(p.dir, '.'));
      return {
        data: { deleted: true, backup_id: backupId, version: current.version },
        text: `Deleted '${p.rel}' (${formatBytes(size)})${backupId ? `; restore_backup with backup_id '${backupId}' undoes it` : ''}.`,
        stats: { original_size: size },
        pathResolved: p.rel,
        audit: { sha256_before: current.version.sha256, sha256_after: null },
      };
    }, ctx.signal);
  },
});
