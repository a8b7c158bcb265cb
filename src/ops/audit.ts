// Audit log (docs/operations.md): one JSON line per tool call, appended to `<state>/audit/<instance>-<YYYY-MM-DD>.jsonl`
// and written to stdout. Lines are hash-chained per file (audit-chain.ts), written by audit-file.ts and checked
// by `toolgate audit verify <file>` (audit-verify.ts); a flood of refusals is counted (audit-refusals.ts).
// Facts only: never file contents, arguments, tokens or other secrets.
import path from 'node:path';
import { propertyJson } from '../envelope.js';
import type { CallInfo, CallOutcome } from '../tools/call.js';
import { AuditFile, AuditGap } from './audit-file.js';
import { RefusalThrottle } from './audit-refusals.js';

export interface AuditEntry {
  time: string;
  request_id: string;
  actor: string | null;
  client_ip: string | null;
  project: string | null;
  tool: string;
  path: string | null;
  risk: string;
  risk_level: string;
  outcome: string;
  error_code: string | null;
  http_status: number;
  bytes_read: number | null;
  bytes_written: number | null;
  sha256_before: string | null;
  sha256_after: string | null;
  duration_ms: number;
  /** run_command: the command, its exit and the project entries it changed (docs/run-command.md). */
  exec?: Record<string, unknown>;
}

export interface AuditOptions {
  /** Append lines to files under each workspace's state directory. */
  file: boolean;
  /** Also write each line here (stdout in production); null for none. */
  stream: NodeJS.WritableStream | null;
  instanceId: string;
  /** Window of the refusal count per client address (TOOLGATE_AUTH_FAIL_WINDOW_MS); default a minute. */
  refusalWindowMs?: number;
}

/** The facts of one call: what the audit line says. */
export function auditEntryOf(call: CallInfo, toolName: string, outcome: CallOutcome, now = new Date()): AuditEntry {
  const { envelope, audit } = outcome;
  return {
    time: now.toISOString(),
    request_id: call.requestId,
    actor: call.actor ?? null,
    client_ip: call.clientIp ?? null,
    project: envelope.context.project,
    tool: outcome.tool?.name ?? toolName.slice(0, 64),
    path: envelope.context.path_resolved,
    risk: envelope.context.risk,
    risk_level: envelope.context.risk_level,
    outcome: envelope.status,
    error_code: envelope.error?.code ?? null,
    http_status: outcome.httpStatus,
    bytes_read: audit.bytes_read ?? null,
    bytes_written: audit.bytes_written ?? null,
    sha256_before: audit.sha256_before ?? null,
    sha256_after: audit.sha256_after ?? null,
    duration_ms: Math.round(outcome.durationMs * 1000) / 1000,
    ...(audit.exec && { exec: audit.exec }),
  };
}

/**
 * auditEntryOf's JSON text without its opening brace, written without the object (docs/development.md, "Work done
 * once"): the keys are fixed, the values the envelope's and the outcome's as they are. `time` is an ISO time.
 */
export function auditLineBody(call: CallInfo, toolName: string, outcome: CallOutcome, time: string): string {
  const { envelope, audit } = outcome;
  const context = envelope.context;
  return (
    `"time":"${time}"${field('request_id', call.requestId)}${field('actor', call.actor ?? null)}${field('client_ip', call.clientIp ?? null)}` +
    `${field('project', context.project)}${field('tool', outcome.tool?.name ?? toolName.slice(0, 64))}${field('path', context.path_resolved)}` +
    `${field('risk', context.risk)}${field('risk_level', context.risk_level)}${field('outcome', envelope.status)}${field('error_code', envelope.error?.code ?? null)}` +
    `${field('http_status', outcome.httpStatus)}${field('bytes_read', audit.bytes_read ?? null)}${field('bytes_written', audit.bytes_written ?? null)}` +
    `${field('sha256_before', audit.sha256_before ?? null)}${field('sha256_after', audit.sha256_after ?? null)}` +
    `${field('duration_ms', Math.round(outcome.durationMs * 1000) / 1000)}${audit.exec ? field('exec', audit.exec) : ''}}`
  );
}

/** `,"key":value` as JSON.stringify writes a property after the first, or nothing where it leaves it out. */
function field(key: string, value: unknown): string {
  const json = propertyJson(key, value);
  return json === undefined ? '' : `,"${key}":${json}`;
}

/** An ISO time (`toISOString`) with its part up to the second made once per second: the time of every line. */
export class IsoClock {
  private second = Number.NaN;
  private prefix = '';

  at(ms: number): string {
    // toISOString's own form (a sign, six digits) outside the years 0 to 9999.
    if (!(ms >= 0 && ms <= 253_402_300_799_999) || !Number.isInteger(ms)) return new Date(ms).toISOString();
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      this.second = second;
      this.prefix = new Date(second * 1000).toISOString().slice(0, 20);
    }
    const frac = ms - second * 1000;
    return `${this.prefix}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}Z`;
  }
}

/**
 * Lines to a stream, written once per turn of the event loop: one write for all the calls that ended in
 * that turn, instead of a write per call. flush() writes what is waiting at once (shutdown, tests).
 */
class GroupedLines {
  private text = '';
  private timer: NodeJS.Immediate | null = null;

  constructor(private readonly stream: NodeJS.WritableStream) {}

  push(line: string): void {
    this.text += `${line}\n`;
    this.timer ??= setImmediate(() => this.flush());
  }

  flush(): void {
    if (this.timer) clearImmediate(this.timer);
    this.timer = null;
    if (this.text === '') return;
    const text = this.text;
    this.text = '';
    this.stream.write(text);
  }
}

