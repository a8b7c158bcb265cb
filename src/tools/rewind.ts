// rewind: puts every file changed at or after a checkpoint back as it was just before it (docs/api.md, "Turns,
// checkpoints and rewind"). The records (src/workspace/checkpoints.ts) say what each call changed and which
// backups hold the content before; the rewind works out where each path must end, checks that nothing changed
// outside the record, shows it like any change (announce, dry run, approvals), then makes it through a journal
// (src/workspace/rewind-journal.ts) so that a crash leaves it done or not begun once the service starts again.
import fs from 'node:fs/promises';
import { z } from 'zod';
import { diffWhole } from '../edit/diff.js';
import { E } from '../errors.js';
import { createBackup, findBackupBySha256, listBackups, readBackup } from '../workspace/backups.js';
import { applyRetention, groupCheckpoints, newRecordId, readRecords, type Checkpoint, type CheckpointRecord, type RecordedChange } from '../workspace/checkpoints.js';
import { countLines } from '../workspace/encoding.js';
import { withFileLock } from '../workspace/locks.js';
import { OWNER_RECORD } from '../workspace/process-owner.js';
import { commitJournal, completeJournal, discardStaging, makeStaging, stageContent, type RewindJournal, type RewindStep } from '../workspace/rewind-journal.js';
import type { ResolvedPath } from '../workspace/sandbox.js';
import { sha256Hex } from '../workspace/versions.js';
import { DryRunArg } from './args.js';
import { modeOf } from './change.js';
import { defineTool, type ToolContext } from './define.js';
import { readCurrent } from './file-access.js';
import { CheckpointIdArg } from './list-checkpoints.js';
import { announce, ChangeEntrySchema, describeChange, REMOVED_HEAD_BYTES, type ChangeEntry, type PlannedChange } from './plan.js';

const Input = z.strictObject({
  checkpoint: z
    .union([CheckpointIdArg, z.literal('latest')])
    .optional()
    .describe("The checkpoint to go back to (an id from list_checkpoints, or 'latest' for the newest): every file changed at or after it is put back as it was just before it. Give this or turn."),
  turn: z.string().min(1).max(128).optional().describe("Instead of checkpoint: the turn id the calls named (that turn's checkpoint)."),
  dry_run: DryRunArg.describe('Answer the changes the rewind would make, with their diffs, and change nothing.'),
  force: z.boolean().default(false).describe('Overwrite files changed since their last recorded change (by hand, by another service) instead of stopping with CONFLICT.'),
});

const Output = z.object({
  applied: z.boolean(),
  checkpoint: z.string().describe('The checkpoint rewound to.'),
  turn: z.string().nullable(),
  checkpoints_rewound: z.number().int().describe('Checkpoints at or after it whose changes were taken back.'),
  changes: z.array(ChangeEntrySchema).describe('Every change the rewind makes (or would make), in order, with its diff or the content a delete removes.'),
  changes_truncated: z.boolean().describe('Diffs and contents past 256 KiB in all were left out (the entries stay).'),
  forced: z.array(z.string()).describe('Paths changed outside the record that force: true overwrote.'),
  rewind_checkpoint: z.string().nullable().describe("The rewind's own checkpoint (null on a dry run or when nothing changed): rewinding to it takes the rewind back."),
  lines_added: z.number().int(),
  lines_removed: z.number().int(),
});

/** Diffs and contents the answer holds in all; past it an entry keeps its path, operation and hashes (as approvals do). */
const ANSWER_DIFF_BYTES = 256 * 1024;
const DEFAULT_MAX_PATHS = 1000;

type Expect = { t: 'file'; sha: string | null } | { t: 'dir' } | { t: 'absent' } | { t: 'any' };
type Source = { backup: string | null; rel: string } | { current: string };
type Target = { t: 'absent'; dir: boolean } | { t: 'dir' } | { t: 'file'; sha: string; src: Source } | { t: 'gone' };
type Current = { t: 'absent' } | { t: 'dir' } | { t: 'link' } | { t: 'other' } | { t: 'file'; sha: string; content: Buffer; mode: number };
interface Rename {
  from: string;
  to: string;
}

