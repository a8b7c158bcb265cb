// Audit log (docs/operations.md): one JSON line per tool call, appended to `<state>/audit/<instance>-<YYYY-MM-DD>.jsonl`
// and written to stdout. Lines are hash-chained per file: each carries `prev` (the `hash` of the line
// before it, null on a file's first line) and `hash` (sha256 of the line's own text without the `hash`
// field), so an edited, removed or reordered line breaks the chain (`toolgate audit verify <file>`).
// Facts only: never file contents, arguments, tokens or other secrets.
import { createHash } from 'node:crypto';
import fsNow from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { CallInfo, CallOutcome } from '../tools/call.js';
import { SMALL_IO_BYTES, syncInFlight } from '../workspace/sync-first-io.js';

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

/** Unauthenticated refusals of one address that get a line each per window; the rest are counted. */
export const REFUSAL_LINES_PER_WINDOW = 10;
/** Addresses whose refusals are counted at once; past it the oldest one's count is written out early. */
const MAX_COUNTED_ADDRESSES = 10_000;
/** Refusals of callers that showed no valid token: the ones a flood of bad tokens is made of. */
const COUNTED_CODES = new Set(['UNAUTHORIZED', 'RATE_LIMITED']);

/** The refusals of one client address in its current window. */
interface RefusalWindow {
  start: number;
  lines: number;
  counted: number;
  codes: Record<string, number>;
  from: string;
  to: string;
  stateDir: string | null;
}

const HASH_SUFFIX = /,"hash":"([0-9a-f]{64})"\}$/;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
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

/** A chained line: the entry with `prev`, then `hash` over everything before it. */
export function chainLine(entry: object, prev: string | null): { line: string; hash: string } {
  return hashed(JSON.stringify({ ...entry, prev }));
}

/** chainLine of an entry already serialized (one without `prev`): `prev` goes last, as the spread above puts it. */
function chainJson(json: string, prev: string | null): { line: string; hash: string } {
  return hashed(`${json.slice(0, -1)},"prev":${prev === null ? 'null' : `"${prev}"`}}`);
}