export class AuditLog {
  private readonly files = new Map<string, AuditFile>();
  /** Lost entries per state directory, until a gap line records them. */
  private readonly gaps = new Map<string, AuditGap>();
  /** Lines for the stream (stdout), as `{"level":30,"log":"audit",…}` like the service's other JSON logs. */
  private readonly stdout: GroupedLines | null;
  /** Unauthenticated refusals per client address, so a flood of bad tokens costs a bounded number of lines. */
  private readonly refusals: RefusalThrottle;
  /** Called when a line cannot be written (the call itself is already answered). */
  onError: (err: unknown) => void = () => undefined;
  private readonly clock = new IsoClock();
  /** Today's file of each state directory, so a call does not join the path anew (one entry per directory). */
  private readonly today = new Map<string, { day: string; file: string }>();

  constructor(private readonly opts: AuditOptions) {
    this.stdout = opts.stream ? new GroupedLines(opts.stream) : null;
    this.refusals = new RefusalThrottle(opts.refusalWindowMs ?? 60_000, (entry, stateDir, now) => this.write(entry, stateDir, now));
  }

  /** File of a state directory for a day: `<state>/audit/<instance>-<YYYY-MM-DD>.jsonl` (UTC). */
  fileFor(stateDir: string, when: Date): string {
    return path.join(stateDir, 'audit', `${this.opts.instanceId}-${when.toISOString().slice(0, 10)}.jsonl`);
  }

  /** Executor after-hook. Writes are queued so lines keep the order of the calls and the chain holds. */
  record(call: CallInfo, toolName: string, outcome: CallOutcome): void {
    const toFile = this.opts.file;
    if (!this.stdout && !toFile) return;
    const time = this.clock.at(Date.now());
    const body = auditLineBody(call, toolName, outcome, time);
    this.stdout?.push(`{"level":30,"log":"audit",${body}`);
    if (!toFile) return;
    const stateDir = call.ws.stateDir;
    const day = time.slice(0, 10);
    let today = this.today.get(stateDir);
    if (today?.day !== day) {
      today = { day, file: path.join(stateDir, 'audit', `${this.opts.instanceId}-${day}.jsonl`) };
      this.today.set(stateDir, today);
    }
    this.append(today.file, stateDir, `{${body}`, time);
  }

  /**
   * A tool call refused before a workspace was chosen (no or a wrong token, a project the token may not
   * use): still one line, to stdout and, in single-project mode, to the workspace's file. Past the first
   * REFUSAL_LINES_PER_WINDOW refusals without a valid token, an address's refusals are only counted, and
   * one line per window says how many there were.
   */
  recordRefusal(r: { requestId: string; clientIp: string | null; tool: string; code: string; httpStatus: number; durationMs: number }, stateDir: string | null): void {
    const now = new Date();
    if (!this.refusals.admit(r.clientIp ?? 'unknown', r.code, stateDir, now)) return;
    const entry: AuditEntry = {
      time: now.toISOString(),
      request_id: r.requestId,
      actor: null,
      client_ip: r.clientIp,
      project: null,
      tool: r.tool.slice(0, 64),
      path: null,
      risk: 'read',
      risk_level: 'low',
      outcome: 'error',
      error_code: r.code,
      http_status: r.httpStatus,
      bytes_read: null,
      bytes_written: null,
      sha256_before: null,
      sha256_after: null,
      duration_ms: Math.round(r.durationMs * 1000) / 1000,
    };
    this.write(entry, stateDir, now);
  }

  /** An event that is not a tool call (an approval requested, decided, used or expired): one chained line. */
  recordEvent(entry: { time: string; event: string } & Record<string, unknown>, stateDir: string | null): void {
    this.write(entry, stateDir, new Date(entry.time));
  }

  private write(entry: { time: string }, stateDir: string | null, now: Date): void {
    const toFile = this.opts.file && stateDir !== null;
    if (!this.stdout && !toFile) return;
    const json = JSON.stringify(entry);
    this.stdout?.push(`{"level":30,"log":"audit",${json.slice(1)}`);
    if (!toFile) return;
    this.append(this.fileFor(stateDir, now), stateDir, json, entry.time);
  }

  private append(file: string, stateDir: string, json: string, time: string): void {
    let writer = this.files.get(file);
    if (!writer) {
      let gap = this.gaps.get(stateDir);
      if (!gap) this.gaps.set(stateDir, (gap = new AuditGap()));
      writer = new AuditFile(file, gap, (err) => this.onError(err));
      this.files.set(file, writer);
      this.forgetOldDays(file);
    }
    writer.append({ json, time });
  }

  /** Resolves when every line recorded so far is on disk and handed to the stream (shutdown, tests). */
  async flush(): Promise<void> {
    // Counts of windows still open are written too (shutdown), and counting starts again after them.
    this.refusals.sweep(new Date(), false, true);
    this.stdout?.flush();
    await Promise.all([...this.files.values()].map((f) => f.idle()));
  }

  /** flush, then the files' descriptors are closed (shutdown). A line recorded later opens its file again. */
  async close(): Promise<void> {
    await this.flush();
    for (const f of this.files.values()) f.closeNow();
  }

  private forgetOldDays(current: string): void {
    if (this.files.size < 64) return;
    for (const [key, f] of this.files) {
      if (key === current) continue;
      this.files.delete(key);
      // Its last group may still be on its way: the descriptor goes when it is written.
      void f.idle().then(() => f.closeNow());
    }
  }
}