const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
const moveUnder = (p: string, from: string, to: string) => to + p.slice(from.length);

function rekey<V>(map: Map<string, V>, from: string, to: string): void {
  for (const [k, v] of [...map]) {
    if (!under(k, from)) continue;
    map.delete(k);
    map.set(moveUnder(k, from, to), v);
  }
}

/** What the recorded changes left, path by path, in the project's coordinates now. */
function expectations(range: readonly CheckpointRecord[]): Map<string, Expect> {
  const expected = new Map<string, Expect>();
  for (const r of range) {
    for (const c of r.changes) {
      if (c.kind === 'directory') {
        if (c.op === 'create') expected.set(c.path, { t: 'dir' });
        else if (c.op === 'delete') expected.set(c.path, { t: 'absent' });
        else if (c.op === 'move' && c.to !== undefined) {
          rekey(expected, c.path, c.to);
          expected.set(c.path, { t: 'absent' });
          expected.set(c.to, { t: 'dir' });
        }
        continue;
      }
      if (c.kind !== 'file') {
        expected.set(c.path, c.op === 'delete' ? { t: 'absent' } : { t: 'any' });
        continue;
      }
      if (c.op === 'move' && c.to !== undefined) {
        expected.set(c.path, { t: 'absent' });
        expected.set(c.to, { t: 'file', sha: c.sha256_after });
      } else expected.set(c.path, c.op === 'delete' ? { t: 'absent' } : { t: 'file', sha: c.sha256_after });
    }
  }
  return expected;
}

/** Where each path must end (coordinates after the directory moves are undone), and those moves, newest first. */
function targetsOf(range: readonly CheckpointRecord[]): { targets: Map<string, Target>; renames: Rename[] } {
  const targets = new Map<string, Target>();
  const renames: Rename[] = [];
  const before = (c: RecordedChange): Target => (c.sha256_before ? { t: 'file', sha: c.sha256_before, src: { backup: c.backup_id, rel: c.path } } : { t: 'gone' });
  for (let i = range.length - 1; i >= 0; i--) {
    const changes = (range[i] as CheckpointRecord).changes;
    for (let j = changes.length - 1; j >= 0; j--) {
      const c = changes[j] as RecordedChange;
      if (c.kind === 'directory') {
        if (c.op === 'create') targets.set(c.path, { t: 'absent', dir: true });
        else if (c.op === 'delete') targets.set(c.path, { t: 'dir' });
        else if (c.op === 'move' && c.to !== undefined) {
          // A directory made again where one was moved away: the move back would need the new one gone first.
          if ([...targets.keys()].some((k) => under(k, c.path))) throw E.rewindDirectoryMoveBlocked(c.path, c.to);
          rekey(targets, c.to, c.path);
          renames.push({ from: c.to, to: c.path });
        }
        continue;
      }
      if (c.kind !== 'file') {
        targets.set(c.path, c.op === 'create' ? { t: 'absent', dir: false } : { t: 'gone' });
        continue;
      }
      if (c.op === 'create') targets.set(c.path, { t: 'absent', dir: false });
      else if (c.op === 'move' && c.to !== undefined) {
        const there = targets.get(c.to) ?? (c.sha256_after ? { t: 'file', sha: c.sha256_after, src: { current: c.to } } : { t: 'gone' });
        targets.set(c.path, there);
        targets.set(c.to, { t: 'absent', dir: false });
      } else targets.set(c.path, before(c));
    }
  }
  return { targets, renames };
}

/**
 * A command that removed a directory recorded the directory only; the landing kept each file in it as a backup
 * of its own (src/exec/overlay.ts). Those backups — made by run_command, of paths below the directory, after the
 * record before — join the record as removals, so the rewind brings the files back with the directory.
 */
