// The lifecycle of a tool call: every step a call goes through, in the order it goes through them, in this one
// file (docs/development.md, "The lifecycle of a call"). A door turns its protocol into a CallerInfo and calls
// `runCall` (through the pipeline, ./execute-tool.ts); each step's own work lives where its subject does (tokens
// in ops/auth.ts, the policy in policy/, the sandbox in workspace/), and service.ts hands the steps in.
//
//   1 authentication   2 project   3 tool lookup   4 arguments   5 offered   6 risk   (test checks)
//   7 rate limit   8 policy (and approvals), which runs   9 path resolution and   10 the tool (time limit)
//   11 checkpoint record   12 envelope   13 metrics   14 audit   (test observers)
//
// A step refuses by throwing a ToolError: the steps after it up to the envelope do not run, the envelope carries
// the error, and metrics and audit still count the call. A call refused at authentication or project is audited as
// a refusal (no tool ran, so there is no tool line).
import { errorEnvelope, resultEnvelope, shortenParams, shortenText, toToolError, type Envelope, type Risk, type RiskLevel, type ToolError } from '../envelope.js';
import { E } from '../errors.js';
import type { Principal } from '../ops/auth.js';
import type { AfterHook, BeforeHook, CallGate, CallInfo, CallOutcome, ConfirmFn, RunTool } from '../tools/call.js';
import type { ToolDefinition } from '../tools/define.js';
import type { PlanHook } from '../tools/plan.js';
import { findTool, TOOLS } from '../tools/registry.js';
import { lexicalRel } from '../workspace/path-syntax.js';
import type { VersionMatch } from '../workspace/versions.js';
import { parseArguments } from './arguments.js';
import { CallRecorder, keepRecord, parseTurn } from './checkpoint-recorder.js';
import { runWithTimeout, type CallExtras } from './executor.js';

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
  /** Instead of `signal`: the door's controller, whose signal is made only when read (the MCP door's direct route; signalOf). */
  abort?: AbortController | undefined;
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

/** Proof that the pipeline authenticated a caller: only `authenticateCaller` makes one (see `PipelineAdmission`). */
export interface Admission {
  readonly principal: Principal | null;
}
export type AuthResult = { ok: true; principal: Principal | null; admission: Admission } | { ok: false; error: ToolError; headers: Record<string, string> };

/** The steps of a call that are not fixed here, named in the order they run (service.ts makes them). */
export interface CallSteps {
  /** 1. The caller's token, or none when tokens are off; a door's gate may have run it already (`admitted`). */
  authenticate(caller: CallerInfo): AuthResult | Promise<AuthResult>;
  /** 2. The workspace the call works in (single-project, or the project the caller named and may use). */
  project(caller: CallerInfo, principal: Principal | null, responseHeaders: Record<string, string>): CallInfo | Promise<CallInfo>;
  /** A call refused at 1 or 2: its envelope and its refusal line in the audit. */
  refuse(caller: CallerInfo, name: string, error: unknown, durationMs: number, headers?: Record<string, string>): ToolCallOutcome;
  /** 5. A tool this service does not offer (run_command with TOOLGATE_EXEC=off) is refused before its risk. */
  offered(call: CallInfo, tool: ToolDefinition): void;
  /** 6. The token's risk classes allow the tool's risk. */
  risk(call: CallInfo, tool: ToolDefinition): void;
  /** Checks a test adds between the risk and the rate limit. */
  checks: readonly BeforeHook[];
  /** 7. The caller's budget of tool calls; null when TOOLGATE_RATE_LIMIT is off. */
  rateLimit: BeforeHook | null;
  /** 8. The policy and approvals; null runs every call as it is. It runs the tool, and sees each of its paths as 9 resolves it. */
  policy: CallGate | null;
  /** 10. TOOLGATE_TOOL_TIMEOUT_MS, the longest a tool runs (a door may ask for less). */
  toolTimeoutMs: number;
  /** 11. A checkpoint record that could not be written: the change stands, and this says so. */
  recordFailed(err: unknown): void;
  /** 13. Counts and times the call; null when TOOLGATE_METRICS is off. */
  metrics: AfterHook | null;
  /** 14. The audit line. */
  audit: AfterHook;
  /** Observers a test adds after the audit. */
  observers: readonly AfterHook[];
}

/** One call, from the door's CallerInfo to the envelope the door sends back. */
export async function runCall(steps: CallSteps, caller: CallerInfo, name: string, rawInput: unknown): Promise<ToolCallOutcome> {
  const started = performance.now();
  // 1. Authentication.
  const auth = await steps.authenticate(caller);
  if (!auth.ok) return steps.refuse(caller, name, auth.error, performance.now() - started, auth.headers);
  // 2. Project.
  const headers: Record<string, string> = {};
  let call: CallInfo;
  try {
    // Synchronous for the single workspace: awaiting it anyway would cost every call a tick.
    const made = steps.project(caller, auth.principal, headers);
    call = made instanceof Promise ? await made : made;
  } catch (err) {
    return steps.refuse(caller, name, err, performance.now() - started);
  }
  const outcome = (await runTool(steps, call, name, rawInput, started)) as ToolCallOutcome;
  outcome.headers = headers;
  return outcome;
}