function hashed(body: string): { line: string; hash: string } {
  const hash = sha256Hex(body);
  return { line: `${body.slice(0, -1)},"hash":"${hash}"}`, hash };
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

/** The hash a line hands on to the next one: its `hash` field, or (for a damaged line) the sha256 of its text. */
export function hashOfLine(line: string): string {
  return HASH_SUFFIX.exec(line)?.[1] ?? sha256Hex(line);
}

/** An entry waiting for its file: its JSON (without `prev`) and its time, which a gap record reports. */
interface PendingEntry {
  json: string;
  time: string;
}

/**
 * Entries a state directory's audit files could not take (disk full, I/O error). Kept per state directory,
 * not per file, so entries lost before midnight are still reported by the next day's file.
 */
class AuditGap {
  lost = 0;
  private from = '';
  private to = '';
  private reason = '';

  count(entries: readonly PendingEntry[], err: unknown): void {
    if (entries.length === 0) return;
    if (this.lost === 0) this.from = (entries[0] as PendingEntry).time;
    this.to = (entries.at(-1) as PendingEntry).time;
    this.lost += entries.length;
    this.reason = (err as NodeJS.ErrnoException).code ?? 'error';
  }

  /** The gap line's entry; `from`/`to` are the times of the first and last lost entries. */
  entryJson(now: Date): string {
    return JSON.stringify({ time: now.toISOString(), event: 'audit_gap', lost: this.lost, from: this.from, to: this.to, error: this.reason });
  }

  clear(): void {
    this.lost = 0;
  }
}

/**
 * One audit file of this process. Lines are chained in the order they are recorded and written in
 * groups: while one append is in flight, the lines that arrive meanwhile wait and go out together in
 * the next one (one write per group instead of an open/write/close per call under load).
 */
class AuditFile {
  private prev: string | null | undefined;
  private needsNewline = false;
  private pending: PendingEntry[] = [];
  private draining: Promise<void> | null = null;
  /** Where the file must be cut back to before the next write, when cutting a failed write back failed too. */
  private cutBackTo: number | null = null;
  /** The descriptor appendWholeNow writes on, kept between groups; null until the first or after a failure. */
  private fd: number | null = null;

  constructor(
    readonly file: string,
    private readonly gap: AuditGap,
    private readonly onError: (err: unknown) => void,
  ) {}

  append(entry: PendingEntry): void {
    this.pending.push(entry);
    // After the answers of this turn of the event loop are out, in one group with every line they recorded.
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  /** Resolves when every line appended so far is written (or has failed and been counted as lost). */
  idle(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const group = this.pending;
        this.pending = [];
        try {
          await this.write(group);
        } catch (err) {
          this.gap.count(group, err);
          // Resume the chain from what the file really holds next time.
          this.prev = undefined;
          this.onError(err);
        }
      }
    } finally {
      this.draining = null;
    }
  }

  private async write(group: PendingEntry[]): Promise<void> {
    if (this.prev === undefined) await this.resume();
    const jsons = group.map((e) => e.json);
    const gapped = this.gap.lost > 0;
    if (gapped) jsons.unshift(this.gap.entryJson(new Date()));
    let text = this.needsNewline ? '\n' : '';
    let prev = this.prev ?? null;
    for (const json of jsons) {
      const { line, hash } = chainJson(json, prev);
      text += `${line}\n`;
      prev = hash;
    }
    await this.appendWhole(Buffer.from(text, 'utf8'));
    this.needsNewline = false;
    this.prev = prev;
    if (gapped) this.gap.clear();
  }

  /**
   * Appends all of `bytes` or nothing: a write cut short (a full disk takes what fits, then fails) is
   * truncated back to the file's old end, so the file never ends in a torn line that breaks verify.
   */
  private async appendWhole(bytes: Buffer): Promise<void> {
    // A small group while no fsync runs: four quick calls here instead of four round trips through the thread
    // pool (the audit cost a small read a tenth of its time); during an fsync they could wait for its commit.
    if (bytes.length <= SMALL_IO_BYTES && !syncInFlight()) return this.appendWholeNow(bytes);
    const fh = await fs.open(this.file, 'a', 0o600);
    try {
      if (this.cutBackTo !== null) {
        await fh.truncate(this.cutBackTo);
        this.cutBackTo = null;
      }
      const { size } = await fh.stat();
      try {
        for (let done = 0; done < bytes.length; ) {
          const { bytesWritten } = await fh.write(bytes, done, bytes.length - done);
          if (bytesWritten === 0) throw Object.assign(new Error('audit write made no progress'), { code: 'ENOSPC' });
          done += bytesWritten;
        }
      } catch (err) {
        // Shrinking needs no space, so this normally succeeds; if not, the next write retries it first.
        await fh.truncate(size).catch(() => (this.cutBackTo = size));
        throw err;
      }
    } finally {
      await fh.close();
    }
  }

  /** appendWhole, synchronously, on the descriptor kept open between groups (see openNow). */
  private appendWholeNow(bytes: Buffer): void {
    const { fd, size } = this.openNow();
    try {
      for (let done = 0; done < bytes.length; ) {
        const written = fsNow.writeSync(fd, bytes, done, bytes.length - done);
        if (written === 0) throw Object.assign(new Error('audit write made no progress'), { code: 'ENOSPC' });
        done += written;
      }
    } catch (err) {
      try {
        fsNow.ftruncateSync(fd, size);
      } catch {
        this.cutBackTo = size;
      }
      // Opened anew next time, as a failed write did before the descriptor was kept.
      this.closeNow();
      throw err;
    }
  }

  /**
   * The file's descriptor and current size, opened once and kept: an open and a close per group were a third
   * of a small read's system calls. A file removed from under the service (no links left) is opened anew.
   */
  private openNow(): { fd: number; size: number } {
    if (this.fd !== null) {
      const st = fsNow.fstatSync(this.fd);
      if (st.nlink > 0) return { fd: this.fd, size: this.cutBack(this.fd, st.size) };
      this.closeNow();
    }
    const fd = fsNow.openSync(this.file, 'a', 0o600);
    try {
      this.fd = fd;
      return { fd, size: this.cutBack(fd, fsNow.fstatSync(fd).size) };
    } catch (err) {
      this.closeNow();
      throw err;
    }
  }

  /** Cuts the file back where an earlier failed write could not; the size to write at. */
  private cutBack(fd: number, size: number): number {
    if (this.cutBackTo === null) return size;
    fsNow.ftruncateSync(fd, this.cutBackTo);
    const to = this.cutBackTo;
    this.cutBackTo = null;
    return to;
  }

  /** Closes the kept descriptor (a failed write, a forgotten day, shutdown). */
  closeNow(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      fsNow.closeSync(fd);
    } catch {
      // Already gone: nothing is left to release.
    }
  }

  /** After a restart: continue the chain from the last line already in today's file. */
  private async resume(): Promise<void> {
    await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const last = await readLastLine(this.file);
    this.prev = last === null ? null : hashOfLine(last.line);
    // A line cut short by a crash stays a line of its own (verify reports it) instead of merging with ours.
    this.needsNewline = last !== null && !last.terminated;
  }
}

