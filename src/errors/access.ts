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
    new ApprovalError('CONFLICT', `What was approved under ${id} changed since (the file, or for a command the project it runs on); read it again and ask for a new approval.`, {
      approval_id: id,
      approved,
      current,
    }),
  tokenMissing: () => new ToolError('UNAUTHORIZED', 'Missing bearer token: send `Authorization: Bearer <token>`.'),
  tokenInvalid: () => new ToolError('UNAUTHORIZED', 'Invalid bearer token; check the token or ask the operator for one.'),
  riskNotAllowed: (tokenId: string | undefined, risk: string, toolName: string) =>
    new ToolError('ACCESS_DENIED', `Token '${tokenId ?? ''}' may not run ${risk} tools such as '${toolName}'; ask the operator for a token with the '${risk}' risk class.`),
  hostNotServed: (shown: string, host: string | undefined) =>
    new ToolError('ACCESS_DENIED', `This service does not answer to the host name ${shown}: a page on another site may have rebound its DNS name to this address. Reach it by a name it answers to (loopback, or one listed in TOOLGATE_ALLOWED_HOSTS).`, { host: host?.slice(0, 100) ?? null }),
  originRefused: (origin: string) =>
    new ToolError('ACCESS_DENIED', `Requests from the web page at '${origin.slice(0, 100)}' are refused: only this service's own pages, or origins listed in TOOLGATE_ALLOWED_ORIGINS, may call it from a browser.`, { origin: origin.slice(0, 100) }),
  projectsOff: (shown: string) =>
    new ToolError('NOT_FOUND', `Unknown project '${shown}': this service serves one workspace (multi-project mode is off); call /v1/tools/{tool} without a project.`),
  projectMissing: () =>
    new ToolError('INVALID_PARAM', 'Name the project: send the X-Project-Id header or call /v1/projects/{projectId}/tools/{tool}.'),
  projectIdInvalid: (shown: string) =>
    new ToolError('INVALID_PARAM', `Invalid project id '${shown}': use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.`),
  projectNotAllowed: (tokenId: string | undefined, projectId: string) =>
    new ToolError('ACCESS_DENIED', `Token '${tokenId ?? ''}' may not use project '${projectId}'.`),
  crossProjectOff: () => new ToolError('ACCESS_DENIED', 'Cross-project paths ([projectId]/path) need multi-project mode.'),
  projectUnknown: (projectId: string) => new ToolError('NOT_FOUND', `Unknown project '${projectId}'.`),
  rateStoreDown: () =>
    new ToolError('RATE_LIMITED', 'The rate-limit store is unavailable, so calls are refused for now (TOOLGATE_REDIS_FAILURE_MODE=closed); retry in a few seconds.'),
  rateLimited: (max: number, window: string, after: number, windowMs: number) =>
    new ToolError('RATE_LIMITED', `Rate limit of ${max} tool calls per ${window} reached; retry in ${after} s.`, { limit: max, window_ms: windowMs, retry_after_s: after }),
  /** `message` is the rule's own when it has one; `rule` its name or index, `switchName` the switch it applied through. */
  policyDenied: (message: string | undefined, rule: string | number | undefined, switchName: string | undefined) =>
    new ToolError('ACCESS_DENIED', message ?? 'The policy denies this call.', {
      ...(rule !== undefined && { rule }),
      ...(switchName !== undefined && { switch: switchName }),
    }),
  switchUnknown: (shown: string, declared: string[]) =>
    new ToolError('INVALID_PARAM', `Unknown switch '${shown}' in X-Toolgate-Switches; ${declared.length > 0 ? `this policy declares: ${declared.join(', ')}` : 'no switches are declared'}.`, { switch: shown }),
  switchTwice: (name: string) =>
    new ToolError('INVALID_PARAM', `Switch '${name}' is given twice in X-Toolgate-Switches; give it once.`, { switch: name }),
  switchNoValue: (name: string) => new ToolError('INVALID_PARAM', `Switch '${name}' needs a value: ${name}=on or ${name}=off.`, { switch: name }),
  approvalsLoopbackOnly: () => new ToolError('ACCESS_DENIED', 'Without tokens only a loopback caller may see or decide approval requests.'),
  approvalRequestNotFound: () => new ToolError('NOT_FOUND', 'No such approval request (ids look like apr_…).'),
  approvalBodyInvalid: () => new ToolError('INVALID_PARAM', 'The body is { "reason": "…" } (optional, at most 2000 characters).'),
  /** `bound` says why the moved directory could not be walked whole. */
  moveTooWideForPolicy: (srcRel: string, bound: string, dstRel: string) =>
    new ToolError('ACCESS_DENIED', `'${srcRel}' ${bound}, so the policy cannot check every path it would create under '${dstRel}', where rules apply; move it in smaller parts.`, {
      path: dstRel,
    }),
  moveReceivedAsk: (rel: string) =>
    new ToolError('CONFLICT', `'${rel}' received a path the policy asks about while it was being moved; the move was undone. Call again to ask for it.`, { path: rel }),
  /** `approvedBrief` and `nowBrief` describe the changes in a line; `approved` and `now` name them. */
  approvedChangesDiffer: (approvalId: string, approvedBrief: string, nowBrief: string, approved: unknown[], now: unknown[]) =>
    new ToolError(
      'CONFLICT',
      `This call would now change something other than what was approved under ${approvalId} (approved: ${approvedBrief}; now: ${nowBrief}, or a file's content differs); nothing was changed. Call again without approval_id to ask for this change.`,
      { approval_id: approvalId, mismatch: 'changes', approved, now },
    ),
  /**
   * The approved call cannot apply: files it changes are no longer as the person saw them. `moved` names them
   * ("b.txt (gone)"); `files` holds each with its approved and current sha256 (null: absent). `kept`: the
   * approval stands for a later repeat.
   */
  approvedFilesMovedOn: (approvalId: string, moved: string, files: unknown[], kept: boolean) =>
    new ToolError(
      'CONFLICT',
      `Files of the call approved under ${approvalId} changed since the approval: ${moved}; nothing was changed. ${kept ? 'The approval stands until it expires: repeat the call with approval_id once the files are as they were, or call again without approval_id to ask for the change as they are now.' : 'Call again without approval_id to ask for the change as they are now.'}`,
      { approval_id: approvalId, mismatch: 'files', files, approval_kept: kept },
    ),
  approvalRequestGone: () => new ToolError('NOT_FOUND', 'No such approval request; it may have been swept after it expired.'),
  approvalDecideDenied: (tokenId: string) =>
    new ToolError('ACCESS_DENIED', `Token '${tokenId}' may not decide approval requests; ask the operator for a token with the 'approve' risk class.`),
};
