// executeTool(caller, name, input): the one entry every door (REST, MCP, WebSocket, stdio) calls. It runs the
// lifecycle of a call (./lifecycle.ts: authentication, project, arguments, risk, rate limit, policy, the tool,
// envelope, metrics, audit); a door only turns its protocol into a CallerInfo and the outcome back into its
// protocol, so no door can skip a step. Authentication and the project are made here.
import { randomUUID } from 'node:crypto';
import { bareContext, errorEnvelope, toToolError, ToolError } from '../envelope.js';
import { E } from '../errors.js';
import type { AuditLog } from '../ops/audit.js';
import { allowsRisk, type Authenticator, type Principal } from '../ops/auth.js';
import type { Projects } from '../ops/projects.js';
import type { AuthFailureLimiter } from '../ops/rate-limit.js';
import type { CallInfo } from '../tools/call.js';
import { runCall, type CallSteps } from './lifecycle.js';

import type { Admission, AuthResult, CallerInfo, ToolCallOutcome } from './lifecycle.js';

export type { Admission, AuthResult, CallerInfo, ToolCallOutcome };

/**
 * The only kind of `Admission` the pipeline accepts: the class is not exported and its private field cannot be put
 * on another object, so only `authenticateCaller` makes one. A brand check, not a WeakSet: an insert per call into a
 * weak collection cost every call about 2 µs with its collection work (docs/development.md, "Work done once").
 */
class PipelineAdmission implements Admission {
  readonly #made = true;
  constructor(readonly principal: Principal | null) {
    Object.freeze(this);
  }

  static made(value: unknown): value is PipelineAdmission {
    return typeof value === 'object' && value !== null && #made in value;
  }
}

function admit(principal: Principal | null): AuthResult {
  return { ok: true, principal, admission: new PipelineAdmission(principal) };
}

/**
 * In-band confirmation is a decision by the caller itself: for a self_approve token with `approve`, or without
 * tokens only when the operator set TOOLGATE_SELF_APPROVE. A caller without a token is anyone who reaches the
 * port, so by default its gated calls answer pending for a person at the console (docs/operations.md, "Approvals without tokens").
 */
function decidesOwnCalls(principal: Principal | null, selfApproveWithoutToken: boolean): boolean {
  if (principal === null) return selfApproveWithoutToken;
  return allowsRisk(principal, 'approve') && principal.selfApprove;
}

/** What the pipeline is made of: the steps of a call after its project (./lifecycle.ts), and the operations before them. */
export interface PipelineDeps {
  /** The steps of a call after its project (./lifecycle.ts). */
  steps: Omit<CallSteps, 'authenticate' | 'project' | 'refuse'>;
  auth: Authenticator;
  projects: Projects;
  audit: AuditLog;
  authFailures: AuthFailureLimiter | null;
  /** TOOLGATE_SELF_APPROVE: without tokens, the caller may decide its own calls in band. */
  selfApproveWithoutToken?: boolean | undefined;
  /** Where a refused authentication is logged (never the token). */
  logAuthFailure?: (reason: string) => void;
}

/**
 * Authentication from plain values. A blocked address is refused before its token is hashed, a valid one too:
 * were valid tokens let through, each guess would still be answered (429 wrong, 200 right) and the limit would
 * stop nothing. Doors use it alone to refuse before reading a body or upgrading a connection.
 */
export function authenticateCaller(deps: Pick<PipelineDeps, 'auth' | 'authFailures' | 'logAuthFailure'>, authorization: string | undefined, clientIp: string): AuthResult | Promise<AuthResult> {
  if (!deps.auth.enabled) return admit(null);
  const wait = deps.authFailures?.blockedFor(clientIp) ?? 0;
  if (wait > 0) {
    return {
      ok: false,
      error: E.authBlocked(wait),
      headers: { 'retry-after': String(wait) },
    };
  }
  // Synchronous unless the token is refused: a door's gate then answers without a promise per request.
  try {
    return admit(deps.auth.authenticate(authorization));
  } catch (err) {
    return refusedAuthentication(deps, err as ToolError, clientIp);
  }
}

