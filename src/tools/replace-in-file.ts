import { z } from 'zod';
import { E } from '../errors.js';
import { diffSpans, type ChangedSpan } from '../edit/diff.js';
import { withFileLock } from '../workspace/locks.js';
import { withMemory } from '../workspace/memory-budget.js';
import { checkUserRegex, regexReplaceMatches } from '../search/regex.js';
import { decodeText, looksBinary } from '../workspace/encoding.js';
import { defineTool } from './define.js';
import { changeAnswer, commitUnlessDryRun } from './change.js';
import { DiffFields, DryRunArg, PathArg, VersionArgs, VersionSchema } from './args.js';
import { enforceVersion, readCurrent } from './file-access.js';

/** More matches than this are refused: the caller almost certainly meant something narrower. */
const MAX_REPLACEMENTS = 1_000_000;
/** Memory a replacement holds per byte of the file (memory budget): the file, its text, the new text and its bytes. */
const REPLACE_MEMORY_FACTOR = 4;
/** Regex flags of replace_in_file: global, and ^ / $ match at line boundaries. */
const REGEX_FLAGS = 'gm';

const Input = z.strictObject({
  path: PathArg,
  old: z.string().min(1).describe('Text to find (exact, case-sensitive), or a JavaScript regular expression with regex: true.'),
  new: z.string().describe('Replacement. Taken literally unless regex is true, where $1, $<name>, $& and $$ work as in String.prototype.replace.'),
  regex: z.boolean().default(false).describe('Treat old as a regular expression (flags g and m: ^ and $ match at line starts and ends). Runs under a time limit.'),
  count: z.number().int().min(1).optional().describe('Replace at most this many matches, from the start of the file (default: all).'),
  dry_run: DryRunArg,
  ...VersionArgs,
});

const Output = z.object({
  replacements: z.number().int().describe('Matches replaced (or that would be on a dry run); 0 when nothing matched.'),
  applied: z.boolean(),
  ...DiffFields,
  backup_id: z.string().nullable(),
  version: VersionSchema.describe('After the change; the current version when nothing was written.'),
});

interface Matches {
  starts: number[];
  ends: number[];
  replacements: string[] | null;
  /** The expanded replacements alone were over the result limit (regex with $&, $' and the like). */
  tooLarge?: boolean;
}

function literalMatches(text: string, needle: string, limit: number): Matches & { capped: boolean } {
  const starts: number[] = [];
  const ends: number[] = [];
  let at = text.indexOf(needle);
  while (at !== -1) {
    if (starts.length >= limit) return { starts, ends, replacements: null, capped: true };
    starts.push(at);
    ends.push(at + needle.length);
    at = text.indexOf(needle, at + needle.length);
  }
  return { starts, ends, replacements: null, capped: false };
}

/**
 * Length of the new text in UTF-16 units, counted before it is built: each unit is at least one UTF-8 byte,
 * so a count over the byte limit refuses only results that could not be written anyway.
 */
function resultLength(text: string, m: Matches, replacement: string): number {
  let length = text.length;
  for (let i = 0; i < m.starts.length; i++) {
    const rep = m.replacements ? (m.replacements[i] as string) : replacement;
    length += rep.length - ((m.ends[i] as number) - (m.starts[i] as number));
  }
  return length;
}

