// Approval requests (docs/approvals.md): signed records, their life cycle and the rules of deciding and using one.
// The storage (files on the shared volume, or Redis) is a backend with one atomic primitive, a
// compare-and-set that lets exactly one process move a record out of `pending` and out of `approved` (and back
// from `used`, for the call that used it and then applied nothing); everything else (binding checks, expiry, waiting) lives here once, so both stores behave the same.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fsyncSync, openSync, writeSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Risk, RiskLevel, VersionStamp } from '../envelope.js';
import { E, type ApprovalError } from '../errors.js';
import { changeIdentity, type ChangeEntry } from '../tools/plan.js';
import { approvalRecordSchema, fsyncDir, isApprovalId, type ApprovalBackend, type ApprovalRecord, type ApprovalStatus, type RecordSeal } from './approval-record.js';

export { isApprovalId, type ApprovalRecord, type ApprovalStatus } from './approval-record.js';

// The approval flow's errors are the catalogue's (src/errors.ts); tests and workers import ApprovalError from here.
export { ApprovalError, type ApprovalErrorCode } from '../errors.js';

export function newApprovalId(): string {
  return `apr_${randomBytes(16).toString('base64url')}`;
}

/** What the executor knows when a call needs approval. */
export interface NewApproval {
  caller: string | null;
  project: string | null;
  tool: string;
  path: string | null;
  risk: Risk;
  risk_level: RiskLevel;
  args_hash: string;
  file_version: VersionStamp | null;
  summary: string;
  diff_preview: string;
  diff_truncated: boolean;
  /** What the call changes (none for a read that asks). */
  changes?: ChangeEntry[];
  changes_hash?: string | null;
  rule?: { index: number; name?: string } | null;
  /** From the policy (`approvals.ttl`). */
  ttlMs: number;
}

/** What a repeated call must match to use an approval. */
export interface ApprovalBinding {
  caller: string | null;
  project: string | null;
  tool: string;
  args_hash: string;
}

export type ConsumeOutcome =
  /** Run the call now; the approval is spent (status `used`) unless `release` gives it back. */
  | { kind: 'run'; record: ApprovalRecord }
  /** Nobody decided yet: answer 202 again. */
  | { kind: 'pending'; record: ApprovalRecord }
  /** USER_REJECTED, APPROVAL_EXPIRED, INVALID_PARAM (other arguments, caller…) or CONFLICT (the file changed). */
  | { kind: 'refused'; error: ApprovalError; record: ApprovalRecord | null };

export interface DecideInput {
  decision: 'approved' | 'rejected';
  /** Token id of the person deciding; null without auth. */
  by: string | null;
  reason?: string | null;
  /** The deciding token is marked `self_approve: true` (an IDE that shows its own dialog). */
  selfApprove?: boolean;
}

export interface SweepResult {
  /** Requests that expired now (each reported by one process only: it won the transition). */
  expired: ApprovalRecord[];
  /** Ids whose records were deleted (settled and past the retention). */
  removed: string[];
}