/** The last non-empty line of a file, read from its end (audit files can be large). */
export async function readLastLine(file: string): Promise<{ line: string; terminated: boolean } | null> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const { size } = await fh.stat();
    if (size === 0) return null;
    const chunk = 64 * 1024;
    let end = size;
    let tail = Buffer.alloc(0);
    for (;;) {
      const start = Math.max(0, end - chunk);
      const buf = Buffer.alloc(end - start);
      await fh.read(buf, 0, buf.length, start);
      tail = Buffer.concat([buf, tail]);
      end = start;
      const text = tail.toString('utf8');
      const terminated = text.endsWith('\n');
      const body = text.replace(/\n+$/, '');
      const nl = body.lastIndexOf('\n');
      if (nl >= 0 || start === 0) return body === '' ? null : { line: body.slice(nl + 1), terminated };
    }
  } finally {
    await fh.close();
  }
}

export class AuditLog {
  private readonly files = new Map<string, AuditFile>();
  /** Lost entries per state directory, until a gap line records them. */
  private readonly gaps = new Map<string, AuditGap>();
  /** Lines for the stream (stdout), as `{"level":30,"log":"audit",…}` like the service's other JSON logs. */
  private readonly stdout: GroupedLines | null;
  /** Unauthenticated refusals per client address, so a flood of bad tokens costs a bounded number of lines. */
  private readonly refusals = new Map<string, RefusalWindow>();
  private refusalTimer: NodeJS.Timeout | null = null;
  private readonly refusalWindowMs: number;
  /** Called when a line cannot be written (the call itself is already answered). */
  onError: (err: unknown) => void = () => undefined;

  constructor(private readonly opts: AuditOptions) {
    this.stdout = opts.stream ? new GroupedLines(opts.stream) : null;
    this.refusalWindowMs = opts.refusalWindowMs ?? 60_000;
  }

  /** File of a state directory for a day: `<state>/audit/<instance>-<YYYY-MM-DD>.jsonl` (UTC). */
  fileFor(stateDir: string, when: Date): string {
    return path.join(stateDir, 'audit', `${this.opts.instanceId}-${when.toISOString().slice(0, 10)}.jsonl`);
  }

  /** Executor after-hook. Writes are queued so lines keep the order of the calls and the chain holds. */
  record(call: CallInfo, toolName: string, outcome: CallOutcome): void {
    const now = new Date();
    this.write(auditEntryOf(call, toolName, outcome, now), call.ws.stateDir, now);
  }

