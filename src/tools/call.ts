// What a call to a tool is, as the pipeline (src/pipeline/) hands it to the operations around it: who calls
// and where (CallInfo), what came of it (CallOutcome), and the hooks and gate the executor runs it through.
// Types (and the accessor of a call's signal), below ops/ and pipeline/, so audit, metrics and rate limit need
// nothing from the layer above.
import type { Envelope, Risk, RiskLevel, VersionStamp } from '../envelope.js';
import type { ResolvedPath, ResolveOptions } from '../workspace/sandbox.js';
import type { VersionMatch } from '../workspace/versions.js';
import type { Workspace } from '../workspace/workspace.js';
import type { ProgressFn, ToolDefinition, ToolResult } from './define.js';
import type { ChangeEntry, PlanHook } from './plan.js';

/** Who is calling and where, once authenticated and resolved to a workspace (built by the pipeline). */
export interface CallInfo {
  ws: Workspace;
  requestId: string;
  /** An out-of-band version (REST If-Match), parsed at the door. */
  expectedVersion?: VersionMatch | undefined;
  /** Authenticated caller (token id), or null without auth. */
  actor?: string | null;
  /** Client address, for rate limits and the audit log. */
  clientIp?: string | undefined;
  /** Workspace of another project for `[otherId]/path`; throws ACCESS_DENIED when not allowed. */
  workspaceFor?: ((projectId: string) => Promise<Workspace>) | undefined;
  /** Aborted when the client goes away. */
  signal?: AbortSignal | undefined;
  /** Instead of `signal`: the door's controller, whose signal Node makes when first read (see signalOf). */
  abort?: AbortController | undefined;
  /** A shorter time limit the caller asked for (WebSocket timeout_seconds); never longer than TOOLGATE_TOOL_TIMEOUT_MS. */
  timeoutMs?: number | undefined;
  /** Headers the hooks want on the door's response (rate-limit budget); doors without headers ignore them. */
  responseHeaders?: Record<string, string> | undefined;
  /** Policy switches as the caller sent them (REST `X-Toolgate-Switches`). */
  switches?: string | readonly string[] | undefined;
  /** Seconds the caller will wait for a person's decision (REST `Prefer: wait=N`). */
  waitS?: number | undefined;
  /**
   * Asks the person at the caller's side to decide a call that needs approval, in band (MCP elicitation, the
   * WebSocket confirmation_request). Set by the pipeline only for a token that may decide its own requests.
   */
  confirm?: ConfirmFn | undefined;
  /** Output of a running command as it comes (run_command), for doors that stream it. */
  progress?: ProgressFn | undefined;
  /** The agent turn as the door received it (REST `Toolgate-Turn`, WebSocket `turn`, MCP `_meta["toolgate/turn"]`); the executor validates it. */
  turn?: unknown;
}

/**
 * The call's signal, aborted when the client goes away: the door's own, or its controller's, which Node makes only
 * when it is first read; a quick call never reads it (docs/development.md, "Work done once").
 */
export function signalOf(call: Pick<CallInfo, 'signal' | 'abort'>): AbortSignal | undefined {
  return call.signal ?? call.abort?.signal;
}

/** An approval request as a door shows it to the person deciding (the `approval` of the 202 answer). */
export interface ConfirmRequest {
  id: string;
  tool: string;
  path: string | null;
  risk: Risk;
  risk_level: RiskLevel;
  summary: string;
  diff_preview: string;
  diff_truncated: boolean;
  /** Every path the call changes, with its operation, diff and (for a delete) the content that goes. */
  changes: ChangeEntry[];
  expires_at: string;
}
/** The person's decision, or null when none came (no capability, dismissed, connection gone): the call stays pending. */
export type ConfirmFn = (request: ConfirmRequest, signal: AbortSignal | undefined) => Promise<{ approve: boolean; reason?: string | null } | null>;

export interface CallOutcome {
  envelope: Envelope;
  httpStatus: number;
  /** Version of the file after the call (REST ETag). */
  version: VersionStamp | null;
  tool: ToolDefinition | null;
  /** The tool's audit facts (hashes, bytes). */
  audit: NonNullable<ToolResult<unknown>['audit']>;
  durationMs: number;
}

/**
 * A check of a validated call before the policy runs it (the rate limit, a test's checks; src/pipeline/lifecycle.ts).
 * Throw a ToolError to refuse.
 */
export type BeforeHook = (call: CallInfo, tool: ToolDefinition, input: Record<string, unknown>) => Promise<void> | void;
/** Sees every call after its envelope, refused or not: metrics, the audit, a test's observers (src/pipeline/lifecycle.ts). */
export type AfterHook = (call: CallInfo, toolName: string, outcome: CallOutcome) => void;

/** Told of every path a tool resolves, before the tool uses it (the policy); throw to stop the call. */
export type ResolveHook = (p: ResolvedPath, opts: ResolveOptions | undefined) => Promise<void> | void;
/**
 * Runs the tool (with `input`, e.g. as a dry run), each resolved path shown to `onResolve`, and what it is about
 * to change to `onPlan` (src/tools/plan.ts). Both hooks are required arguments (undefined when unused): a
 * wrapper that dropped the plan hook would run a tool without a dry run for real where the gate meant to plan it.
 */
export type RunTool = (input: Record<string, unknown>, onResolve: ResolveHook | undefined, onPlan: PlanHook | undefined) => Promise<ToolResult<unknown>>;
/**
 * Wraps the run of a validated call (the policy and approvals: src/pipeline/policy-gate.ts, src/policy/approval-flow.ts): it may run the tool, run it
 * as a dry run and answer with a pending approval (HTTP 202), or refuse. `approvalId` was taken off the body.
 */
export type CallGate = (call: CallInfo, tool: ToolDefinition, input: Record<string, unknown>, approvalId: string | undefined, runTool: RunTool) => Promise<GatedResult>;
export interface GatedResult {
  result: ToolResult<unknown>;
  httpStatus: number;
}
