// list_checkpoints: the project's checkpoints, newest first — one per agent turn, one per call without a turn —
// with the files each changed (docs/api.md, "Turns, checkpoints and rewind"). Read from the records the pipeline
// keeps (src/workspace/checkpoints.ts); nothing here looks at the project's files.
import { z } from 'zod';
import { diffWhole } from '../edit/diff.js';
import { findBackupBySha256, readBackup } from '../workspace/backups.js';
import { applyRetention, groupCheckpoints, readPruned, readRecords, timeOfRecordId, type Checkpoint, type CheckpointRecord, type RecordedChange } from '../workspace/checkpoints.js';
import { looksBinary } from '../workspace/encoding.js';
import { sha256Hex } from '../workspace/versions.js';
import { defineTool, type ToolContext } from './define.js';
import { readCurrentBytes } from './file-access.js';

/** Diffs a page gives (each reads up to two files); the entries past it have none. */
const DIFFS_PER_PAGE = 100;
/** Largest side of a diff (a diff runs on the event loop). */
const DIFF_FILE_BYTES = 256 * 1024;

/** Files listed per checkpoint; the rest are counted (files_count). */
const FILES_LISTED = 200;
const MAX_LIMIT = 100;
export const CheckpointIdArg = z.string().regex(/^[0-9a-z]{9}-[0-9a-z]{4}-[0-9a-f]{6}$/, 'a checkpoint id as list_checkpoints gives it');

const Input = z.strictObject({
  limit: z.number().int().min(1).max(MAX_LIMIT).default(20).describe(`Checkpoints to list, newest first (at most ${MAX_LIMIT}).`),
  before: CheckpointIdArg.optional().describe('List only checkpoints older than this one (next_before of the previous page).'),
  diffs: z.boolean().default(false).describe(`Give each listed file its diff over the checkpoint (from before its first change there to after its last), where both sides are still kept, are text and at most ${DIFF_FILE_BYTES / 1024} KiB, and the caller may read the file (at most ${DIFFS_PER_PAGE} per page).`),
});

const FileChange = z.object({
  path: z.string(),
  op: z.enum(['create', 'update', 'delete', 'move']),
  kind: z.enum(['file', 'directory', 'symlink', 'other']),
  to: z.string().optional().describe('A move: the destination.'),
  lines_added: z.number().int().describe('Insertions (0 when not known: a command\'s change, a binary file).'),
  lines_removed: z.number().int().describe('Deletions.'),
  diff: z.string().optional().describe('With diffs: the unified diff of this file over the checkpoint (absent where it cannot be shown).'),
});

const CheckpointSchema = z.object({
  id: z.string().describe('The checkpoint id: rewind {checkpoint} puts every file changed at or after it back as it was just before it.'),
  turn: z.string().nullable().describe('The agent turn its calls named; null for a call without a turn (a checkpoint of its own).'),
  created_at: z.string().describe('Time of its first change (ISO 8601).'),
  updated_at: z.string().describe('Time of its last change.'),
  actor: z.string().nullable().describe('Who made its first change (token id; null without tokens).'),
  actors: z.array(z.string().nullable()).describe('Everyone who changed files in it.'),
  calls: z.number().int().describe('Mutating calls recorded in it.'),
  tools: z.array(z.string()).describe('The tools of those calls.'),
  rewound_to: z.string().nullable().describe('A rewind: the checkpoint it rewound to (it can itself be rewound).'),
  files: z.array(FileChange).describe(`The changes, in order, each path once per operation (at most ${FILES_LISTED} listed).`),
  files_count: z.number().int().describe('Changes in all (files lists the first ones).'),
  lines_added: z.number().int(),
  lines_removed: z.number().int(),
});

const Output = z.object({
  checkpoints: z.array(CheckpointSchema),
  next_before: z.string().nullable().describe('More, older checkpoints: pass this as before. null when this is the last page.'),
  pruned: z.object({
    count: z.number().int().describe('Checkpoints dropped by retention (TOOLGATE_CHECKPOINT_MAX_TURNS, TOOLGATE_CHECKPOINT_MAX_AGE_DAYS).'),
    before: z.string().nullable().describe('The time of the newest dropped one: nothing before it can be rewound.'),
  }),
});

type FileEntry = z.output<typeof FileChange>;

/** Where an entry's content came from and where it went over the checkpoint: the first change's before, the last one's after. */
interface Span {
  first: RecordedChange;
  last: RecordedChange;
}

function describeCheckpoint(cp: Checkpoint, spans?: Map<FileEntry, Span>) {
  const files: FileEntry[] = [];
  const seen = new Map<string, FileEntry>();
  let count = 0;
  let added = 0;
  let removed = 0;
  for (const r of cp.records) {
    for (const c of r.changes) {
      added += c.lines_added;
      removed += c.lines_removed;
      const key = `${c.op}\0${c.path}\0${c.to ?? ''}`;
      const known = seen.get(key);
      if (known) {
        known.lines_added += c.lines_added;
        known.lines_removed += c.lines_removed;
        const span = spans?.get(known);
        if (span) span.last = c;
        continue;
      }
      count++;
      if (files.length >= FILES_LISTED) continue;
      const entry: FileEntry = { path: c.path, op: c.op, kind: c.kind, ...(c.to !== undefined && { to: c.to }), lines_added: c.lines_added, lines_removed: c.lines_removed };
      seen.set(key, entry);
      files.push(entry);
      spans?.set(entry, { first: c, last: c });
    }
  }
  const first = cp.records[0] as CheckpointRecord;
  const last = cp.records[cp.records.length - 1] as CheckpointRecord;
  return {
    id: cp.id,
    turn: cp.turn,
    created_at: new Date(timeOfRecordId(first.id)).toISOString(),
    updated_at: last.at,
    actor: first.actor,
    actors: [...new Set(cp.records.map((r) => r.actor))],
    calls: cp.records.length,
    tools: [...new Set(cp.records.map((r) => r.tool))],
    rewound_to: cp.records.find((r) => r.rewound_to !== undefined)?.rewound_to ?? null,
    files,
    files_count: count,
    lines_added: added,
    lines_removed: removed,
  };
}

