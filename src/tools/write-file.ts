import { z } from 'zod';
import { E } from '../errors.js';
import { diffWhole } from '../edit/diff.js';
import { withFileLock } from '../workspace/locks.js';
import { checkWriteSize } from '../workspace/workspace.js';
import { checkEncoding, countLines, decodeText, encodeText } from '../workspace/encoding.js';
import { defineTool } from './define.js';
import { EXAMPLE_DOCX_BASE64, EXAMPLE_XLSX_BASE64 } from './documents/examples.js';
import { changeAnswer, commitUnlessDryRun } from './change.js';
import { DiffFields, DryRunArg, PathArg, VersionArgs, VersionSchema } from './args.js';
import { enforceVersion, ensureParent, readCurrent, type CurrentFile } from './file-access.js';

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
  summary: 'create or overwrite; `create_dirs`, `backup`, `allow_empty`, `dry_run`; diff preview',
  risk: 'write',
  // The same content written again (with the version it now has, or none) leaves the same file.
  idempotent: true,
  riskLevel: 'high',
  input: Input,
  example: { path: 'notes.txt', content: 'hello\n' },
  moreExamples: [
    { path: 'report.docx', content: EXAMPLE_DOCX_BASE64, encoding: 'base64' },
    { path: 'data.xlsx', content: EXAMPLE_XLSX_BASE64, encoding: 'base64' },
  ],
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path);
    if (p.stat?.isDirectory()) throw E.isDirectory(p.rel);
    const encoding = checkEncoding(input.encoding);
    const bytes = encodeText(input.content, encoding);
    const { maxEditBytes } = ctx.ws.limits;
    checkWriteSize(ctx.ws, bytes.length, E.writeTooLarge);
    const createdDir = ensureParent(ctx, p, input.create_dirs, input.dry_run);

    return withFileLock(p.ws, p.real, p.rel, async () => {
      const current = await readCurrent(p, maxEditBytes);
      // The bytes the file already holds overwrite nothing a version protects: the repeat of a write answers
      // with the current version and writes nothing (docs/api.md, "Versions"); a stale version is still CONFLICT.
      const same = current !== null && current.content.equals(bytes);
      enforceVersion(ctx, p, current, input, same ? 'mutation' : 'overwrite');
      if (same && !input.dry_run) return unchanged(p.rel, current);
      if (current && current.content.length > 0 && bytes.length === 0 && !input.allow_empty) {
        throw E.contentEmpty();
      }
      const textual = encoding !== 'base64';
      const oldText = current ? (textual ? safeDecode(current.content, encoding) : null) : null;
      const diff = diffWhole(p.rel, current ? (oldText ?? '[binary]\n') : null, textual ? input.content : '[binary]\n');
      const operation = current ? 'update' : 'create';
      const committed = await commitUnlessDryRun(ctx, p, { current, next: bytes, operation: 'write_file', backup: input.backup }, diff, input.dry_run);
      const text = !committed
        ? `Would ${operation} '${p.rel}' (+${diff.lines_added}${current ? `/-${diff.lines_removed}` : ''} lines).`
        : current
          ? `Updated '${p.rel}' (+${diff.lines_added}/-${diff.lines_removed} lines, ${bytes.length} bytes).`
          : `Created '${p.rel}' (${textual ? countLines(input.content) : 0} lines, ${bytes.length} bytes).`;
      return changeAnswer(p, {
        diff,
        before: current?.version ?? null,
        committed,
        originalSize: current?.content.length ?? 0,
        newSize: bytes.length,
        text,
        notes: createdDir ? [`(Created directory: ${createdDir})`] : [],
        data: { operation, created_directory: committed ? createdDir : null },
        riskLevel: current ? 'high' : 'medium',
      });
    }, ctx);
  },
});

/** A write of the content the file already has: nothing written, no backup, the current version. */
function unchanged(rel: string, current: CurrentFile) {
  const size = current.content.length;
  return {
    data: { operation: 'update' as const, created_directory: null, applied: false, diff_preview: '', diff_truncated: false, lines_added: 0, lines_removed: 0, backup_id: null, version: current.version },
    text: `'${rel}' already holds this content (${size} bytes); nothing was written.`,
    stats: { bytes_written: 0, original_size: size, new_size: size, lines_added: 0, lines_removed: 0 },
    pathResolved: rel,
    version: current.version,
  };
}

function safeDecode(buf: Buffer, encoding: string): string | null {
  try {
    return decodeText(buf, encoding, '');
  } catch {
    return null;
  }
}