export interface ApprovalStore {
  readonly kind: 'files' | 'redis';
  create(input: NewApproval): Promise<ApprovalRecord>;
  /** The record with its effective status (a pending one past its time reads `expired`); null when unknown, malformed or altered. */
  get(id: string): Promise<ApprovalRecord | null>;
  list(filter?: { status?: ApprovalStatus; project?: string | null }): Promise<ApprovalRecord[]>;
  /** pending -> approved/rejected, once: NOT_FOUND, CONFLICT (decided already), APPROVAL_EXPIRED, ACCESS_DENIED (own request). */
  decide(id: string, input: DecideInput): Promise<ApprovalRecord>;
  /** The repeated call: checks the binding and the file version, and approved -> used exactly once. */
  consume(id: string, binding: ApprovalBinding, currentVersion: VersionStamp | null): Promise<ConsumeOutcome>;
  /**
   * used -> approved again, for the process whose repeat used it and then applied nothing (its files moved on):
   * the approval stays for a later repeat until it expires. The record as approved, or null when it moved on meanwhile.
   */
  release(used: ApprovalRecord): Promise<ApprovalRecord | null>;
  /** Resolves with the record once it is no longer pending (or at the timeout / abort with what it is then); null when unknown. */
  waitForDecision(id: string, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalRecord | null>;
  /** Expires overdue requests and deletes settled ones past the retention. */
  sweepExpired(now?: number): Promise<SweepResult>;
  close(): Promise<void>;
}

// --- Canonical arguments ------------------------------------------------------------------------------------

const MAX_DEPTH = 256;

/**
 * JSON with sorted keys and no spaces, so that the same arguments hash the same however they were written.
 * The caller resolves parameter aliases first (`file_path` -> `path`) and leaves out `approval_id`.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > MAX_DEPTH) throw E.approvalArgsTooDeep(MAX_DEPTH);
    if (v === null) return void out.push('null');
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return void out.push(JSON.stringify(v));
      case 'number':
        if (!Number.isFinite(v)) throw E.approvalArgsNotFinite();
        return void out.push(JSON.stringify(v)); // -0 prints as 0
      case 'object': {
        if (Array.isArray(v)) {
          out.push('[');
          v.forEach((item, i) => {
            if (i > 0) out.push(',');
            walk(item === undefined ? null : item, depth + 1);
          });
          return void out.push(']');
        }
        const keys = Object.keys(v as object)
          .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
          .sort();
        out.push('{');
        keys.forEach((k, i) => {
          if (i > 0) out.push(',');
          out.push(JSON.stringify(k), ':');
          walk((v as Record<string, unknown>)[k], depth + 1);
        });
        return void out.push('}');
      }
      default:
        throw E.approvalArgsNotJson(typeof v);
    }
  };
  walk(value, 0);
  return out.join('');
}

/** sha256 (hex) of what an approval binds to of its changes: operations, paths, content before and after. */
export function changesHash(changes: readonly ChangeEntry[]): string {
  return createHash('sha256').update(canonicalJson(changes.map(changeIdentity)), 'utf8').digest('hex');
}

/** sha256 (hex) of the canonical arguments, `approval_id` left out (it is what differs between the two calls). */
export function argsHash(args: Record<string, unknown>): string {
  const { approval_id: _ignored, ...rest } = args;
  return createHash('sha256').update(canonicalJson(rest), 'utf8').digest('hex');
}

// --- Signing ------------------------------------------------------------------------------------------------

const SIGN_DOMAIN = 'toolgate-approval-v1\n';

export class RecordSigner implements RecordSeal {
  readonly #key: Buffer;
  constructor(secret: Buffer) {
    if (secret.length < 16) throw new Error('The approval secret must be at least 16 bytes.');
    this.#key = Buffer.from(secret);
  }
  #mac(record: ApprovalRecord): Buffer {
    return createHmac('sha256', this.#key).update(SIGN_DOMAIN).update(canonicalJson(record)).digest();
  }
  /** The stored form: `{"record":<canonical JSON>,"sig":"<hex>"}`; the same record always seals to the same text. */
  seal(record: ApprovalRecord): string {
    return `{"record":${canonicalJson(record)},"sig":"${this.#mac(record).toString('hex')}"}`;
  }
  /** The record when the text is a sealed record of `id` with a valid signature; null otherwise (altered, foreign, torn). */
  open(text: string, id: string): ApprovalRecord | null {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return null;
    }
    const outer = z.strictObject({ record: z.unknown(), sig: z.string().regex(/^[0-9a-f]{64}$/) }).safeParse(raw);
    if (!outer.success) return null;
    const parsed = approvalRecordSchema().safeParse(outer.data.record);
    if (!parsed.success || parsed.data.id !== id) return null;
    // The MAC covers the record as received, so a field added or changed outside the service fails here
    // even when the schema would accept it.
    let expected: Buffer;
    try {
      expected = createHmac('sha256', this.#key).update(SIGN_DOMAIN).update(canonicalJson(outer.data.record)).digest();
    } catch {
      return null;
    }
    const given = Buffer.from(outer.data.sig, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return parsed.data;
  }
}

const SECRET_FILE = 'approval-secret';
const SECRET_TEXT = /^[0-9a-f]{64}\n?$/;

/**
 * The HMAC key: TOOLGATE_APPROVAL_SECRET when set, else `<stateDir>/approval-secret`, created (mode 0600)
 * by whichever replica comes first. O_EXCL decides who writes it; the others wait until they read the whole
 * key, so every replica signs with the same one.
 */
export async function loadApprovalSecret(stateDir: string, configured?: string): Promise<Buffer> {
  if (configured !== undefined) {
    if (Buffer.byteLength(configured) < 16) throw new Error('TOOLGATE_APPROVAL_SECRET must be at least 16 characters.');
    return Buffer.from(configured, 'utf8');
  }
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, SECRET_FILE);
  for (let attempt = 0; attempt < 200; attempt++) {
    let text: string | null = null;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== null) {
      if (SECRET_TEXT.test(text)) return Buffer.from(text.trim(), 'hex');
      // Shorter: another replica is still writing it. Anything else is not ours to overwrite.
      if (text.length >= 65 || !/^[0-9a-f]*$/.test(text)) {
        throw new Error(`${file} is not an approval secret (64 hex digits); remove it to have a new one generated, or set TOOLGATE_APPROVAL_SECRET.`);
      }
    } else {
      const key = randomBytes(32);
      let fd: number;
      try {
        fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        continue; // another replica won: read its key
      }
      try {
        writeSync(fd, `${key.toString('hex')}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      await fsyncDir(stateDir);
      return key;
    }
    await sleep(10);
  }
  throw new Error(`${file} stayed incomplete; remove it to have a new one generated.`);
}

// --- The life cycle, shared by both stores ------------------------------------------------------------------

export interface ApprovalStoreOptions {
  /** Settled records (used, rejected, expired) are deleted this long after they expire. Default 1 hour. */
  retainMs?: number;
  /** Told about a record that failed its integrity check (for the audit log); it is then treated as absent. */
  onTampered?: (id: string) => void;
  /** Clock, for tests of expiry. */
  now?: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A record as it stands now: pending or approved past its time reads as expired. */
export function effective(record: ApprovalRecord, now: number): ApprovalRecord {
  if ((record.status === 'pending' || record.status === 'approved') && now >= Date.parse(record.expires_at)) {
    return { ...record, status: 'expired' };
  }
  return record;
}

function sameVersion(a: VersionStamp | null, b: VersionStamp | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.sha256 !== null && b.sha256 !== null) return a.sha256 === b.sha256 && a.size_bytes === b.size_bytes;
  return a.sha256 === b.sha256 && a.size_bytes === b.size_bytes && a.mtime_ms === b.mtime_ms;
}

export class ApprovalStoreImpl implements ApprovalStore {
  readonly #b: ApprovalBackend;
  readonly #retainMs: number;
  readonly #onTampered: (id: string) => void;
  readonly #now: () => number;

  constructor(backend: ApprovalBackend, opts: ApprovalStoreOptions = {}) {
    this.#b = backend;
    this.#retainMs = opts.retainMs ?? 60 * 60 * 1000;
    this.#onTampered = opts.onTampered ?? (() => {});
    this.#now = opts.now ?? Date.now;
  }

  get kind() {
    return this.#b.kind;
  }

  async #read(id: string): Promise<ApprovalRecord | null | 'tampered'> {
    if (!isApprovalId(id)) return null;
    const r = await this.#b.read(id);
    if (r === 'tampered') this.#onTampered(id);
    return r;
  }

  async create(input: NewApproval): Promise<ApprovalRecord> {
    const now = this.#now();
    const record: ApprovalRecord = {
      v: 1,
      id: newApprovalId(),
      status: 'pending',
      caller: input.caller,
      project: input.project,
      tool: input.tool,
      path: input.path,
      risk: input.risk,
      risk_level: input.risk_level,
      args_hash: input.args_hash,
      file_version: input.file_version && { mtime_ms: input.file_version.mtime_ms, size_bytes: input.file_version.size_bytes, sha256: input.file_version.sha256 },
      summary: input.summary,
      diff_preview: input.diff_preview,
      diff_truncated: input.diff_truncated,
      changes: (input.changes ?? []).map((c) => ({ ...c })),
      changes_hash: input.changes_hash ?? null,
      rule: input.rule ? { index: input.rule.index, ...(input.rule.name !== undefined && { name: input.rule.name }) } : null,
      ttl_ms: input.ttlMs,
      created_at: iso(now),
      expires_at: iso(now + input.ttlMs),
      decided_at: null,
      decided_by: null,
      reason: null,
      used_at: null,
    };
    approvalRecordSchema().parse(record);
    await this.#b.insert(record);
    return record;
  }

  async get(id: string): Promise<ApprovalRecord | null> {
    const r = await this.#read(id);
    return r === null || r === 'tampered' ? null : effective(r, this.#now());
  }

  async list(filter: { status?: ApprovalStatus; project?: string | null } = {}): Promise<ApprovalRecord[]> {
    const out: ApprovalRecord[] = [];
    for (const id of await this.#b.ids()) {
      const r = await this.get(id);
      if (!r) continue;
      if (filter.status !== undefined && r.status !== filter.status) continue;
      if (filter.project !== undefined && r.project !== filter.project) continue;
      out.push(r);
    }
    return out.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async decide(id: string, input: DecideInput): Promise<ApprovalRecord> {
    const stored = await this.#read(id);
    if (stored === 'tampered') throw E.approvalTampered(id);
    if (stored === null) throw E.approvalNotFound(isApprovalId(id) ? id : 'with that id');
    const now = this.#now();
    const current = effective(stored, now);
    if (current.status === 'expired') throw E.approvalExpired(id, 'expired before it was decided');
    if (current.status !== 'pending') throw E.approvalAlreadyDecided(id, current.status);
    if (input.by !== null && input.by === current.caller && !input.selfApprove) {
      throw E.approvalSelfDecision();
    }
    const next: ApprovalRecord = {
      ...current,
      status: input.decision,
      decided_at: iso(now),
      decided_by: input.by,
      reason: input.reason ?? null,
      // An approval granted late in its window still leaves the caller a whole window to repeat the call.
      expires_at: input.decision === 'approved' ? iso(now + current.ttl_ms) : current.expires_at,
    };
    if (!(await this.#b.transition(current, next))) {
      const now2 = await this.get(id);
      throw E.approvalDecidedMeanwhile(id, now2?.status ?? null);
    }
    return next;
  }

  async consume(id: string, binding: ApprovalBinding, currentVersion: VersionStamp | null): Promise<ConsumeOutcome> {
    if (!isApprovalId(id)) return { kind: 'refused', error: E.approvalIdInvalid(), record: null };
    const stored = await this.#read(id);
    if (stored === 'tampered') return { kind: 'refused', error: E.approvalTampered(id), record: null };
    if (stored === null) return { kind: 'refused', error: E.approvalExpired(id, 'is unknown or was swept after it expired'), record: null };
    // The binding first, so that a caller holding someone else's id learns nothing about it.
    const mismatch =
      stored.caller !== binding.caller ? 'caller' : stored.project !== binding.project ? 'project' : stored.tool !== binding.tool ? 'tool' : stored.args_hash !== binding.args_hash ? 'arguments' : null;
    if (mismatch) {
      return { kind: 'refused', error: mismatch === 'arguments' ? E.approvalArgumentsDiffer(id) : E.approvalNotForThis(id, mismatch), record: null };
    }
    const now = this.#now();
    const current = effective(stored, now);
    switch (current.status) {
      case 'pending':
        return { kind: 'pending', record: current };
      case 'rejected':
        return {
          kind: 'refused',
          error: E.userRejected(id, current.reason),
          record: current,
        };
      case 'expired':
        return { kind: 'refused', error: E.approvalExpired(id, 'has expired'), record: current };
      case 'used':
        return { kind: 'refused', error: E.approvalExpired(id, 'was already used'), record: current };
      case 'approved':
        break;
    }
    if (!sameVersion(current.file_version, currentVersion)) {
      return {
        kind: 'refused',
        error: E.approvedFileChanged(id, current.file_version, currentVersion),
        record: current,
      };
    }
    const next: ApprovalRecord = { ...current, status: 'used', used_at: iso(now) };
    if (!(await this.#b.transition(current, next))) {
      return { kind: 'refused', error: E.approvalExpired(id, 'was already used'), record: await this.get(id) };
    }
    return { kind: 'run', record: next };
  }

  async release(used: ApprovalRecord): Promise<ApprovalRecord | null> {
    if (used.status !== 'used') return null;
    const approved: ApprovalRecord = { ...used, status: 'approved', used_at: null };
    return (await this.#b.transition(used, approved)) ? approved : null;
  }

  async waitForDecision(id: string, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalRecord | null> {
    if (!isApprovalId(id)) return null;
    const deadline = this.#now() + Math.max(0, timeoutMs);
    let wake: (() => void) | null = null;
    let changed = false;
    const unwatch = this.#b.watch((changedId) => {
      if (changedId !== id) return;
      changed = true;
      wake?.();
    });
    const onAbort = () => wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      let record = await this.get(id);
      for (;;) {
        if (!record || record.status !== 'pending') return record;
        const left = deadline - this.#now();
        if (left <= 0 || signal?.aborted) return record;
        if (!changed) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(left, this.#b.pollMs));
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = null;
        }
        changed = false;
        record = await this.get(id);
      }
    } finally {
      unwatch();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async sweepExpired(now = this.#now()): Promise<SweepResult> {
    const result: SweepResult = { expired: [], removed: [] };
    for (const id of await this.#b.ids()) {
      const stored = await this.#read(id);
      if (stored === null || stored === 'tampered') continue;
      const current = effective(stored, now);
      if (current.status === 'expired' && stored.status !== 'expired') {
        const next: ApprovalRecord = { ...stored, status: 'expired' };
        if (await this.#b.transition(stored, next)) result.expired.push(next);
        continue;
      }
      if (current.status !== 'pending' && current.status !== 'approved' && now >= Date.parse(current.expires_at) + this.#retainMs) {
        await this.#b.remove(id);
        result.removed.push(id);
      }
    }
    return result;
  }

  close(): Promise<void> {
    return this.#b.close();
  }
}

export interface OpenApprovalStoreOptions extends ApprovalStoreOptions {
  /** The state directory of the shared volume (`<stateDir>/approvals/`, and the generated secret). */
  stateDir: string;
  /** TOOLGATE_REDIS_URL: records in Redis instead of files. */
  redisUrl?: string;
  /** TOOLGATE_APPROVAL_SECRET. */
  secret?: string;
  /** Redis key prefix (tests keep apart with it). */
  redisPrefix?: string;
}

/** The store the configuration asks for: Redis when a URL is given, else files in the state directory. */
export async function openApprovalStore(opts: OpenApprovalStoreOptions): Promise<ApprovalStore> {
  const signer = new RecordSigner(await loadApprovalSecret(opts.stateDir, opts.secret));
  if (opts.redisUrl) {
    const { RedisApprovalBackend } = await import('./approvals-redis.js');
    return new ApprovalStoreImpl(await RedisApprovalBackend.connect(opts.redisUrl, signer, opts.redisPrefix), opts);
  }
  const { FileApprovalBackend } = await import('./approvals-file.js');
  return new ApprovalStoreImpl(await FileApprovalBackend.open(path.join(opts.stateDir, 'approvals'), signer), opts);
}
