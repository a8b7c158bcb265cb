import { z } from 'zod';
import { E } from '../errors.js';
import { diffSpans } from '../edit/diff.js';
import { withFileLock } from '../workspace/locks.js';
import { checkWriteSize } from '../workspace/workspace.js';
import { countLines, looksBinary } from '../workspace/encoding.js';
import { defineTool } from './define.js';
import { changeAnswer, commitUnlessDryRun } from './change.js';
import { DiffFields, DryRunArg, PathArg, VersionArgs, VersionSchema } from './args.js';
import { enforceVersion, readCurrent } from './file-access.js';

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

/** A file whose first line ends with CRLF gets CRLF line endings in appended text too (docs/api.md, "Durable writes and backups"). */
function matchLineEndings(existing: Buffer, content: string): string {
  const nl = existing.indexOf(10);
  if (nl <= 0 || existing[nl - 1] !== 13) return content;
  return content.replace(/\r?\n/g, '\r\n');
}

export const appendToFile = defineTool({
  name: 'append_to_file',
  description:
    'Append text to the end of an existing file (it must exist; use write_file to create one). Keeps the file mode and CRLF line endings; the old content is backed up. dry_run previews the diff without writing.',
  summary: 'append to an existing file',
  risk: 'write',
  riskLevel: 'medium',
  input: Input,
  example: { path: 'notes.txt', content: 'one more line\n' },
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path);
    if (p.stat?.isDirectory()) throw E.isDirectory(p.rel);
    const { maxEditBytes } = ctx.ws.limits;
    checkWriteSize(ctx.ws, Buffer.byteLength(input.content), E.appendTooLarge);

    return withFileLock(p.ws, p.real, p.rel, async () => {
      const current = await readCurrent(p, maxEditBytes);
      if (!current) throw E.fileNotFound(p.rel);
      enforceVersion(ctx, p, current, input, 'mutation');
      if (current.content.length > 0 && looksBinary(current.content)) {
        throw E.appendToBinary(p.rel);
      }
      const added = matchLineEndings(current.content, input.content);
      const addedBytes = Buffer.from(added, 'utf8');
      checkWriteSize(ctx.ws, addedBytes.length, E.appendTooLargeCrlf);
      // The preview only: old bytes that are not valid utf-8 show as U+FFFD but are written unchanged.
      const oldText = current.content.toString('utf8');
      const newText = oldText + added;
      const diff = diffSpans(p.rel, oldText, newText, [{ oldStart: oldText.length, oldEnd: oldText.length, newStart: oldText.length, newEnd: newText.length }]);
      const next = Buffer.concat([current.content, addedBytes]);
      const committed = await commitUnlessDryRun(ctx, p, { current, next, operation: 'append_to_file' }, diff, input.dry_run);
      const addedLines = countLines(added);
      return changeAnswer(p, {
        diff,
        before: current.version,
        committed,
        originalSize: current.content.length,
        newSize: next.length,
        text: committed
          ? `Appended ${added.length} chars (${addedLines} line${addedLines === 1 ? '' : 's'}) to '${p.rel}' (now ${next.length} bytes).`
          : `Would append ${added.length} chars to '${p.rel}' (+${diff.lines_added}/-${diff.lines_removed} lines).`,
        data: { bytes_appended: committed ? addedBytes.length : 0 },
      });
    }, ctx);
  },
});
