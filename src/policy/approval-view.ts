// The shapes a request is shown in (docs/approvals.md): the record as the routes and the console show it
// (approvalView), what the person deciding sees (approvalRequestView, a door's confirmation), the 202 answer
// (pendingAnswer) and the preview a request records: its one-line summary, its changes within the record's
// budget and their combined diff, a command's settings. A caller who may not read what its call touches gets
// none of the content (withheldIf, withoutContent).
import { ERROR_STATUS } from '../errors.js';
import type { ExecSettings } from '../exec/settings.js';
import type { GatedResult } from '../tools/call.js';
import type { ToolDefinition, ToolResult } from '../tools/define.js';
import { describeChangesBriefly, type ChangeEntry } from '../tools/plan.js';
import { formatBytes } from '../workspace/encoding.js';
import type { ApprovalRecord } from './approvals.js';

/** An approval as the routes, the console and the 202 answer show it (the signed record minus its format version). */
export type ApprovalView = Omit<ApprovalRecord, 'v' | 'changes' | 'changes_hash'> & { changes: ChangeEntry[]; changes_hash: string | null };

export function approvalView(record: ApprovalRecord): ApprovalView {
  const { v: _v, ...view } = record;
  return { ...view, changes: record.changes ?? [], changes_hash: record.changes_hash ?? null };
}

/** The changes with their paths and operations but none of the content (diffs, deleted text). */
export function withoutContent(changes: readonly ChangeEntry[]): ChangeEntry[] {
  return changes.map((c) => ({ ...c, diff: '', content: c.content === null ? null : '' }));
}

/**
 * A 202 for a call that touches a file the caller may not read shows none of its content: the preview (the
 * dry run's data, the diff) is for the person deciding, who sees it on /v1/approvals (docs/policy.md).
 */
export function withheldIf(concealed: boolean, out: GatedResult): GatedResult {
  if (!concealed || out.httpStatus !== ERROR_STATUS.APPROVAL_REQUIRED) return out;
  const { approval } = out.result.data as { approval?: Record<string, unknown> };
  return {
    ...out,
    result: {
      ...out.result,
      data: {
        applied: false,
        ...(approval && { approval: { ...approval, diff_preview: '', diff_truncated: false, ...(Array.isArray(approval.changes) && { changes: withoutContent(approval.changes as ChangeEntry[]) }) } }),
      },
      text: `${out.result.text} The preview is shown only to the person deciding: the policy does not let this caller read what the call touches.`,
    },
  };
}

/** What the person deciding sees of a request (the 202 answer's `approval`, a door's confirmation). */
export function approvalRequestView(record: ApprovalRecord) {
  return {
    id: record.id,
    status: record.status,
    expires_at: record.expires_at,
    tool: record.tool,
    path: record.path,
    risk: record.risk,
    risk_level: record.risk_level,
    summary: record.summary,
    diff_preview: record.diff_preview,
    diff_truncated: record.diff_truncated,
    changes: record.changes ?? [],
  };
}

/** One line for the person: the dry run's own sentence for one change, else every change named. */
export function summaryOf(tool: ToolDefinition, rel: string, dry: ToolResult<unknown> | null, changes: readonly ChangeEntry[]): string {
  if (dry && changes.length <= 1) return dry.text.replace(/^\[Dry Run\] /, '').split('\n')[0] ?? '';
  if (changes.length > 0) return `${tool.name} would ${describeChangesBriefly(changes)}.`;
  return tool.mutates ? `${tool.name} on '${rel}' (no file changes).` : `${tool.name} on '${rel}'.`;
}

/**
 * The last lines of a command's preview (the console shows them as the request's facts): whether the command
 * reaches a network, and the limits it runs under (TOOLGATE_EXEC_*, docs/run-command.md).
 */
