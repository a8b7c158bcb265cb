import { z } from 'zod';
import { ToolError } from '../envelope.js';
import { createBackup } from '../workspace/backups.js';
import { diffWhole } from '../workspace/diff.js';
import { withFileLock } from '../workspace/locks.js';
import { checkEncoding, countLines, decodeText, encodeText } from '../workspace/text.js';
import { sha256Hex, versionOf } from '../workspace/versions.js';
import { defineTool } from './define.js';
import { DiffFields, DryRunArg, PathArg, VersionArgs, VersionSchema, enforceVersion, ensureParent, readCurrent, writeUnlessStopped } from './common.js';

const Input = z.strictObject({
  path: PathArg,
  content: z.string().describe('The complete new content of the file.'),
  encoding: z.string().optional().describe('utf-8 (default), any iconv-lite encoding, or base64 (content is base64 of the bytes).'),
  create_dirs: z.boolean().default(true).describe('Create missing parent directories.'),
  backup: z.boolean().default(true).describe('Keep the old content as a backup (see list_backups).'),
  dry_run: DryRunArg,
  allow_empty: z.boolean().default(false).describe('Allow replacing a non-empty file with empty content.'),
  ...VersionArgs,
});

const Output = z.object({
  applied: z.boolean(),
  operation: z.enum(['create', 'update']),
  ...DiffFields,
  backup_id: z.string().nullable(),
  created_directory: z.string().nullable(),
  version: VersionSchema.nullable().describe('null on a dry run of a new file'),
});

export const writeFile = defineTool({
  name: 'write_file',
  aliases: ['write', 'Write', 'file-write'],
  description:
    'Create a file or overwrite it with the complete new content. Overwriting an existing file needs the version you read (expected_sha256 or expected_mtime_ms + expected_size_bytes). Returns a diff preview; dry_run previews without writing.',
  risk: 'write',
  riskLevel: 'high',
  mutates: true,
  input: Input,
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path);
    if (p.stat?.isDirectory()) throw new ToolError('IS_DIRECTORY', `Path is a directory: ${p.rel}`);
    const encoding = checkEncoding(input.encoding);
    const bytes = encodeText(input.content, encoding);
    const { maxWriteBytes, maxEditBytes } = ctx.ws.limits;
    if (bytes.length > maxWriteBytes) {
      throw new ToolError('FILE_TOO_LARGE', `Content is ${bytes.length} bytes, over TOOLGATE_MAX_WRITE_BYTES (${maxWriteBytes}); write the file in parts with append_to_file.`, {
        size_bytes: bytes.length,
        limit_bytes: maxWriteBytes,
      });
    }
    const createdDir = ensureParent(ctx, p, input.create_dirs, input.dry_run);

    return withFileLock(p.ws, p.real, p.rel, async () => {
      const current = await readCurrent(p, maxEditBytes);
      enforceVersion(ctx, p, current, input, 'overwrite');
      if (current && current.content.length > 0 && bytes.length === 0 && !input.allow_empty) {
        throw new ToolError('INVALID_PARAM', 'Content cannot be empty. Pass allow_empty: true to empty the file.');
      }
      const textual = encoding !== 'base64';
      const oldText = current ? (textual ? safeDecode(current.content, encoding) : null) : null;
      const diff = diffWhole(p.rel, current ? (oldText ?? '[binary]\n') : null, textual ? input.content : '[binary]\n');
      const operation = current ? 'update' : 'create';
      const stats = {
        bytes_written: 0,
        original_size: current?.content.length ?? 0,
        new_size: bytes.length,
        lines_added: diff.lines_added,
        lines_removed: diff.lines_removed,
      };
      if (input.dry_run) {
        const verb = operation === 'create' ? 'create' : 'update';
        return {
          data: { applied: false, operation, ...diff, backup_id: null, created_directory: null, version: current?.version ?? null },
          text: `[Dry Run] Would ${verb} '${p.rel}' (+${diff.lines_added}${operation === 'update' ? `/-${diff.lines_removed}` : ''} lines).`,
          stats,
          partial: true,
          pathResolved: p.rel,
          riskLevel: current ? 'high' : 'medium',
          version: current?.version ?? null,
        } as const;
      }
      const backupId =
        current && input.backup ? await createBackup(p.ws, { rel: p.realRel, operation: 'write_file', mode: current.stat.mode & 0o7777, sha256: current.version.sha256 }, current.content) : null;
      const st = await writeUnlessStopped(ctx, p.ws, p.at, bytes, { mode: current ? current.stat.mode & 0o7777 : undefined });
      const version = versionOf(st, sha256Hex(bytes));
      const lines = textual ? countLines(input.content) : 0;
      let text =
        operation === 'create'
          ? `Created '${p.rel}' (${lines} lines, ${bytes.length} bytes).`
          : `Updated '${p.rel}' (+${diff.lines_added}/-${diff.lines_removed} lines, ${bytes.length} bytes).`;
      if (createdDir) text += `\n(Created directory: ${createdDir})`;
      if (diff.diff_truncated) text += '\n(Diff preview truncated. Use read_file to verify full content.)';
      return {
        data: { applied: true, operation, ...diff, backup_id: backupId, created_directory: createdDir, version },
        text,
        stats: { ...stats, bytes_written: bytes.length },
        partial: diff.diff_truncated,
        pathResolved: p.rel,
        riskLevel: current ? 'high' : 'medium',
        version,
        audit: { sha256_before: current?.version.sha256 ?? null, sha256_after: version.sha256, bytes_written: bytes.length },
      } as const;
    }, ctx.signal);
  },
});

function safeDecode(buf: Buffer, encoding: string): string | null {
  try {
    return decodeText(buf, encoding, '');
  } catch {
    return null;
  }
}
