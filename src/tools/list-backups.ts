import { z } from 'zod';
import { listBackups as backupsOf } from '../workspace/backups.js';
import { asLocalToolPath } from '../workspace/path-syntax.js';
import { defineTool } from './define.js';

const Input = z.strictObject({
  path: z.string().optional().describe('Only backups of this file (relative path).'),
  limit: z.number().int().min(1).max(1000).default(50),
});

const Entry = z.object({
  backup_id: z.string(),
  path: z.string(),
  operation: z.string().describe('The tool whose change was backed up.'),
  created_at: z.string(),
  size_bytes: z.number().int(),
  sha256: z.string().nullable(),
});

export const listBackups = defineTool({
  name: 'list_backups',
  description: 'List the backups kept before files were overwritten, edited, replaced or deleted (newest first). Pass a backup_id to restore_backup to undo a change.',
  summary: 'the backups kept before each change, newest first; `restore_backup` puts one back',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { path: 'notes.txt' },
  output: z.object({ backups: z.array(Entry), truncated: z.boolean() }),
  async run(ctx, input) {
    // The listing starts at the root (or the file asked for) and passes the policy there like a walk: backups
    // of files this caller may not see, denied or asking, are left out (docs/policy.md, "Walks…").
    const base = await ctx.resolve(input.path ?? '.', input.path === undefined ? { allowRoot: true } : undefined);
    const rel = input.path === undefined ? undefined : base.realRel;
    const ws = base.ws; // `[otherId]/path` lists the other project's backups
    const all = (await backupsOf(ws, rel)).filter((b) => base.allowsEntry?.(b.path, false) ?? true);
    // Paths as a call from this project names them: `[other]/x` for another project's, `./[B]/x` for a local `[B]`.
    const shown = (stored: string) => (ws === ctx.ws ? asLocalToolPath(stored) : `[${ws.id}]/${stored}`);
    const backups = all.slice(0, input.limit).map(({ backup_id, path, operation, created_at, size_bytes, sha256 }) => ({ backup_id, path: shown(path), operation, created_at, size_bytes, sha256 }));
    const truncated = all.length > backups.length;
    const of = rel === undefined ? '' : ` of '${shown(rel)}'`;
    return {
      data: { backups, truncated },
      text: backups.length === 0 ? `No backups${of}.` : `${all.length} backup(s)${of}; newest ${backups[0]?.backup_id}.`,
      stats: { matches: backups.length },
      partial: truncated,
      pathResolved: rel === undefined ? null : shown(rel),
    };
  },
});