export function execSettingsLines(exec: ExecSettings | undefined): string[] {
  if (!exec) return [];
  const l = exec.limits;
  const size = (n: number) => (n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : formatBytes(n));
  return [
    `network: ${exec.network ? 'on (never the service host or the metadata address)' : 'off'}`,
    `limits: time ${l.timeoutS} s, CPU ${l.cpuS} s, memory ${size(l.memoryBytes)}, ${l.maxProcesses} processes, files up to ${size(l.maxFileBytes)}, ` +
      `${l.maxOpenFiles} open files, /tmp ${size(l.tmpBytes)}, ${l.quotaBytes > 0 ? `project growth up to ${size(l.quotaBytes)}` : 'no project quota'}`,
  ];
}

/** At most this many changes are shown in a record (the hash binds them all); each is bounded like a diff preview. */
export const MAX_SHOWN_CHANGES = 200;
/** Diff and content bytes a record holds in all; changes past it keep their path and operation, marked truncated. */
const MAX_RECORD_CHANGE_BYTES = 256 * 1024;

export function withinRecordBudget(changes: ChangeEntry[]): ChangeEntry[] {
  let left = MAX_RECORD_CHANGE_BYTES;
  return changes.map((c) => {
    const size = Buffer.byteLength(c.diff) + Buffer.byteLength(c.content ?? '');
    if (size <= left) {
      left -= size;
      return c;
    }
    left = 0;
    return { ...c, diff: '', content: c.content === null ? null : '', truncated: true };
  });
}

/** The combined `diff_preview` (every change, one after the other) is cut here. */
const MAX_COMBINED_PREVIEW_BYTES = 64 * 1024;

/**
 * `diff_preview` for clients that read only it: each change's diff in order, git's `rename from/to` for a move,
 * a delete without a diff as the removal of its content, a new directory as one line.
 */
export function changesPreview(changes: readonly ChangeEntry[]): { text: string; truncated: boolean } {
  const parts: string[] = [];
  let truncated = changes.some((c) => c.truncated);
  for (const c of changes) {
    let part = '';
    if (c.to !== undefined) part += `rename from ${c.path}\nrename to ${c.to}\n`;
    if (c.kind === 'directory' && c.op === 'create') part += `new directory ${c.path}/\n`;
    if (c.kind === 'directory' && c.op !== 'create' && c.content !== null) part += `${c.content.split('\n').filter((l) => l !== '').map((l) => `  ${l}`).join('\n')}\n`;
    if (c.diff !== '') part += c.diff.endsWith('\n') ? c.diff : `${c.diff}\n`;
    else if (c.op === 'delete' && c.content !== null) part += `--- a/${c.path}\n+++ /dev/null\n${c.content.split('\n').filter((l, i, all) => i < all.length - 1 || l !== '').map((l) => `-${l}`).join('\n')}\n`;
    parts.push(part);
  }
  let text = parts.join('');
  if (Buffer.byteLength(text) > MAX_COMBINED_PREVIEW_BYTES) {
    text = `${Buffer.from(text).subarray(0, MAX_COMBINED_PREVIEW_BYTES).toString('utf8').replace(/\uFFFD$/, '')}\n... (truncated)`;
    truncated = true;
  }
  return { text, truncated };
}

/** The 202 answer: nothing changed, the request and what the dry run showed. */
export function pendingAnswer(record: ApprovalRecord, dry: ToolResult<unknown> | null): GatedResult {
  const approval = approvalRequestView(record);
  const base = dry?.data && typeof dry.data === 'object' ? (dry.data as Record<string, unknown>) : {};
  return {
    httpStatus: ERROR_STATUS.APPROVAL_REQUIRED,
    result: {
      data: { ...base, applied: false, approval },
      text:
        `Waiting for approval ${record.id}: ${record.summary} Nothing was changed. A person approves or rejects it ` +
        `(the console at /console, or POST /v1/approvals/${record.id}/approve); then repeat this call with "approval_id": "${record.id}".`,
      ...(dry?.stats && { stats: { ...dry.stats, bytes_written: 0 } }),
      partial: true,
      pathResolved: record.path,
      riskLevel: record.risk_level,
    },
  };
}
