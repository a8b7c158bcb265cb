// The approval record (docs/approvals.md), declared once: the fields that /v1/approvals answers with and that a
// store keeps (sealed, with `v`), its id and statuses, and what a store's backend must do. The life cycle
// (approvals.ts) and both backends (approvals-file.ts, approvals-redis.ts) build on this module.
import { closeSync, constants, fsyncSync, openSync } from 'node:fs';
import { z } from 'zod';
import { RISK_LEVELS, RISKS, VersionSchema } from '../envelope.js';
import { ChangeEntrySchema } from '../tools/plan.js';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'used'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** `apr_` + 128 random bits (base64url): unguessable, and safe as a file name and a Redis key as it is. */
export const APPROVAL_ID = /^apr_[A-Za-z0-9_-]{22}$/;

export function isApprovalId(id: unknown): id is string {
  return typeof id === 'string' && APPROVAL_ID.test(id);
}

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const Iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'an ISO time');

/** An approval request as /v1/approvals shows it; the stored record is this and its format version `v`. */
export const ApprovalSchema = z
  .strictObject({
    id: z.string().regex(APPROVAL_ID),
    status: z.enum(APPROVAL_STATUSES),
    caller: z.string().nullable().describe('Token id that asked (null without auth).'),
    project: z.string().nullable(),
    tool: z.string(),
    /** Relative POSIX path the call acts on (for people; the binding is the argument hash). */
    path: z.string().nullable(),
    risk: z.enum(RISKS),
    risk_level: z.enum(RISK_LEVELS),
    /** sha256 of the canonical JSON of the normalized arguments (argsHash). */
    args_hash: Sha256,
    /** The file's version when it was asked (null: it did not exist). */
    file_version: VersionSchema.nullable(),
    summary: z.string(),
    diff_preview: z.string(),
    diff_truncated: z.boolean(),
    changes: z
      .array(ChangeEntrySchema)
      .describe('Every change the call makes, each with its operation and diff (a delete: the content that goes); diff_preview is their concatenation.'),
    /** sha256 of the changes' identities (changesHash). */
    changes_hash: Sha256.nullable().describe('What the approval binds to: the repeat must plan these very changes, else CONFLICT. null for a call that changes no file.'),
    /** The policy rule that asked. */
    rule: z.strictObject({ index: z.number().int().nonnegative(), name: z.string().optional() }).nullable(),
    ttl_ms: z.number().int().positive(),
    created_at: Iso,
    expires_at: Iso,
    decided_at: Iso.nullable(),
    /** Token id of the person who decided; null without auth (a loopback caller) or when undecided. */
    decided_by: z.string().nullable(),
    reason: z.string().nullable(),
    used_at: Iso.nullable(),
  })
  .meta({ id: 'Approval' });

/**
 * The stored record's schema, built when a record is first written or checked: a start without a policy never
 * builds it (docs/development.md, "Start-up"). `changes` and `changes_hash` are absent only in records written
 * before changes were recorded; they read as none.
 */
function buildApprovalRecordSchema() {
  const { changes, changes_hash } = ApprovalSchema.shape;
  return z.strictObject({ v: z.literal(1), ...ApprovalSchema.shape, changes: changes.optional(), changes_hash: changes_hash.optional() });
}

let recordSchema: ReturnType<typeof buildApprovalRecordSchema> | null = null;
export const approvalRecordSchema = (): ReturnType<typeof buildApprovalRecordSchema> => (recordSchema ??= buildApprovalRecordSchema());

export type ApprovalRecord = z.output<ReturnType<typeof buildApprovalRecordSchema>>;

/** How a backend stores a record and reads it back verified (RecordSigner in approvals.ts). */
export interface RecordSeal {
  /** The stored text of a record. */
  seal(record: ApprovalRecord): string;
  /** The record when the text is a sealed record of `id`; null otherwise (altered, foreign, torn). */
  open(text: string, id: string): ApprovalRecord | null;
}

/** What a store keeps: reading a verified record, and moving it on atomically. */
export interface ApprovalBackend {
  readonly kind: 'files' | 'redis';
  /** Stores a new pending record. */
  insert(record: ApprovalRecord): Promise<void>;
  /** The stored record; null when absent; `tampered` when present but not verifiable. */
  read(id: string): Promise<ApprovalRecord | null | 'tampered'>;
  /**
   * Replaces `current` by `next` if and only if no other process moved the record on since `current` was
   * read (for `pending` and `approved`, the statuses that move on, and `used` back to `approved` by the
   * process that used it: ApprovalStore.release). True when this process won.
   */
  transition(current: ApprovalRecord, next: ApprovalRecord): Promise<boolean>;
  remove(id: string): Promise<void>;
  ids(): Promise<string[]>;
  /** Calls back with an id whose record may have changed (in any process); returns an unsubscribe. */
  watch(listener: (id: string) => void): () => void;
  /** How often a waiter reads again when no change notice came (notices can be lost: NFS, Redis reconnects). */
  readonly pollMs: number;
  close(): Promise<void>;
}

/** Makes a directory's new entries durable (the generated secret, the file store's records). */
export async function fsyncDir(dir: string): Promise<void> {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
