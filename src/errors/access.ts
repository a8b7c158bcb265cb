// The catalogue's errors of access: tokens, projects, the policy, approvals and rate limits (src/errors.ts says how to add one).
import { ToolError, type ErrorCode } from './tool-error.js';

/** The codes the approval flow answers with (src/policy/approvals.ts); their statuses are ERROR_STATUS's. */
export type ApprovalErrorCode = Extract<ErrorCode, 'INVALID_PARAM' | 'ACCESS_DENIED' | 'USER_REJECTED' | 'NOT_FOUND' | 'CONFLICT' | 'APPROVAL_EXPIRED'>;

/** An error of the approval store: a ToolError the policy gate tells apart from the others it meets. */
export class ApprovalError extends ToolError {
  declare readonly code: ApprovalErrorCode;
  constructor(code: ApprovalErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, details);
    this.name = 'ApprovalError';
  }
}

export const accessErrors = {
  approvalArgsTooDeep: (maxDepth: number) => new ApprovalError('INVALID_PARAM', `Arguments are nested deeper than ${maxDepth} levels.`),
  approvalArgsNotFinite: () => new ApprovalError('INVALID_PARAM', 'Arguments hold a number that JSON cannot express.'),
  approvalArgsNotJson: (type: string) => new ApprovalError('INVALID_PARAM', `Arguments hold a ${type}, which is not JSON.`),
  approvalExpired: (id: string, why: string) =>
    new ApprovalError('APPROVAL_EXPIRED', `Approval ${id} ${why}; repeat the call without approval_id to ask again.`, { approval_id: id }),
  approvalTampered: (id: string) =>
    new ApprovalError('INVALID_PARAM', `Approval ${id} failed its integrity check (it was altered outside toolgate); repeat the call without approval_id to ask again.`, {
      approval_id: id,
    }),
  /** `shown` is the id, or 'with that id' when it is not one. */
  approvalNotFound: (shown: string) => new ApprovalError('NOT_FOUND', `No approval request ${shown}; it may have been swept after it expired.`),
  approvalAlreadyDecided: (id: string, status: string) =>
    new ApprovalError('CONFLICT', `Approval ${id} was already decided (${status}).`, { status }),
  /** Another process decided between the read and the compare-and-set; `status` is null when the record is gone. */
  approvalDecidedMeanwhile: (id: string, status: string | null) =>
    new ApprovalError('CONFLICT', `Approval ${id} was already decided${status ? ` (${status})` : ''}.`, { status }),
  approvalSelfDecision: () => new ApprovalError('ACCESS_DENIED', `A token cannot decide its own request unless it is marked self_approve.`),
  approvalIdInvalid: () => new ApprovalError('INVALID_PARAM', 'approval_id is not an approval id (apr_…).'),
  approvalArgumentsDiffer: (id: string) =>
    new ApprovalError('INVALID_PARAM', `The arguments differ from those approved under ${id}; repeat the approved call exactly, or call again without approval_id.`, {
      approval_id: id,
      mismatch: 'arguments',
    }),
  /** `mismatch` is what differs from the request: caller, project or tool. */
  approvalNotForThis: (id: string, mismatch: string) =>
    new ApprovalError('INVALID_PARAM', `Approval ${id} was not asked for this ${mismatch}; call again without approval_id.`, { approval_id: id, mismatch }),
  userRejected: (id: string, reason: string | null) =>
    new ApprovalError('USER_REJECTED', `The user rejected this change.${reason ? ` Reason: ${reason}` : ''}`, { approval_id: id, reason }),
  approvedFileChanged: (id: string, approved: unknown, current: unknown) =>
    new ApprovalError('CONFLICT', `The file changed since the change was approved under ${id}; read it again and ask for a new approval.`, {
      approval_id: id,
      approved,
      current,
    }),
};
