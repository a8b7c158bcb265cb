import { z } from 'zod';
import { ToolError } from '../envelope.js';
import { writeFileAtomic } from '../workspace/atomic.js';
import { createBackup } from '../workspace/backups.js';
import { diffSpans } from '../workspace/diff.js';
import { applyEdits, type EditRequest } from '../workspace/edit-engine.js';
import { withFileLock } from '../workspace/locks.js';
import { checkEncoding, decodeText, encodeText, looksBinary } from '../workspace/text.js';
import { sha256Hex, versionOf } from '../workspace/versions.js';
import { defineTool } from './define.js';
import { DiffFields, DryRunArg, PathArg, VersionArgs, VersionSchema, enforceVersion, readCurrent } from './common.js';

const Edit = z.strictObject({
  old_text: z.string().min(1).describe('Text to replace, quoted from the file (a few lines of context make it unique).'),
  new_text: z.string().describe('Replacement text.'),
  replace_all: z.boolean().default(false).describe('Replace every match instead of requiring a unique one.'),
});

const Input = z
  .strictObject({
    path: PathArg,
    old_text: z.string().min(1).optional().describe('Text to replace (alias oldText, old). Use this or edits[].'),
    new_text: z.string().optional().describe('Replacement text (alias newText, new).'),
    replace_all: z.boolean().default(false),
    edits: z.array(Edit).min(1).max(100).optional().describe('Several edits applied in order, all or nothing.'),
    encoding: z.string().optional().describe('Encoding of the file (default utf-8); kept when writing back.'),
    dry_run: DryRunArg,
    ...VersionArgs,
  })
  .describe('Either old_text + new_text, or edits[].');

const Output = z.object({
  applied: z.boolean(),
  replacements: z.number().int(),
  edits: z.array(
    z.object({
      stage: z.enum(['exact', 'line_endings', 'trailing_whitespace', 'indentation', 'unicode']).describe('How loosely old_text had to be matched.'),
      replacements: z.number().int(),
      start_line: z.number().int(),
      end_line: z.number().int(),
    }),
  ),
  snippet: z.string().describe('The edited region ±4 lines, with line numbers.'),
  ...DiffFields,
  backup_id: z.string().nullable(),
  version: VersionSchema,
});

function editsOf(input: z.output<typeof Input>): EditRequest[] {
  if (input.edits !== undefined) {
    if (input.old_text !== undefined || input.new_text !== undefined) throw new ToolError('INVALID_PARAM', 'Pass either old_text/new_text or edits[], not both.');
    return input.edits;
  }
  if (input.old_text === undefined || input.new_text === undefined) throw new ToolError('INVALID_PARAM', 'Missing required parameter: old_text and new_text (or edits[]).');
  return [{ old_text: input.old_text, new_text: input.new_text, replace_all: input.replace_all }];
}

export const editFile = defineTool({
  name: 'edit_file',
  aliases: ['edit'],
  paramAliases: { oldText: 'old_text', newText: 'new_text', old: 'old_text', new: 'new_text', replaceAll: 'replace_all' },
  description:
    'Replace text in a file. old_text must match one place (exactly, or tolerating line endings, trailing spaces, indentation and quote style); the replacement is re-indented to the file and keeps its line endings. Several matches is MULTIPLE_MATCHES (add context or set replace_all); no match names the closest region. edits[] applies several edits all or nothing.',
  risk: 'write',
  riskLevel: 'high',
  mutates: true,
  input: Input,
  output: Output,
  async run(ctx, input) {
    const edits = editsOf(input);
    const encoding = checkEncoding(input.encoding);
    if (encoding === 'base64') throw new ToolError('INVALID_PARAM', 'edit_file works on text; use write_file for binary content.');
    const p = await ctx.resolve(input.path);
    return withFileLock(p.ws, p.real, p.rel, async () => {
      const current = await readCurrent(p, p.ws.limits.maxEditBytes);
      if (!current) throw new ToolError('NOT_FOUND', `File not found: ${p.rel}`);
      enforceVersion(ctx, p, current, input, 'mutation');
      if (encoding === 'utf-8' && looksBinary(current.content)) throw new ToolError('BINARY_FILE', `File '${p.rel}' is binary; edit_file only changes text files.`);
      const oldText = decodeText(current.content, encoding, p.rel);
      const outcome = applyEdits(oldText, edits);
      const diff = diffSpans(p.rel, oldText, outcome.text, outcome.spans);
      const replacements = outcome.edits.reduce((n, e) => n + e.replacements, 0);
      const bytes = encodeText(outcome.text, encoding);
      const stats = {
        replacements,
        original_size: current.content.length,
        new_size: bytes.length,
        lines_added: diff.lines_added,
        lines_removed: diff.lines_removed,
      };
      const tolerant = outcome.edits.filter((e) => e.stage !== 'exact').map((e) => e.stage);
      const note = tolerant.length > 0 ? ` (matched ignoring ${[...new Set(tolerant)].join(', ').replaceAll('_', ' ')})` : '';
      if (input.dry_run) {
        return {
          data: { applied: false, replacements, edits: outcome.edits, snippet: outcome.snippet, ...diff, backup_id: null, version: current.version },
          text: `[Dry Run] Would edit '${p.rel}' (${replacements} replacement(s), +${diff.lines_added}/-${diff.lines_removed} lines)${note}.`,
          stats: { ...stats, bytes_written: 0 },
          partial: true,
          pathResolved: p.rel,
          version: current.version,
        };
      }
      const backupId = await createBackup(p.ws, { rel: p.realRel, operation: 'edit_file', mode: current.stat.mode & 0o7777, sha256: current.version.sha256 }, current.content);
      const st = await writeFileAtomic(p.ws, p.real, bytes, { mode: current.stat.mode & 0o7777 });
      const version = versionOf(st, sha256Hex(bytes));
      let text = `Edited '${p.rel}' (${replacements} replacement(s), +${diff.lines_added}/-${diff.lines_removed} lines, ${bytes.length} bytes)${note}.`;
      if (diff.diff_truncated) text += '\n(Diff preview truncated. Use read_file to verify full content.)';
      return {
        data: { applied: true, replacements, edits: outcome.edits, snippet: outcome.snippet, ...diff, backup_id: backupId, version },
        text,
        stats: { ...stats, bytes_written: bytes.length },
        partial: diff.diff_truncated,
        pathResolved: p.rel,
        version,
        audit: { sha256_before: current.version.sha256, sha256_after: version.sha256, bytes_written: bytes.length },
      };
    });
  },
});