async function withRemovedTrees(ctx: ToolContext, all: readonly CheckpointRecord[], range: CheckpointRecord[]): Promise<CheckpointRecord[]> {
  const trees = range.filter((r) => r.tool === 'run_command' && r.changes.some((c) => c.kind === 'directory' && c.op === 'delete'));
  if (trees.length === 0) return range;
  const backups = await listBackups(ctx.ws);
  return range.map((r) => {
    if (!trees.includes(r)) return r;
    const i = all.indexOf(r);
    const after = i > 0 ? (all[i - 1] as CheckpointRecord).id : '';
    const changes: RecordedChange[] = [];
    for (const c of r.changes) {
      changes.push(c);
      if (c.kind !== 'directory' || c.op !== 'delete') continue;
      // A record that lists the directory's files (with their backups) needs no search.
      if (r.changes.some((x) => x.kind === 'file' && x.op === 'delete' && x.path.startsWith(`${c.path}/`))) continue;
      for (const b of backups) {
        const made = b.backup_id.slice(17, 26);
        if (b.operation !== 'run_command' || !b.removed || !b.path.startsWith(`${c.path}/`) || made <= after.slice(0, 9) || made > r.id.slice(0, 9)) continue;
        changes.push({ path: b.path, op: 'delete', kind: 'file', sha256_before: b.sha256, sha256_after: null, backup_id: b.backup_id, lines_added: 0, lines_removed: 0 });
      }
    }
    return { ...r, changes };
  });
}

/** A path after the first `upto` directory moves back, as it is named now. */
function nowPathOf(p: string, renames: readonly Rename[], upto = renames.length): string {
  let out = p;
  for (let i = upto - 1; i >= 0; i--) {
    const r = renames[i] as Rename;
    if (under(out, r.to)) out = moveUnder(out, r.to, r.from);
  }
  return out;
}

async function currentOf(p: ResolvedPath, maxBytes: number): Promise<Current> {
  const st = await fs.lstat(p.at).catch(() => null);
  if (!st) return { t: 'absent' };
  if (st.isDirectory()) return { t: 'dir' };
  if (st.isSymbolicLink()) return { t: 'link' };
  if (!st.isFile()) return { t: 'other' };
  const file = await readCurrent(p, maxBytes);
  if (!file) return { t: 'absent' };
  return { t: 'file', sha: file.version.sha256 ?? sha256Hex(file.content), content: file.content, mode: modeOf(file) };
}

function matches(e: Expect, c: Current): boolean {
  switch (e.t) {
    case 'file':
      return c.t === 'file' && (e.sha === null || e.sha === c.sha);
    case 'dir':
      return c.t === 'dir';
    case 'absent':
      return c.t === 'absent';
    case 'any':
      return c.t !== 'absent';
  }
}

const kindName = (c: Current) => (c.t === 'dir' ? 'directory' : c.t === 'link' ? 'symbolic link' : c.t === 'other' ? 'special file' : c.t);

function asText(buf: Buffer): string {
  return buf.includes(0) ? '[binary]\n' : buf.toString('utf8');
}

/** Runs fn holding the locks of every path, taken in one order (by real path) so two rewinds cannot deadlock. */
function withLocks<T>(paths: readonly ResolvedPath[], fn: () => Promise<T>, signal: AbortSignal): Promise<T> {
  const byReal = new Map<string, ResolvedPath>();
  for (const p of paths) byReal.set(p.real, p);
  const sorted = [...byReal.values()].sort((a, b) => (a.real < b.real ? -1 : 1));
  const step = (i: number): Promise<T> => {
    const p = sorted[i];
    return p ? withFileLock(p.ws, p.real, p.rel, () => step(i + 1), signal) : fn();
  };
  return step(0);
}

interface Planned {
  steps: Array<{ step: RewindStep; change: PlannedChange; content?: Buffer; cur?: Current; realRel: string }>;
  forced: string[];
}