/** Builds the new text and the changed spans (in both texts) in one pass. */
function applyMatches(text: string, m: Matches, replacement: string): { newText: string; spans: ChangedSpan[] } {
  const parts: string[] = [];
  const spans: ChangedSpan[] = [];
  let pos = 0;
  let newPos = 0;
  for (let i = 0; i < m.starts.length; i++) {
    const start = m.starts[i] as number;
    const end = m.ends[i] as number;
    const rep = m.replacements ? (m.replacements[i] as string) : replacement;
    parts.push(text.slice(pos, start), rep);
    newPos += start - pos;
    spans.push({ oldStart: start, oldEnd: end, newStart: newPos, newEnd: newPos + rep.length });
    newPos += rep.length;
    pos = end;
  }
  parts.push(text.slice(pos));
  return { newText: parts.join(''), spans };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 'es'}`;
}

export const replaceInFile = defineTool({
  name: 'replace_in_file',
  paramAliases: { old_text: 'old', new_text: 'new', oldText: 'old', newText: 'new' },
  description:
    'Find and replace in one file: exact text by default, or a regular expression with regex: true (time-limited). count limits the replacements. No match is not an error (replacements: 0). Returns a diff preview; dry_run previews without writing. For one precise edit with whitespace tolerance prefer edit_file.',
  summary: 'literal or regex replace (regex under a hard time limit), `count`',
  risk: 'write',
  riskLevel: 'high',
  input: Input,
  example: { path: 'notes.txt', old: 'hello', new: 'hello, world' },
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path);
    if (p.stat?.isDirectory()) throw E.isDirectory(p.rel);
    if (input.regex) checkUserRegex(input.old, REGEX_FLAGS);
    const { maxEditBytes, maxWriteBytes, regexTimeoutMs } = ctx.ws.limits;

    const memory = REPLACE_MEMORY_FACTOR * (p.stat?.size ?? 0);
    return withFileLock(p.ws, p.real, p.rel, () => withMemory(p.ws, memory, ctx.signal, async () => {
      const current = await readCurrent(p, maxEditBytes);
      if (!current) throw E.fileNotFound(p.rel);
      enforceVersion(ctx, p, current, input, 'mutation');
      if (looksBinary(current.content)) throw E.replaceInBinary(p.rel);
      const oldText = decodeText(current.content, 'utf-8', p.rel);
      const limit = input.count ?? MAX_REPLACEMENTS;
      // A result can grow far past the file ('.' to a long text): bounded before it is built, never after.
      const maxResult = Math.max(maxWriteBytes, current.content.length);
      const found: Matches & { capped: boolean } = input.regex
        ? await regexReplaceMatches(p.ws.runtime, oldText, input.old, REGEX_FLAGS, input.new, limit, regexTimeoutMs, maxResult)
        : literalMatches(oldText, input.old, limit);
      if (found.tooLarge || resultLength(oldText, found, input.new) > maxResult) {
        throw E.replaceResultOverLimit(maxResult);
      }
      if (found.capped && input.count === undefined) {
        throw E.replaceTooManyMatches(shorten(input.old), MAX_REPLACEMENTS, p.rel);
      }
      const n = found.starts.length;
      if (n === 0) {
        return {
          data: { replacements: 0, applied: false, diff_preview: '', diff_truncated: false, lines_added: 0, lines_removed: 0, backup_id: null, version: current.version },
          text: `No matches found for '${shorten(input.old)}'`,
          stats: { matches: 0, replacements: 0, bytes_written: 0, original_size: current.content.length, new_size: current.content.length, lines_added: 0, lines_removed: 0 },
          pathResolved: p.rel,
          version: current.version,
          audit: { sha256_before: current.version.sha256 },
        };
      }
      const { newText, spans } = applyMatches(oldText, found, input.new);
      if (newText === oldText) {
        throw E.replaceNoChange(plural(n, 'match'), shorten(input.old), p.rel);
      }
      const bytes = Buffer.from(newText, 'utf8');
      if (bytes.length > Math.max(maxWriteBytes, current.content.length)) {
        throw E.replaceResultTooLarge(bytes.length, maxWriteBytes);
      }
      const diff = diffSpans(p.rel, oldText, newText, spans);
      const committed = await commitUnlessDryRun(ctx, p, { current, next: bytes, operation: 'replace_in_file' }, diff, input.dry_run);
      return changeAnswer(p, {
        diff,
        before: current.version,
        committed,
        originalSize: current.content.length,
        newSize: bytes.length,
        text: committed
          ? `Replaced ${plural(n, 'match')} in '${p.rel}' (+${diff.lines_added}/-${diff.lines_removed} lines, ${bytes.length} bytes).`
          : `Would replace ${plural(n, 'match')} of '${shorten(input.old)}' in '${p.rel}' (+${diff.lines_added}/-${diff.lines_removed} lines).`,
        data: { replacements: n },
        stats: { matches: n, replacements: n },
      });
    }), ctx.signal);
  },
});

/** The search text as quoted in messages: one line, at most 80 characters. */
function shorten(s: string): string {
  const one = s.replace(/\r?\n/g, '\\n');
  return one.length > 80 ? `${one.slice(0, 80)}…` : one;
}
