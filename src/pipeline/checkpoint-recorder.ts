// The checkpoint record of a mutating call, made once for every tool here in the pipeline (docs/api.md, "Turns,
// checkpoints and rewind"): what the call announced before its first write (src/tools/plan.ts), the backups it
// kept on the way (the content before each change), and the turn the door received.
import { E } from '../errors.js';
import type { ToolDefinition, ToolResult } from '../tools/define.js';
import type { PlannedChange } from '../tools/plan.js';
import { newRecordId, writeRecord, type CheckpointRecord, type RecordedChange } from '../workspace/checkpoints.js';
import type { Workspace } from '../workspace/workspace.js';

/** Longest turn id: an agent's message or turn id (a UUID, `msg_…`) fits many times over. */
export const TURN_MAX_CHARS = 128;
const TURN = /^[\x21-\x7e]+$/;

/** The turn as a door received it, checked: a string of printable ASCII without spaces, or nothing. */
export function parseTurn(raw: unknown): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw === 'string' && raw.length <= TURN_MAX_CHARS && TURN.test(raw)) return raw;
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw) ?? String(raw);
  const printable = text.replace(/[^\x20-\x7e]/g, '?');
  throw E.turnInvalid(JSON.stringify(printable.length > 60 ? `${printable.slice(0, 60)}…` : printable), TURN_MAX_CHARS);
}

/** Watches one call: its announced changes, the backups it keeps, and when it first announced (its record's place). */
export class CallRecorder {
  id: string | null = null;
  plan: PlannedChange[] | null = null;
  dryRun = false;
  private readonly backups = new Map<string | null, string>();

  /** A run of the tool starts (the policy gate may run a dry run first): what an earlier run announced is forgotten. */
  started(dryRun: boolean): void {
    this.plan = null;
    this.dryRun = dryRun;
  }

  planned(changes: PlannedChange[]): void {
    this.id ??= newRecordId();
    this.plan = changes;
  }

  readonly kept = (sha256: string | null, id: string): void => {
    this.backups.set(sha256, id);
  };

  /** The call's record, or null when it changed nothing (a read, a dry run, a write of the same bytes, a refusal). */
  recordOf(tool: ToolDefinition, result: ToolResult<unknown>, meta: { turn: string | null; actor: string | null; requestId: string }): CheckpointRecord | null {
    if (!tool.mutates || tool.recordsItself || this.dryRun) return null;
    const data = result.data as { applied?: unknown; created_directory?: unknown; created_path?: unknown } | null;
    if (data && data.applied === false) return null;
    const changes = result.changed ?? this.fromPlan(data);
    if (changes.length === 0) return null;
    return { id: this.id ?? newRecordId(), turn: meta.turn, at: new Date().toISOString(), actor: meta.actor, tool: tool.name, request_id: meta.requestId, changes };
  }

  private fromPlan(data: { created_directory?: unknown; created_path?: unknown } | null): RecordedChange[] {
    const out: RecordedChange[] = [];
    const dirs = new Set<string>();
    const dir = (p: string) => {
      if (dirs.has(p)) return;
      dirs.add(p);
      out.push({ path: p, op: 'create', kind: 'directory', sha256_before: null, sha256_after: null, backup_id: null, lines_added: 0, lines_removed: 0 });
    };
    for (const c of this.plan ?? []) {
      // Parents made on the way (write_file's create_dirs, create_directory's parents, a move's destination) go back too.
      const first = typeof data?.created_directory === 'string' ? data.created_directory : typeof data?.created_path === 'string' ? data.created_path : null;
      const leaf = c.op === 'move' || c.op === 'copy' ? (c.to as string) : c.path;
      if (first !== null) for (const d of createdChain(first, c.kind === 'directory' && c.op === 'create' ? leaf : parentOf(leaf))) dir(d);
      if (c.kind === 'directory' && c.op === 'create') {
        dir(c.path);
        continue;
      }
      const lines = { lines_added: c.diff?.lines_added ?? 0, lines_removed: c.diff?.lines_removed ?? 0 };
      if (c.op === 'copy') {
        out.push({ path: c.to as string, op: 'create', kind: c.kind, sha256_before: null, sha256_after: c.sha256After, backup_id: null, ...lines });
        continue;
      }
      const backup = c.op === 'update' || c.op === 'delete' ? (this.backups.get(c.sha256Before) ?? null) : null;
      out.push({ path: c.path, op: c.op, kind: c.kind, ...(c.to !== undefined && { to: c.to }), sha256_before: c.sha256Before, sha256_after: c.sha256After, backup_id: backup, ...lines });
    }
    return out;
  }
}

function parentOf(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i < 0 ? '.' : rel.slice(0, i);
}

/** The directories from `first` (as the tool named it, maybe with a trailing '/') down to `leaf`, outermost first. */
function createdChain(first: string, leaf: string): string[] {
  const top = first.replace(/\/+$/, '');
  if (top === '' || (leaf !== top && !leaf.startsWith(`${top}/`))) return [];
  const chain = [top];
  for (const seg of leaf.slice(top.length + 1).split('/')) if (seg !== '') chain.push(`${chain[chain.length - 1]}/${seg}`);
  return chain;
}

/** Keeps the record (its file is written while the call answers); a failure is the log's, never the answer's: the change itself was made. */
export function keepRecord(ws: Workspace, record: CheckpointRecord, onError: (err: unknown) => void): void {
  writeRecord(ws, record).catch(onError);
}