function pickCheckpoint(checkpoints: readonly Checkpoint[], input: { checkpoint?: string | undefined; turn?: string | undefined }): Checkpoint {
  if ((input.checkpoint === undefined) === (input.turn === undefined)) throw E.checkpointArgs();
  const cp =
    input.checkpoint === 'latest' ? checkpoints[checkpoints.length - 1] : input.checkpoint !== undefined ? checkpoints.find((c) => c.id === input.checkpoint) : checkpoints.find((c) => c.turn === input.turn);
  if (!cp) throw E.checkpointNotFound(input.checkpoint ?? `turn ${input.turn as string}`);
  return cp;
}

/** The content a path must get back: its backup (by id, else any backup of it with that sha256), or a file moved away that is still where it went. */
async function contentOf(ctx: ToolContext, t: Extract<Target, { t: 'file' }>, states: Map<string, Current>, maxBytes: number): Promise<{ content: Buffer; mode: number } | null> {
  if ('current' in t.src) {
    const there = states.get(t.src.current);
    return there?.t === 'file' && there.sha === t.sha ? { content: there.content, mode: there.mode } : null;
  }
  if (t.src.backup) {
    const kept = await readBackup(ctx.ws, t.src.backup).catch(() => null);
    if (kept && sha256Hex(kept.content) === t.sha) return { content: kept.content, mode: kept.meta.mode };
  }
  const found = findBackupBySha256(ctx.ws, t.src.rel, t.sha, maxBytes);
  return found ? { content: found.content, mode: found.meta.mode } : null;
}

