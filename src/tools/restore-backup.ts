import { z } from 'zod';
import { listBackups, readBackup } from '../workspace/backups.js';
import { diffWhole } from '../edit/diff.js';
import { withFileLock } from '../workspace/locks.js';
import { asLocalToolPath } from '../workspace/path-syntax.js';
import { resolveInWorkspace } from '../workspace/sandbox.js';
import { defineTool, type ToolContext } from './define.js';
import { changeAnswer, commitUnlessDryRun } from './change.js';
import { DiffFields, DryRunArg, PathArg, VersionArgs, VersionSchema } from './args.js';
import { enforceVersion, ensureParent, readCurrent } from './file-access.js';
import { E } from '../errors.js';

const Input = z.strictObject({
  backup_id: z.string().optional().describe('Id from list_backups (or the backup_id a change returned). Give this or path.'),
  path: PathArg.optional().describe('Instead of backup_id: restore the newest backup of this file, the content before its last change.'),
  dry_run: DryRunArg,
  ...VersionArgs,
});

const Output = z.object({
  applied: z.boolean(),
  path: z.string(),
  ...DiffFields,
  backup_id: z.string().nullable().describe('Backup of the content the restore replaced (a restore can be undone too).'),
  version: VersionSchema.nullable(),
});

/** The id of a file's newest backup; NOT_FOUND when it has none (in this project). */
async function newestBackupOf(ctx: ToolContext, rel: string): Promise<string> {
  const p = await ctx.resolve(rel);
  if (p.ws !== ctx.ws) throw E.restoreOtherProject();
  const newest = (await listBackups(ctx.ws, p.realRel))[0];
  if (!newest) throw E.noBackupOf(p.rel);
  return newest.backup_id;
}

function asText(buf: Buffer): string {
  return buf.includes(0) ? '[binary]\n' : buf.toString('utf8');
}

export const restoreBackup = defineTool({
  name: 'restore_backup',
  description: 'Undo a change: put a backup back in place at its original path. The content it replaces is itself backed up; pass the current version (expected_*) to guard against overwriting newer work.',
  summary: 'undo any change: takes a `backup_id`, or a `path` for its newest backup',
  risk: 'write',
  riskLevel: 'high',
  input: Input,
  example: { path: 'notes.txt', dry_run: true },
  output: Output,
  async run(ctx, input) {
    if ((input.backup_id === undefined) === (input.path === undefined)) throw E.restoreBothGiven();
    const backupId = input.backup_id ?? (await newestBackupOf(ctx, input.path as string));
    const { meta, content } = await readBackup(ctx.ws, backupId);
    if (typeof meta.project === 'string' && ctx.ws.id !== null && meta.project !== ctx.ws.id) throw E.backupNotInProject(backupId);
    // Into the backup's own project, at its stored real path: not ctx.resolve, which would read `[B]/x` as
    // project B's file and let a restore cross projects.
    const p = await resolveInWorkspace(ctx.ws, meta.path, {}, ctx.handles);
    p.rel = asLocalToolPath(p.rel);
    await ctx.admit?.(p);
    if (p.stat?.isDirectory()) throw E.isDirectoryNow(p.rel);
    ensureParent(ctx, p, true, input.dry_run);
    return withFileLock(p.ws, p.real, p.rel, async () => {
      const current = await readCurrent(p, Math.max(p.ws.limits.maxEditBytes, content.length));
      enforceVersion(ctx, p, current, input, 'mutation');
      const diff = diffWhole(p.rel, current ? asText(current.content) : null, asText(content));
      const committed = await commitUnlessDryRun(ctx, p, { current, next: content, operation: 'restore_backup', mode: meta.mode }, diff, input.dry_run);
      return changeAnswer(p, {
        diff,
        before: current?.version ?? null,
        committed,
        originalSize: current?.content.length ?? 0,
        newSize: content.length,
        text: committed
          ? `Restored '${p.rel}' from backup ${meta.backup_id} (+${diff.lines_added}/-${diff.lines_removed} lines, ${content.length} bytes).`
          : `Would restore '${p.rel}' from backup ${meta.backup_id} (+${diff.lines_added}/-${diff.lines_removed} lines).`,
        data: { path: p.rel },
      });
    }, ctx.signal);
  },
});
