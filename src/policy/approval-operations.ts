// The approval requests as the routes and the console handle them (docs/approvals.md): who may decide, which
// requests a caller sees, and a person's decision recorded and audited. The caller who asked sees its own
// request without the preview, which may show a file the policy keeps from it.
import { E } from '../errors.js';
import { allowsProject, allowsRisk, type Principal } from '../ops/auth.js';
import type { ApprovalNotes } from './approval-events.js';
import { withoutContent } from './approval-view.js';
import type { ApprovalRecord, ApprovalStatus, ApprovalStore } from './approvals.js';

/** Whether this caller decides requests: a token with `approve`, or anyone without tokens (loopback only). */
export function mayDecide(principal: Principal | null): boolean {
  return principal === null || allowsRisk(principal, 'approve');
}

export class ApprovalOperations {
  constructor(
    /** null without a policy: there are no requests. */
    private readonly store: ApprovalStore | null,
    private readonly notes: ApprovalNotes,
  ) {}

  /** Requests this caller may see: a decider sees those of its projects, anyone else only its own. */
  async list(principal: Principal | null, status: ApprovalStatus | undefined): Promise<ApprovalRecord[]> {
    if (!this.store) return [];
    const all = await this.store.list(status !== undefined ? { status } : {});
    return all.filter((r) => visibleTo(r, principal)).map((r) => previewFor(r, principal));
  }

  async get(principal: Principal | null, id: string): Promise<ApprovalRecord> {
    const r = this.store ? await this.store.get(id) : null;
    if (!r || !visibleTo(r, principal)) throw E.approvalRequestGone();
    return previewFor(r, principal);
  }

  async decideRequest(principal: Principal | null, id: string, decision: 'approved' | 'rejected', reason: string | null): Promise<ApprovalRecord> {
    if (!mayDecide(principal)) {
      throw E.approvalDecideDenied(principal?.id ?? '');
    }
    const current = await this.get(principal, id);
    // The store's refusals are ApprovalErrors, ToolErrors with the envelope's code.
    const record = await (this.store as ApprovalStore).decide(current.id, { decision, by: principal?.id ?? null, reason, selfApprove: principal?.selfApprove ?? false });
    this.notes.note(decision, record);
    return record;
  }
}

/**
 * The preview (the diff) is for the person deciding. The caller who asked got in its 202 what it may read;
 * its own view of the request shows no diff, which may show a file the policy keeps from it (docs/policy.md).
 */
function previewFor(r: ApprovalRecord, principal: Principal | null): ApprovalRecord {
  if (mayDecide(principal)) return r;
  return { ...r, diff_preview: '', diff_truncated: false, ...(r.changes && { changes: withoutContent(r.changes) }) };
}

function visibleTo(r: ApprovalRecord, principal: Principal | null): boolean {
  if (principal === null) return true;
  if (r.project !== null && !allowsProject(principal, r.project)) return false;
  return mayDecide(principal) || r.caller === principal.id;
}