async function refusedAuthentication(deps: Pick<PipelineDeps, 'authFailures' | 'logAuthFailure'>, error: ToolError, clientIp: string): Promise<AuthResult> {
  deps.logAuthFailure?.(error.message);
  // Counted before the answer, so the next attempt already sees the block.
  await deps.authFailures?.fail(clientIp);
  return { ok: false, error, headers: { 'www-authenticate': 'Bearer realm="toolgate"' } };
}

export interface Pipeline {
  executeTool(caller: CallerInfo, name: string, input: unknown): Promise<ToolCallOutcome>;
  /** Authentication and project resolution alone, for routes that are not tool calls; throws the ToolError. */
  resolveCaller(caller: CallerInfo): Promise<CallInfo>;
  /** Authentication alone, for a door's gate (REST /v1 routes, the /mcp request, the WebSocket upgrade); synchronous when it admits. */
  authenticate(authorization: string | undefined, clientIp: string): AuthResult | Promise<AuthResult>;
  /** A tool call the door refused before executeTool (no token at its gate, a body that did not parse): the envelope and its audit line. */
  refuse(caller: CallerInfo, name: string, error: ToolError, durationMs: number, headers?: Record<string, string>): ToolCallOutcome;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { projects, audit } = deps;

  function refuse(caller: CallerInfo, name: string, err: unknown, durationMs: number, headers: Record<string, string> = {}): ToolCallOutcome {
    const error = toToolError(err, null);
    const requestId = caller.requestId ?? randomUUID();
    audit.recordRefusal({ requestId, clientIp: caller.clientIp, tool: name, code: error.code, httpStatus: error.httpStatus, durationMs }, projects.single?.stateDir ?? null);
    return { envelope: errorEnvelope(bareContext(requestId), error), httpStatus: error.httpStatus, version: null, tool: null, audit: {}, durationMs, headers };
  }

  function callInfo(caller: CallerInfo, principal: Principal | null, ws: CallInfo['ws'], headers: Record<string, string>): CallInfo {
    return {
      ws,
      requestId: caller.requestId ?? randomUUID(),
      actor: principal?.id ?? null,
      clientIp: caller.clientIp,
      workspaceFor: projects.multi ? (other: string) => projects.project(other, principal) : undefined,
      expectedVersion: caller.expectedVersion,
      switches: caller.switches,
      waitS: caller.waitS,
      signal: caller.signal,
      abort: caller.abort,
      timeoutMs: caller.timeoutMs,
      confirm: caller.confirm && decidesOwnCalls(principal, deps.selfApproveWithoutToken ?? false) ? caller.confirm : undefined,
      progress: caller.progress,
      turn: caller.turn,
      responseHeaders: headers,
    };
  }

  /** The gate's admission as it is (the gate made it), or authentication now. */
  function authenticated(caller: CallerInfo): AuthResult | Promise<AuthResult> {
    const admitted = caller.admitted;
    if (PipelineAdmission.made(admitted)) return { ok: true, principal: admitted.principal, admission: admitted };
    return authenticateCaller(deps, caller.authorization, caller.clientIp);
  }

  /** Step 2: the single workspace is known without a lookup; only a project needs one (and maybe an await). */
  function project(caller: CallerInfo, principal: Principal | null, headers: Record<string, string>): CallInfo | Promise<CallInfo> {
    if (projects.single && caller.projectId === undefined) return callInfo(caller, principal, projects.single, headers);
    return projects.workspaceFor(caller.projectId, principal).then((ws) => callInfo(caller, principal, ws, headers));
  }

  const steps: CallSteps = { ...deps.steps, authenticate: authenticated, project, refuse };

  /** The caller authenticated and resolved to its workspace, for a door's routes that are not tool calls (attachments). */
  async function resolveCaller(caller: CallerInfo): Promise<CallInfo> {
    const auth = await authenticated(caller);
    if (!auth.ok) throw auth.error;
    return callInfo(caller, auth.principal, await projects.workspaceFor(caller.projectId, auth.principal), {});
  }

  return {
    executeTool: (caller, name, input) => runCall(steps, caller, name, input),
    resolveCaller,
    authenticate: (authorization, clientIp) => authenticateCaller(deps, authorization, clientIp),
    refuse,
  };
}
