// What a mutating call is about to change, told by the tool itself just before its first write (and by its dry
// run at the same point): every path with its operation, the diff of every content change and the content a
// delete removes. The approval shows it to the person deciding, and the approved repeat must announce the very
// same set or it is refused (docs/api.md, "Approvals").
import { z } from 'zod';
import { DIFF_MAX_BYTES, DIFF_MAX_LINES, type DiffPreview } from '../edit/diff.js';
import { looksBinary } from '../workspace/encoding.js';

export const CHANGE_OPS = ['create', 'update', 'delete', 'move', 'copy'] as const;
export type ChangeOp = (typeof CHANGE_OPS)[number];

/** One change as the tool plans it, before anything is written. */
export interface PlannedChange {
  op: ChangeOp;
  kind: 'file' | 'directory';
  /** The path acted on (relative, as the answer names it); for a move or copy, its source. */
  path: string;
  /** Move or copy: where it goes. */
  to?: string;
  /** The file's sha256 before (null: new, or a directory). */
  sha256Before: string | null;
  /** The sha256 of the file the change leaves at `to ?? path` (null: a delete, or a directory). */
  sha256After: string | null;
  /** The tool's own preview of a content change (none when the content stays as it is). */
  diff?: DiffPreview;
  /** Delete: the first bytes of what goes (at least DIFF_MAX_BYTES + 1 when there are that many), and its size. */
  removed?: { head: Buffer; size: number };
  /** A directory moved: the entries it holds, one per line (files with their size), and whether the list was cut. */
  listing?: { text: string; truncated: boolean };
}

/** A planned change as a person sees it (the approval record's `changes[]`, src/policy/approval-record.ts). */
export const ChangeEntrySchema = z
  .strictObject({
    path: z.string().describe('The path changed; for a move or copy its source.'),
    op: z.enum(CHANGE_OPS),
    kind: z.enum(['file', 'directory']),
    from: z.string().optional().describe('Move or copy: the source.'),
    to: z.string().optional().describe('Move or copy: the destination.'),
    diff: z.string().describe("Unified diff of the content change ('' when the content stays as it is), cut at 100 lines or 10 KiB."),
    content: z.string().nullable().describe('A delete: the content that goes (cut like a diff); a directory moved: the entries it holds, one per line; null otherwise.'),
    truncated: z.boolean().describe('diff or content was cut.'),
    lines_added: z.number().int().nonnegative(),
    lines_removed: z.number().int().nonnegative(),
    sha256_before: z.string().regex(/^[0-9a-f]{64}$/).nullable().describe('sha256 of the file before (null: new, or a directory).'),
    sha256_after: z.string().regex(/^[0-9a-f]{64}$/).nullable().describe('sha256 of the file the change leaves (null: a delete, or a directory).'),
  })
  .meta({ id: 'ApprovalChange' });
export type ChangeEntry = z.output<typeof ChangeEntrySchema>;

/** Called by a tool once, with everything it will change, before its first write; a listener may refuse (throw). */
export type PlanHook = (changes: PlannedChange[]) => Promise<void>;

/**
 * Tells the call's listener (the policy gate; ToolContext.planned) what is about to change; the list is built
 * only when someone listens.
 */
export async function announce(ctx: { readonly planned?: PlanHook | undefined }, build: () => PlannedChange[]): Promise<void> {
  if (ctx.planned) await ctx.planned(build());
}

/** The bytes to read of a file being deleted, so that its shown content is bounded and its cut is known. */
export const REMOVED_HEAD_BYTES = DIFF_MAX_BYTES + 1;

/** The content a delete removes, bounded like a diff preview. */
function removedText(removed: { head: Buffer; size: number }): { content: string; truncated: boolean } {
  if (looksBinary(removed.head)) return { content: `[binary file, ${removed.size} bytes]`, truncated: false };
  let text = removed.head.subarray(0, DIFF_MAX_BYTES).toString('utf8');
  let truncated = removed.size > DIFF_MAX_BYTES;
  // A cut in the middle of a character leaves U+FFFD at the end: drop it.
  if (truncated && text.endsWith('\uFFFD')) text = text.slice(0, -1);
  const lines = text.split('\n');
  if (lines.length > DIFF_MAX_LINES + 1 || (lines.length === DIFF_MAX_LINES + 1 && lines[DIFF_MAX_LINES] !== '')) {
    text = `${lines.slice(0, DIFF_MAX_LINES).join('\n')}\n`;
    truncated = true;
  }
  return { content: text, truncated };
}

export function describeChange(c: PlannedChange): ChangeEntry {
  const removed = c.removed ? removedText(c.removed) : null;
  return {
    path: c.path,
    op: c.op,
    kind: c.kind,
    ...(c.to !== undefined && { from: c.path, to: c.to }),
    diff: c.diff?.diff_preview ?? '',
    content: removed?.content ?? c.listing?.text ?? null,
    truncated: (c.diff?.diff_truncated ?? false) || (removed?.truncated ?? false) || (c.listing?.truncated ?? false),
    lines_added: c.diff?.lines_added ?? 0,
    lines_removed: c.diff?.lines_removed ?? 0,
    sha256_before: c.sha256Before,
    sha256_after: c.sha256After,
  };
}

/** What an approval binds to: each change's operation, paths and the exact content before and after (hashes). */
export function changeIdentity(c: ChangeEntry): Record<string, unknown> {
  return { op: c.op, kind: c.kind, path: c.path, to: c.to ?? null, before: c.sha256_before, after: c.sha256_after };
}

/** One line for the approval's summary: "update notes.txt, delete SOUL.md". */
export function describeChangesBriefly(changes: readonly ChangeEntry[]): string {
  if (changes.length === 0) return 'no file changes';
  const parts = changes.slice(0, 5).map((c) => (c.to !== undefined ? `${c.op} ${c.path} -> ${c.to}` : `${c.op} ${c.kind === 'directory' ? 'directory ' : ''}${c.path}`));
  return parts.join(', ') + (changes.length > 5 ? ` and ${changes.length - 5} more` : '');
}
