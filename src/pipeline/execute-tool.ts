// executeTool(caller, name, input): the one entry every door (REST, MCP, WebSocket, stdio) calls. It owns
// authentication, project resolution, then the executor's hooks (risk, policy, rate limit) around the
// tool, and audit and metrics after it; a door only turns its protocol into a CallerInfo and the outcome
// back into its protocol, so no door can skip one of them.
import { randomUUID } from 'node:crypto';
import { bareContext, errorEnvelope, toToolError, ToolError } from '../envelope.js';
import { E } from '../errors.js';
import type { AuditLog } from '../ops/audit.js';
import { allowsRisk, type Authenticator, type Principal } from '../ops/auth.js';
import type { Projects } from '../ops/projects.js';
import type { AuthFailureLimiter } from '../ops/rate-limit.js';
import type { CallInfo, CallOutcome, ConfirmFn } from '../tools/call.js';
import type { Executor } from './executor.js';
import type { VersionMatch } from '../workspace/versions.js';

/** What a door knows about a call, as plain values: no framework request travels past the door. */
export interface CallerInfo {
  /** The credentials as received: an `Authorization` value (`Bearer <token>`), or undefined for none. */
  authorization: string | undefined;
  /**
   * The result of this pipeline's `authenticate` when the door's gate already ran it (REST checks the token
   * before reading the body), so the token is not hashed and counted twice. Only the pipeline makes one.
   */
  admitted?: Admission | undefined;
  /** Client address, for the failed-authentication limit, the rate limit and the audit line. */
  clientIp: string;
  /** The project asked for (URL, X-Project-Id, a tool-call field); undefined in single-project mode. */
  projectId?: string | undefined;
  /** An out-of-band version (REST If-Match), parsed at the door. */
  expectedVersion?: VersionMatch | undefined;
  /** Per-call policy switches as received (`X-Toolgate-Switches: memory=on`), for the policy. */
  switches?: string | readonly string[] | undefined;
  /** Seconds the caller will wait for a person's decision on a call that needs approval (REST `Prefer: wait=N`). */
  waitS?: number | undefined;
  /** The door's request or call id; a fresh one when absent. */
  requestId?: string | undefined;
  /** Aborted when the client goes away. */
  signal?: AbortSignal | undefined;
  /** The door can ask its person in band (MCP elicitation, WebSocket confirmation); used only for a token that may decide its own calls. */
  confirm?: ConfirmFn | undefined;
  /** A shorter time limit for this call (WebSocket `timeout_seconds`). */
  timeoutMs?: number | undefined;
  /** Streams a running command's output (WebSocket tool_progress, MCP progress notifications). */
  progress?: CallInfo['progress'];
  /** The agent turn the call belongs to, as received (validated by the executor). */
  turn?: unknown;
}

export interface ToolCallOutcome extends CallOutcome {
  /** Headers for doors that have them (Retry-After, x-ratelimit-*, WWW-Authenticate). */
  headers: Record<string, string>;
}

/** Proof that the pipeline authenticated a caller: only `authenticateCaller` makes one (see `admissions`). */
export interface Admission {
  readonly principal: Principal | null;
}
const admissions = new WeakSet<Admission>();

export type AuthResult = { ok: true; principal: Principal | null; admission: Admission } | { ok: false; error: ToolError; headers: Record<string, string> };

function admit(principal: Principal | null): AuthResult {
  const admission: Admission = Object.freeze({ principal });
  admissions.add(admission);
  return { ok: true, principal, admission };
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

export interface PipelineDeps {
  auth: Authenticator;
  projects: Projects;
  audit: AuditLog;
  authFailures: AuthFailureLimiter | null;
  executor: Executor;
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
  const { projects, audit, executor } = deps;

  function refuse(caller: CallerInfo, name: string, error: ToolError, durationMs: number, headers: Record<string, string> = {}): ToolCallOutcome {
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
    if (admitted && admissions.has(admitted)) return { ok: true, principal: admitted.principal, admission: admitted };
    return authenticateCaller(deps, caller.authorization, caller.clientIp);
  }

  async function executeTool(caller: CallerInfo, name: string, input: unknown): Promise<ToolCallOutcome> {
    const started = performance.now();
    const auth = await authenticated(caller);
    if (!auth.ok) return refuse(caller, name, auth.error, performance.now() - started, auth.headers);
    const headers: Record<string, string> = {};
    let call: CallInfo;
    try {
      // The single workspace is known without a lookup; only a project needs one (and maybe an await).
      const ws = projects.single && caller.projectId === undefined ? projects.single : await projects.workspaceFor(caller.projectId, auth.principal);
      call = callInfo(caller, auth.principal, ws, headers);
    } catch (err) {
      return refuse(caller, name, toToolError(err, null), performance.now() - started);
    }
    // The executor runs the before-hooks (risk, rate limit), the policy gate, the tool, then audit and metrics.
    const outcome = (await executor.execute(call, name, input)) as ToolCallOutcome;
    outcome.headers = headers;
    return outcome;
  }

  /** The caller authenticated and resolved to its workspace, for a door's routes that are not tool calls (attachments). */
  async function resolveCaller(caller: CallerInfo): Promise<CallInfo> {
    const auth = await authenticated(caller);
    if (!auth.ok) throw auth.error;
    return callInfo(caller, auth.principal, await projects.workspaceFor(caller.projectId, auth.principal), {});
  }

  return {
    executeTool,
    resolveCaller,
    authenticate: (authorization, clientIp) => authenticateCaller(deps, authorization, clientIp),
    refuse,
  };
}