export const listCheckpoints = defineTool({
  name: 'list_checkpoints',
  description:
    "List the project's checkpoints, newest first: one per agent turn (the turn a call names: REST Toolgate-Turn, WebSocket turn, MCP _meta toolgate/turn) and one per call without a turn, each with the files it created, changed, removed or moved. rewind takes the project back to just before one.",
  summary: 'the project\'s checkpoints, newest first: one per agent turn (`Toolgate-Turn` header, WebSocket `turn`, MCP `_meta["toolgate/turn"]`) and one per call without a turn, each with its files, their operation, insertions and deletions; `limit`, `before`; what retention pruned ([docs/api.md](docs/api.md#turns-checkpoints-and-rewind))',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { limit: 10 },
  output: Output,
  async run(ctx, input) {
    await applyRetention(ctx.ws);
    const all = groupCheckpoints(await readRecords(ctx.ws)).reverse();
    const start = input.before === undefined ? 0 : all.findIndex((cp) => cp.id < (input.before as string));
    const page = start < 0 ? [] : all.slice(start, start + input.limit);
    const more = start >= 0 && start + input.limit < all.length;
    const { count, before } = await readPruned(ctx.ws);
    const pruned = { count, before };
    const spans = input.diffs ? new Map<FileEntry, Span>() : undefined;
    const checkpoints = page.map((cp) => describeCheckpoint(cp, spans));
    if (spans) await addDiffs(ctx, spans);
    const text =
      checkpoints.length === 0
        ? `No checkpoints${input.before ? ` before ${input.before}` : ''}.${pruned.count > 0 ? ` ${pruned.count} older ones were pruned (up to ${pruned.before}).` : ''}`
        : `${checkpoints.length} checkpoint${checkpoints.length === 1 ? '' : 's'}, newest first:\n` +
          checkpoints.map((c) => `${c.id}${c.turn ? ` (turn ${c.turn})` : ''} ${c.created_at}: ${c.files_count} change${c.files_count === 1 ? '' : 's'}, +${c.lines_added}/-${c.lines_removed}`).join('\n') +
          (more ? `\nMore: before=${(page[page.length - 1] as Checkpoint).id}.` : '') +
          (pruned.count > 0 ? `\n${pruned.count} older checkpoints were pruned (up to ${pruned.before}).` : '');
    return {
      data: { checkpoints, next_before: more ? (page[page.length - 1] as Checkpoint).id : null, pruned },
      text,
      stats: { checkpoints: checkpoints.length },
    };
  },
});

/** Each entry's diff over its checkpoint, where both sides can still be read and the caller may read the file. */
async function addDiffs(ctx: ToolContext, spans: Map<FileEntry, Span>): Promise<void> {
  let left = DIFFS_PER_PAGE;
  const mayRead = new Map<string, boolean>();
  for (const [entry, span] of spans) {
    if (left <= 0) return;
    if (entry.kind !== 'file' || entry.op === 'move') continue;
    // What a diff shows is the file's content: decided like a read of it, for this caller.
    let allowed = mayRead.get(entry.path);
    if (allowed === undefined) {
      allowed = await ctx.resolve(entry.path).then(
        () => true,
        () => false,
      );
      mayRead.set(entry.path, allowed);
    }
    if (!allowed) continue;
    left--;
    const before = await textOf(ctx, entry.path, span.first.sha256_before, span.first.backup_id);
    const after = await textOf(ctx, entry.path, span.last.sha256_after, null);
    if (before === undefined || after === undefined || (before === null && after === null)) continue;
    entry.diff = diffWhole(entry.path, before, after ?? '').diff_preview;
  }
}

/**
 * The text a file had when its sha256 was `sha`: from its backup (by id, else any backup of it with that sha256),
 * else the file as it is now; null when it did not exist; undefined when it is not kept, not text or too large.
 */
async function textOf(ctx: ToolContext, rel: string, sha: string | null, backupId: string | null): Promise<string | null | undefined> {
  if (sha === null) return null;
  let content: Buffer | null = null;
  if (backupId) {
    const kept = await readBackup(ctx.ws, backupId).catch(() => null);
    if (kept && kept.meta.sha256 === sha && kept.content.length <= DIFF_FILE_BYTES) content = kept.content;
  }
  content ??= findBackupBySha256(ctx.ws, rel, sha, DIFF_FILE_BYTES)?.content ?? null;
  if (!content) {
    const p = await ctx.resolve(rel).catch(() => null);
    const now = p?.stat?.isFile() && p.stat.size <= DIFF_FILE_BYTES ? await readCurrentBytes(p, DIFF_FILE_BYTES).catch(() => null) : null;
    if (now && sha256Hex(now.content) === sha) content = now.content;
  }
  if (!content || looksBinary(content)) return undefined;
  return content.toString('utf8');
}