async function planRewind(ctx: ToolContext, force: boolean, resolved: Map<string, ResolvedPath>, renames: readonly Rename[], expected: Map<string, Expect>, targets: Map<string, Target>): Promise<Planned> {
  const maxBytes = ctx.ws.limits.maxEditBytes;
  const states = new Map<string, Current>();
  for (const [rel, p] of resolved) states.set(rel, await currentOf(p, maxBytes));
  const forced: string[] = [];
  for (const [rel, e] of expected) if (!matches(e, states.get(rel) ?? { t: 'absent' })) forced.push(rel);
  if (forced.length > 0 && !force) throw E.rewindConflict(forced.slice(0, 10), Math.max(0, forced.length - 10));
  // The directory moves back: each one's source must be there and its destination free when its turn comes.
  renames.forEach((r, i) => {
    const to = nowPathOf(r.to, renames, i);
    if (under(to, nowPathOf(r.from, renames, i)) || states.get(to)?.t !== 'absent') throw E.rewindDirectoryMoveBlocked(r.to, r.from);
  });
  // A file moved away and still where it went goes back by a rename (no copy, no backup needed).
  const movedBack = new Map<string, string>();
  for (const [rel, t] of targets) {
    if (t.t !== 'file' || !('current' in t.src)) continue;
    const from = t.src.current;
    const there = states.get(nowPathOf(from, renames));
    if (targets.get(from)?.t === 'absent' && there?.t === 'file' && there.sha === t.sha && (states.get(nowPathOf(rel, renames)) ?? { t: 'absent' }).t === 'absent') movedBack.set(rel, from);
  }
  const movedAway = new Set(movedBack.values());
  const moves: Planned['steps'] = [];
  const removes: Planned['steps'] = [];
  const rmdirs: Planned['steps'] = [];
  const mkdirs: Planned['steps'] = [];
  const writes: Planned['steps'] = [];
  const gone: string[] = [];
  for (const [rel, t] of targets) {
    const now = nowPathOf(rel, renames);
    const cur = states.get(now) ?? { t: 'absent' };
    const realRel = (resolved.get(now) as ResolvedPath).realRel;
    if (t.t === 'gone') {
      gone.push(rel);
      continue;
    }
    if (t.t === 'absent') {
      if (cur.t === 'absent' || movedAway.has(rel)) continue;
      if (cur.t === 'dir') {
        if (!t.dir) throw E.rewindKindChanged(rel, 'directory', 'file');
        rmdirs.push({ step: { op: 'rmdir', path: rel }, change: { op: 'delete', kind: 'directory', path: rel, sha256Before: null, sha256After: null }, realRel });
        continue;
      }
      const removed = cur.t === 'file' ? { head: cur.content.subarray(0, REMOVED_HEAD_BYTES), size: cur.content.length } : undefined;
      removes.push({ step: { op: 'remove', path: rel }, change: { op: 'delete', kind: 'file', path: rel, sha256Before: cur.t === 'file' ? cur.sha : null, sha256After: null, ...(removed && { removed }) }, cur, realRel });
      continue;
    }
    if (t.t === 'dir') {
      if (cur.t === 'dir') continue;
      if (cur.t !== 'absent') throw E.rewindKindChanged(rel, kindName(cur), 'directory');
      mkdirs.push({ step: { op: 'mkdir', path: rel }, change: { op: 'create', kind: 'directory', path: rel, sha256Before: null, sha256After: null }, realRel });
      continue;
    }
    if (cur.t === 'file' && cur.sha === t.sha) continue;
    if (cur.t === 'dir') throw E.rewindKindChanged(rel, 'directory', 'file');
    const from = movedBack.get(rel);
    if (from !== undefined) {
      moves.push({ step: { op: 'move_file', from, to: rel }, change: { op: 'move', kind: 'file', path: from, to: rel, sha256Before: t.sha, sha256After: t.sha }, realRel });
      continue;
    }
    const back = await contentOf(ctx, t, states, maxBytes);
    if (!back) {
      gone.push(rel);
      continue;
    }
    const old = cur.t === 'file' ? cur : null;
    const diff = diffWhole(rel, old ? asText(old.content) : null, asText(back.content));
    writes.push({
      step: { op: 'write', path: rel, staged: String(writes.length), mode: back.mode },
      change: { op: old ? 'update' : 'create', kind: 'file', path: rel, sha256Before: old?.sha ?? null, sha256After: t.sha, diff },
      content: back.content,
      cur,
      realRel,
    });
  }
  if (gone.length > 0) throw E.preImageGone(gone.slice(0, 10), Math.max(0, gone.length - 10));
  const depth = (s: { step: RewindStep }) => ('path' in s.step ? s.step.path.split('/').length : 0);
  rmdirs.sort((a, b) => depth(b) - depth(a));
  mkdirs.sort((a, b) => depth(a) - depth(b));
  const dirMoves: Planned['steps'] = renames.map((r) => ({ step: { op: 'rename_dir', from: r.from, to: r.to }, change: { op: 'move', kind: 'directory', path: r.from, to: r.to, sha256Before: null, sha256After: null }, realRel: r.from }));
  // Files leave a directory before it is removed; a directory is made before what goes into it.
  return { steps: [...dirMoves, ...moves, ...removes, ...rmdirs, ...mkdirs, ...writes], forced };
}

/** The answer's change entries, their diffs and contents bounded in all (ANSWER_DIFF_BYTES). */
function describeAll(changes: readonly PlannedChange[]): { entries: ChangeEntry[]; truncated: boolean } {
  let budget = ANSWER_DIFF_BYTES;
  let truncated = false;
  const entries = changes.map((c) => {
    const e = describeChange(c);
    const bytes = Buffer.byteLength(e.diff) + Buffer.byteLength(e.content ?? '');
    if (bytes <= budget) {
      budget -= bytes;
      return e;
    }
    truncated = true;
    return { ...e, diff: '', content: e.content === null ? null : '', truncated: true };
  });
  return { entries, truncated };
}

