import { z } from 'zod';
import { ToolError } from '../envelope.js';
import { createBackup } from '../workspace/backups.js';
import { diffSpans } from '../workspace/diff.js';
import { withFileLock } from '../workspace/locks.js';
import { countLines, looksBinary } from '../workspace/text.js';
import { sha256Hex, versionOf } from '../workspace/versions.js';
import { defineTool } from './define.js';
import { DiffFields, DryRunArg, PathArg, VersionArgs, VersionSchema, enforceVersion, readCurrent, writeUnlessStopped } from './common.js';

const Input = z.strictObject({
  path: PathArg,
  content: z.string().min(1).describe('Text to add at the end of the file (utf-8). Include a leading "\\n" when the file does not end with a newline.'),
  dry_run: DryRunArg,
  ...VersionArgs,
});

const Output = z.object({
  applied: z.boolean(),
  ...DiffFields,
  bytes_appended: z.number().int(),
  backup_id: z.string().nullable(),
  version: VersionSchema.describe('After the append; the current version on a dry run.'),
});

/** A file whose first line ends with CRLF gets CRLF line endings in appended text too (SPEC §3). */
function matchLineEndings(existing: Buffer, content: string): string {
  const nl = existing.indexOf(10);
  if (nl <= 0 || existing[nl - 1] !== 13) return content;
  return content.replace(/\r?\n/g, '\r\n');
}

export const appendToFile = defineTool({
  name: 'append_to_file',
  description:
    'Append text to the end of an existing file (it must exist; use write_file to create one). Keeps the file mode and CRLF line endings; the old content is backed up. dry_run previews the diff without writing.',
  risk: 'write',
  riskLevel: 'medium',
  mutates: true,
  input: Input,
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path);
    if (p.stat?.isDirectory()) throw new ToolError('IS_DIRECTORY', `Path is a directory: ${p.rel}`);
    const { maxWriteBytes, maxEditBytes } = ctx.ws.limits;
    const contentBytes = Buffer.byteLength(input.content);
    if (contentBytes > maxWriteBytes) {
      throw new ToolError('FILE_TOO_LARGE', `Content is ${contentBytes} bytes, over TOOLGATE_MAX_WRITE_BYTES (${maxWriteBytes}); append it in smaller parts.`, {
        size_bytes: contentBytes,
        limit_bytes: maxWriteBytes,
      });
    }

    return withFileLock(p.ws, p.real, p.rel, async () => {
      const current = await readCurrent(p, maxEditBytes);
      if (!current) throw new ToolError('NOT_FOUND', `File not found: ${p.rel}`);
      enforceVersion(ctx, p, current, input, 'mutation');
      if (current.content.length > 0 && looksBinary(current.content)) {
        throw new ToolError('BINARY_FILE', `File '${p.rel}' is binary; text cannot be appended to it.`);
      }
      const added = matchLineEndings(current.content, input.content);
      const addedBytes = Buffer.from(added, 'utf8');
      if (addedBytes.length > maxWriteBytes) {
        throw new ToolError('FILE_TOO_LARGE', `Content is ${addedBytes.length} bytes with CRLF line endings, over TOOLGATE_MAX_WRITE_BYTES (${maxWriteBytes}); append it in smaller parts.`);
      }
      // The preview only: old bytes that are not valid utf-8 show as U+FFFD but are written unchanged.
      const oldText = current.content.toString('utf8');
      const newText = oldText + added;
      const diff = diffSpans(p.rel, oldText, newText, [{ oldStart: oldText.length, oldEnd: oldText.length, newStart: oldText.length, newEnd: newText.length }]);
      const chars = added.length;
      const stats = {
        bytes_written: 0,
        original_size: current.content.length,
        new_size: current.content.length + addedBytes.length,
        lines_added: diff.lines_added,
        lines_removed: diff.lines_removed,
      };
      if (input.dry_run) {
        return {
          data: { applied: false, ...diff, bytes_appended: 0, backup_id: null, version: current.version },
          text: `[Dry Run] Would append ${chars} chars to '${p.rel}' (+${diff.lines_added}/-${diff.lines_removed} lines).`,
          stats,
          partial: true,
          pathResolved: p.rel,
          version: current.version,
        };
      }
      const mode = current.stat.mode & 0o7777;
      const backupId = await createBackup(p.ws, { rel: p.realRel, operation: 'append_to_file', mode, sha256: current.version.sha256 }, current.content);
      const bytes = Buffer.concat([current.content, addedBytes]);
      const st = await writeUnlessStopped(ctx, p.ws, p.at, bytes, { mode });
      const version = versionOf(st, sha256Hex(bytes));
      const addedLines = countLines(added);
      let text = `Appended ${chars} chars (${addedLines} line${addedLines === 1 ? '' : 's'}) to '${p.rel}' (now ${bytes.length} bytes).`;
      if (diff.diff_truncated) text += '\n(Diff preview truncated. Use read_file to verify full content.)';
      return {
        data: { applied: true, ...diff, bytes_appended: addedBytes.length, backup_id: backupId, version },
        text,
        stats: { ...stats, bytes_written: bytes.length },
        partial: diff.diff_truncated,
        pathResolved: p.rel,
        version,
        audit: { sha256_before: current.version.sha256, sha256_after: version.sha256, bytes_written: bytes.length },
      };
    }, ctx.signal);
  },
});