  /**
   * A tool call refused before a workspace was chosen (no or a wrong token, a project the token may not
   * use): still one line, to stdout and, in single-project mode, to the workspace's file. Past the first
   * REFUSAL_LINES_PER_WINDOW refusals without a valid token, an address's refusals are only counted, and
   * one line per window says how many there were.
   */
  recordRefusal(r: { requestId: string; clientIp: string | null; tool: string; code: string; httpStatus: number; durationMs: number }, stateDir: string | null): void {
    const now = new Date();
    if (COUNTED_CODES.has(r.code) && !this.admitRefusal(r.clientIp ?? 'unknown', r.code, stateDir, now)) return;
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

  /** True when the refusal gets its own line; otherwise it is counted in its address's window. */
  private admitRefusal(clientIp: string, code: string, stateDir: string | null, now: Date): boolean {
    let w = this.refusals.get(clientIp);
    if (w && now.getTime() - w.start >= this.refusalWindowMs) {
      this.writeRefusalCount(clientIp, w, now);
      this.refusals.delete(clientIp);
      w = undefined;
    }
    if (!w) {
      if (this.refusals.size >= MAX_COUNTED_ADDRESSES) this.sweepRefusals(now, true);
      w = { start: now.getTime(), lines: 0, counted: 0, codes: {}, from: '', to: '', stateDir };
      this.refusals.set(clientIp, w);
    }
    if (w.lines < REFUSAL_LINES_PER_WINDOW) {
      w.lines++;
      return true;
    }
    if (w.counted === 0) w.from = now.toISOString();
    w.to = now.toISOString();
    w.counted++;
    w.codes[code] = (w.codes[code] ?? 0) + 1;
    w.stateDir = stateDir;
    // Windows that end while their address is quiet are written out by this timer (unref: it never keeps the process up).
    this.refusalTimer ??= setInterval(() => this.sweepRefusals(new Date(), false), this.refusalWindowMs).unref();
    return false;
  }

  /**
   * Writes the counts of ended windows and forgets them; with `makeRoom` also the oldest open one when
   * the map is full, with `all` every count (shutdown). Windows sit in the map oldest first, so the
   * scan stops at the first one still open.
   */
  private sweepRefusals(now: Date, makeRoom: boolean, all = false): void {
    for (const [ip, w] of this.refusals) {
      const ended = now.getTime() - w.start >= this.refusalWindowMs;
      if (!ended && !all) break;
      this.writeRefusalCount(ip, w, now);
      if (ended) this.refusals.delete(ip);
      else Object.assign(w, { counted: 0, codes: {} });
    }
    if (makeRoom && this.refusals.size >= MAX_COUNTED_ADDRESSES) {
      const [ip, w] = this.refusals.entries().next().value as [string, RefusalWindow];
      this.writeRefusalCount(ip, w, now);
      this.refusals.delete(ip);
    }
    if ((all || this.refusals.size === 0) && this.refusalTimer) {
      clearInterval(this.refusalTimer);
      this.refusalTimer = null;
    }
  }

  private writeRefusalCount(clientIp: string, w: RefusalWindow, now: Date): void {
    if (w.counted === 0) return;
    const entry = { time: now.toISOString(), event: 'refusals_counted', client_ip: clientIp, count: w.counted, codes: w.codes, from: w.from, to: w.to };
    this.write(entry, w.stateDir, now);
  }

  private write(entry: { time: string }, stateDir: string | null, now: Date): void {
    const toFile = this.opts.file && stateDir !== null;
    if (!this.stdout && !toFile) return;
    const json = JSON.stringify(entry);
    this.stdout?.push(`{"level":30,"log":"audit",${json.slice(1)}`);
    if (!toFile) return;
    const file = this.fileFor(stateDir, now);
    let writer = this.files.get(file);
    if (!writer) {
      let gap = this.gaps.get(stateDir);
      if (!gap) this.gaps.set(stateDir, (gap = new AuditGap()));
      writer = new AuditFile(file, gap, (err) => this.onError(err));
      this.files.set(file, writer);
      this.forgetOldDays(file);
    }
    writer.append({ json, time: entry.time });
  }

  /** Resolves when every line recorded so far is on disk and handed to the stream (shutdown, tests). */
  async flush(): Promise<void> {
    // Counts of windows still open are written too (shutdown), and counting starts again after them.
    this.sweepRefusals(new Date(), false, true);
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

/** A gap line: entries the disk could not take, between the times of the first and the last of them. */
export interface AuditGapRecord {
  /** 1-based line number of the gap line. */
  line: number;
  lost: number;
  from: string;
  to: string;
}

export interface VerifyResult {
  ok: boolean;
  lines: number;
  /** Gap lines found in an intact chain (absent when there are none). */
  gaps?: AuditGapRecord[];
  /** 1-based number of the first line where the chain breaks. */
  line?: number;
  reason?: string;
}

/** Checks a file's chain: every line intact, the first with prev null, each prev the hash of the line before. */
export function verifyAuditText(text: string): VerifyResult {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let prev: string | null = null;
  const gaps: AuditGapRecord[] = [];
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i] as string;
    const fail = (reason: string): VerifyResult => ({ ok: false, lines: lines.length, line: n, reason });
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return fail('not a JSON line (damaged or cut short)');
    }
    const m = HASH_SUFFIX.exec(line);
    if (!m || typeof parsed !== 'object' || parsed === null) return fail('no hash field at the end of the line');
    const own = sha256Hex(`${line.slice(0, m.index)}}`);
    if (own !== m[1]) return fail('the line was edited (its hash does not match its content)');
    const linePrev = (parsed as { prev?: unknown }).prev;
    if (linePrev !== prev) {
      return fail(
        i === 0
          ? 'the first line does not start the chain (prev should be null): lines before it were removed'
          : `prev does not match the hash of line ${n - 1}: a line was removed, inserted or reordered here`,
      );
    }
    const record = parsed as { event?: unknown; lost?: unknown; from?: unknown; to?: unknown };
    if (record.event === 'audit_gap') {
      const { lost, from, to } = record;
      if (!Number.isSafeInteger(lost) || (lost as number) < 1 || typeof from !== 'string' || typeof to !== 'string') {
        return fail('a gap line without its count of lost entries and their times');
      }
      gaps.push({ line: n, lost: lost as number, from, to });
    }
    prev = m[1] as string;
  }
  return { ok: true, lines: lines.length, ...(gaps.length > 0 && { gaps }) };
}

/** What `toolgate audit verify` prints for a file. */
export function describeVerifyResult(file: string, result: VerifyResult): string {
  if (!result.ok) return `FAILED: ${file}: line ${result.line}: ${result.reason}.\n`;
  let text = `OK: ${file}: ${result.lines} line(s), hash chain intact.\n`;
  for (const g of result.gaps ?? []) {
    text += `GAP: line ${g.line}: ${g.lost} entr${g.lost === 1 ? 'y' : 'ies'} from ${g.from} to ${g.to} could not be written (recorded when writing resumed).\n`;
  }
  return text;
}

export async function verifyAuditFile(file: string): Promise<VerifyResult> {
  return verifyAuditText(await fs.readFile(file, 'utf8'));
}