export const rewind = defineTool({
  name: 'rewind',
  description:
    'Take back agent turns: put every file changed at or after a checkpoint (list_checkpoints) back as it was just before it — changed files restored, created ones removed, removed ones restored, moves undone — by every tool and command. dry_run answers the changes with diffs and changes nothing. A file changed since its last recorded change stops it with CONFLICT unless force. The rewind is a checkpoint itself, so it can be taken back too.',
  summary: 'take back agent turns: every file changed at or after a `checkpoint` (or `turn`, or `latest`) put back as it was just before it, by every tool and command; `dry_run` answers the `changes[]` with diffs; `CONFLICT` when a file changed outside the record unless `force`; decided by the policy and approvals like its writes and deletes; crash-safe (journal); itself a checkpoint',
  risk: 'destructive',
  riskLevel: 'high',
  recordsItself: true,
  input: Input,
  // The examples before it (write_file, the edits, restore_backup) are checkpoints: this previews taking back the newest.
  example: { checkpoint: 'latest', dry_run: true },
  output: Output,
  async run(ctx, input) {
    // Retention first: a checkpoint past it has lost the hold on its backups, so it is not offered.
    await applyRetention(ctx.ws);
    const checkpoints = groupCheckpoints(await readRecords(ctx.ws));
    const cp = pickCheckpoint(checkpoints, input);
    const all = checkpoints.flatMap((c) => c.records).sort((a, b) => (a.id < b.id ? -1 : 1));
    const range = await withRemovedTrees(ctx, all, all.filter((r) => r.id >= cp.id));
    const rewound = checkpoints.filter((c) => c.records.some((r) => r.id >= cp.id)).length;
    const expected = expectations(range);
    const { targets, renames } = targetsOf(range);
    const limit = ctx.ws.limits.patchMaxFiles ?? DEFAULT_MAX_PATHS;
    if (targets.size > limit) throw E.rewindTooLarge(targets.size, limit);
    // Every path is resolved through the call's resolver, so the policy decides each one like the write or delete it is.
    const names = new Set<string>([...expected.keys(), ...[...targets.keys()].map((t) => nowPathOf(t, renames))]);
    renames.forEach((r, i) => {
      names.add(nowPathOf(r.from, renames, i));
      names.add(nowPathOf(r.to, renames, i));
    });
    const resolved = new Map<string, ResolvedPath>();
    for (const rel of names) {
      const p = await ctx.resolve(rel, { noFollowLeaf: true });
      if (p.ws !== ctx.ws) throw E.rewindOtherProject(rel);
      resolved.set(rel, p);
    }
    const work = async () => {
      const plan = await planRewind(ctx, input.force, resolved, renames, expected, targets);
      const changes = plan.steps.map((s) => s.change);
      await announce(ctx, () => changes);
      const { entries, truncated } = describeAll(changes);
      const added = entries.reduce((n, e) => n + e.lines_added, 0);
      const removed = entries.reduce((n, e) => n + e.lines_removed, 0);
      const base = { checkpoint: cp.id, turn: cp.turn, checkpoints_rewound: rewound, changes: entries, changes_truncated: truncated, forced: plan.forced, lines_added: added, lines_removed: removed };
      const what = `${changes.length} change${changes.length === 1 ? '' : 's'} (${summarize(changes)})`;
      const to = `before checkpoint ${cp.id}${cp.turn ? ` (turn ${cp.turn})` : ''}`;
      if (input.dry_run || changes.length === 0) {
        const text = changes.length === 0 ? `Nothing to rewind: every file is already as it was ${to}.` : `[Dry Run] Would rewind ${rewound} checkpoint${rewound === 1 ? '' : 's'} to ${to}: ${what}.`;
        return { data: { ...base, applied: changes.length === 0 && !input.dry_run, rewind_checkpoint: null }, text, stats: { files_changed: 0, lines_added: added, lines_removed: removed }, partial: input.dry_run || truncated };
      }
      const id = await applyRewind(ctx, cp, plan);
      const forcedNote = plan.forced.length > 0 ? ` Overwrote ${plan.forced.length} file${plan.forced.length === 1 ? '' : 's'} changed outside the record (force).` : '';
      return {
        data: { ...base, applied: true, rewind_checkpoint: id },
        text: `Rewound ${rewound} checkpoint${rewound === 1 ? '' : 's'} to ${to}: ${what}.${forcedNote} Rewind checkpoint ${id} takes it back.`,
        stats: { files_changed: changes.length, lines_added: added, lines_removed: removed },
        partial: truncated,
      };
    };
    // A dry run reads without the locks, so a preview never waits for or holds up a writer (as apply_patch's).
    return input.dry_run ? work() : withLocks([...resolved.values()], work, ctx.signal);
  },
});