/** Steps 3 to 14 for a caller known to be authenticated and in its project. */
async function runTool(steps: CallSteps, call: CallInfo, name: string, rawInput: unknown, started: number): Promise<CallOutcome> {
  // 3. Tool lookup (by name or alias).
  const tool = findTool(name);
  const params = rawInput && typeof rawInput === 'object' && !Array.isArray(rawInput) ? (rawInput as Record<string, unknown>) : {};
  let risk: Risk = tool?.risk ?? 'read';
  let riskLevel: RiskLevel = tool?.riskLevel ?? 'low';
  let pathResolved: string | null = null;
  // The path argument as written, made lexical only when the envelope needs it (a tool that names its own path, as a
  // read does, never needs it): docs/development.md, "Work done once".
  let pathArg: string | null = null;
  const pathOf = () => (pathArg === null ? pathResolved : lexicalRel(pathArg));
  let outcome: CallOutcome;
  try {
    if (!tool) throw E.toolUnknown(shortenText(name, 100), TOOLS.map((t) => t.name).join(', '));
    // 4. Arguments: an object, the approval id and turn taken off, the rest validated by the tool's schema.
    if (rawInput === undefined || rawInput === null || typeof rawInput !== 'object' || Array.isArray(rawInput)) throw E.argumentsNotObject();
    const approvalId = params.approval_id;
    if (approvalId !== undefined && approvalId !== null && typeof approvalId !== 'string') throw E.approvalIdNotString();
    // Copied without approval_id only when it was sent: a copy of every call's arguments showed in a read's profile.
    const args = Object.hasOwn(params, 'approval_id') ? withoutApprovalId(params) : params;
    const turn = parseTurn(call.turn);
    const input = parseArguments(tool, args);
    if (typeof input.path === 'string') pathArg = input.path;
    // 5. Offered, 6. risk.
    steps.offered(call, tool);
    steps.risk(call, tool);
    for (const check of steps.checks) await check(call, tool, input);
    // 7. Rate limit. Synchronous unless its store is remote: awaiting anyway would cost a tick on every call.
    const limited = steps.rateLimit?.(call, tool, input);
    if (limited) await limited;
    // 11 is prepared here: every change is recorded under its turn, once for every tool (./checkpoint-recorder.ts).
    const recorder = tool.mutates && !tool.recordsItself ? new CallRecorder() : null;
    const extras: CallExtras = { turn, keptBackup: recorder?.kept };
    // 9 and 10: the tool under its time limit; each path it resolves is shown to the policy (onResolve), and the
    // changes it announces before its first write to the policy and the recorder (onPlan).
    const run: RunTool = (i, onResolve, onPlan) => {
      recorder?.started(i.dry_run === true);
      const plan: PlanHook | undefined = recorder
        ? async (changes) => {
            recorder.planned(changes);
            if (onPlan) await onPlan(changes);
          }
        : onPlan;
      return runWithTimeout(tool, call, i, Math.min(steps.toolTimeoutMs, call.timeoutMs ?? Infinity), onResolve, plan, extras);
    };
    // 8. Policy: it may run the tool, plan it and answer 202 (an approval request), or refuse.
    const { result, httpStatus } = steps.policy ? await steps.policy(call, tool, input, approvalId ?? undefined, run) : { result: await run(input, undefined, undefined), httpStatus: 200 };
    // 11. Checkpoint record of what the call changed.
    const record = recorder && httpStatus === 200 ? recorder.recordOf(tool, result, { turn, actor: call.actor ?? null, requestId: call.requestId }) : null;
    if (record) keepRecord(call.ws, record, steps.recordFailed);
    // 12. Envelope.
    risk = tool.risk;
    riskLevel = result.riskLevel ?? tool.riskLevel;
    if (result.pathResolved !== undefined) {
      pathResolved = result.pathResolved;
      pathArg = null;
    }
    const envelope = resultEnvelope(contextOf(call, params, pathOf(), risk, riskLevel), result);
    outcome = { envelope, httpStatus, version: result.version ?? null, tool, audit: result.audit ?? {}, durationMs: 0 };
  } catch (err) {
    // 12. Envelope, of the error any step threw.
    const where = pathOf();
    const e = toToolError(err, where);
    const envelope = errorEnvelope(contextOf(call, params, where, risk, riskLevel), e);
    outcome = { envelope, httpStatus: e.httpStatus, version: null, tool: tool ?? null, audit: {}, durationMs: 0 };
  }
  outcome.durationMs = performance.now() - started;
  outcome.envelope.stats.time_ms = Math.round(outcome.durationMs);
  // 13. Metrics, 14. audit: after every call, refused or not. An observer never changes the answer.
  const toolName = tool?.name ?? name;
  observe(steps.metrics, call, toolName, outcome);
  observe(steps.audit, call, toolName, outcome);
  for (const o of steps.observers) observe(o, call, toolName, outcome);
  return outcome;
}

function withoutApprovalId(params: Record<string, unknown>): Record<string, unknown> {
  const { approval_id: _, ...args } = params;
  return args;
}

function observe(hook: AfterHook | null, call: CallInfo, toolName: string, outcome: CallOutcome): void {
  try {
    hook?.(call, toolName, outcome);
  } catch {
    // An observer must never change the answer.
  }
}

function contextOf(call: CallInfo, params: Record<string, unknown>, pathResolved: string | null, risk: Risk, riskLevel: RiskLevel): Envelope['context'] {
  return {
    cwd: '.',
    project: call.ws.id,
    params_input: shortenParams(params),
    path_resolved: pathResolved,
    risk,
    risk_level: riskLevel,
    request_id: call.requestId,
  };
}