function summarize(changes: readonly PlannedChange[]): string {
  const counts = new Map<string, number>();
  for (const c of changes) {
    const key = c.op === 'move' ? 'moved back' : c.op === 'create' ? 'restored or created' : c.op === 'update' ? 'restored' : 'removed';
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}

/**
 * Stages the content, keeps what it replaces as backups (the rewind's own pre-images), commits the journal and
 * makes the steps; returns the rewind's checkpoint id. Until the journal is committed nothing has changed.
 */
async function applyRewind(ctx: ToolContext, cp: Checkpoint, plan: Planned): Promise<string> {
  const { ws } = ctx;
  const id = newRecordId();
  makeStaging(ws, id);
  const changes: RecordedChange[] = new Array<RecordedChange>(plan.steps.length);
  try {
    // Each file's staging and backup are a few calls and an fsync in the thread pool: STAGE_CONCURRENCY at a time.
    let next = 0;
    const worker = async () => {
      while (next < plan.steps.length) {
        const i = next++;
        changes[i] = await stageStep(ctx, id, plan.steps[i] as Planned['steps'][number]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(STAGE_CONCURRENCY, plan.steps.length) }, worker));
    // Stopped (time limit, client gone) before the commit point: nothing changed.
    ctx.signal.throwIfAborted();
  } catch (err) {
    discardStaging(ws, id);
    throw err;
  }
  const record: CheckpointRecord = { id, turn: ctx.turn ?? null, at: new Date().toISOString(), actor: ctx.caller.actor, tool: 'rewind', request_id: ctx.requestId, changes, rewound_to: cp.id };
  const journal: RewindJournal = { id, owner: OWNER_RECORD, steps: plan.steps.map((s) => s.step), record };
  await commitJournal(ws, journal);
  await completeJournal(ws, journal);
  return id;
}

/** Files staged and backed up at once before the commit point. */
const STAGE_CONCURRENCY = 16;

/** Stages one step's content and keeps what it replaces as a backup; answers the step as the rewind's record holds it. */
async function stageStep(ctx: ToolContext, id: string, s: Planned['steps'][number]): Promise<RecordedChange> {
  const cur = s.cur?.t === 'file' ? s.cur : null;
  if (s.step.op === 'write') await stageContent(ctx.ws, id, s.step.staged, s.content as Buffer, s.step.mode);
  const backupId = cur ? await createBackup(ctx.ws, { rel: s.realRel, operation: 'rewind', mode: cur.mode, sha256: cur.sha, actor: ctx.caller.actor }, cur.content) : null;
  const c = s.change;
  return {
    path: c.path,
    op: c.op === 'copy' ? 'create' : c.op,
    kind: s.step.op === 'remove' && s.cur && s.cur.t !== 'file' ? (s.cur.t === 'link' ? 'symlink' : 'other') : c.kind,
    ...(c.to !== undefined && { to: c.to }),
    sha256_before: c.sha256Before,
    sha256_after: c.sha256After,
    backup_id: backupId,
    lines_added: c.diff?.lines_added ?? 0,
    lines_removed: c.diff?.lines_removed ?? (s.step.op === 'remove' && cur ? countLines(asText(cur.content)) : 0),
  };
}
