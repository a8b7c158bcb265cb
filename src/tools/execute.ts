// The tool-execution core under the pipeline (src/pipeline/execute-tool.ts, which every door calls): look
// up, normalize aliases, validate, run with a time limit, and wrap the result (or the error) in the
// envelope. Risk, policy and rate limit plug in as before-hooks, audit and metrics as after-hooks.
import { z } from 'zod';
import { errorEnvelope, resultEnvelope, shortenParams, shortenText, toToolError, ToolError, type Envelope, type Risk, type RiskLevel, type VersionStamp } from '../envelope.js';
import { asLocalToolPath } from '../workspace/path-syntax.js';
import { HandleScope, resolveInWorkspace, type ResolvedPath, type ResolveOptions } from '../workspace/sandbox.js';
import type { VersionMatch } from '../workspace/versions.js';
import type { Workspace } from '../workspace/workspace.js';
import type { ProgressFn, ToolContext, ToolDefinition, ToolResult } from './define.js';
import type { ChangeEntry, PlanHook } from './plan.js';
import { findTool, TOOLS } from './registry.js';

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
 * Runs before the tool (after validation): risk class, policy, rate limit. Throw a ToolError to refuse. The
 * policy hook goes here; it resolves the input's paths with `resolveToolPath` to match rules on real paths.
 */
export type BeforeHook = (call: CallInfo, tool: ToolDefinition, input: Record<string, unknown>) => Promise<void> | void;
/** Runs after every call, refused or not: audit, metrics. */
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
 * Wraps the run of a validated call (the policy and approvals, src/ops/policy.ts): it may run the tool, run it
 * as a dry run and answer with a pending approval (HTTP 202), or refuse. `approvalId` was taken off the body.
 */
export type CallGate = (call: CallInfo, tool: ToolDefinition, input: Record<string, unknown>, approvalId: string | undefined, runTool: RunTool) => Promise<GatedResult>;
export interface GatedResult {
  result: ToolResult<unknown>;
  httpStatus: number;
}

export interface ExecutorOptions {
  toolTimeoutMs: number;
  before?: BeforeHook[];
  after?: AfterHook[];
  gate?: CallGate | undefined;
}

const CROSS_PROJECT = /^\[([^\]]*)\]\/(.*)$/s;

export function applyParamAliases(input: Record<string, unknown>, aliases: Readonly<Record<string, string>> | undefined): Record<string, unknown> {
  if (!aliases || !usesAlias(input, aliases)) return input;
  const rename = (obj: Record<string, unknown>) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) {
      const canonical = aliases[k];
      if (canonical !== undefined && !(canonical in obj)) out[canonical] = v;
      else out[k] = v;
    }
    return out;
  };
  const top = rename(input);
  for (const [k, v] of Object.entries(top)) {
    if (Array.isArray(v)) top[k] = v.map((item: unknown) => (item && typeof item === 'object' && !Array.isArray(item) ? rename(item as Record<string, unknown>) : item));
  }
  return top;
}

/** Whether an alias names a parameter at the top or one level down in an array (the places applyParamAliases renames). */
function usesAlias(input: Record<string, unknown>, aliases: Readonly<Record<string, string>>): boolean {
  for (const k in input) {
    if (Object.hasOwn(aliases, k)) return true;
    const v = input[k];
    if (Array.isArray(v)) {
      for (const item of v) {
        if (item && typeof item === 'object' && !Array.isArray(item)) for (const ik in item as object) if (Object.hasOwn(aliases, ik)) return true;
      }
    }
  }
  return false;
}

/** "the string \"x\"", "null", "an array": what came, for a wrong-type message. */
function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(shortenText(v, 40))}`;
  if (typeof v === 'object') return 'an object';
  return `the ${typeof v} ${String(v)}`;
}

function describeZodError(err: z.ZodError, tool: ToolDefinition, params: Record<string, unknown>): string {
  const issue = err.issues[0];
  if (!issue) return 'Invalid parameters.';
  const accepted = Object.keys(tool.input.shape).join(', ');
  const where = issue.path.length > 0 ? `'${issue.path.join('.')}'` : 'input';
  // Messages name the accepted parameters inline: a model cannot look them up with GET /v1/tools.
  if (issue.code === 'unrecognized_keys') return `Unknown parameter(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}; ${tool.name} accepts: ${accepted}.`;
  if (issue.code === 'invalid_type') {
    let given: unknown = params;
    for (const key of issue.path) given = given && typeof given === 'object' ? (given as Record<PropertyKey, unknown>)[key] : undefined;
    if (given === undefined) return `Missing required parameter ${where}; ${tool.name} accepts: ${accepted}.`;
    // zod says `number` for z.number().int(): an integer field is one that takes 1 but not 1.5.
    const field = issue.path.length === 1 ? (tool.input.shape as Record<string, z.ZodType>)[String(issue.path[0])] : undefined;
    const integer = issue.expected === 'int' || (issue.expected === 'number' && field !== undefined && field.safeParse(1).success && !field.safeParse(1.5).success);
    return `${where} must be ${integer ? 'an integer' : `a ${issue.expected}`}, got ${describeValue(given)}.`;
  }
  return `Invalid parameter ${where}: ${issue.message}.`;
}

const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

/**
 * Arguments as models send them, tried only when the strict parse failed: `null` for an optional argument
 * means "not given" (strict function calling sends every property), and a number sent as a numeric string
 * ("3") counts as the number where the schema wants one.
 */
function lenientArguments(tool: ToolDefinition, params: Record<string, unknown>, issues: readonly z.core.$ZodIssue[]): Record<string, unknown> | null {
  const shape = tool.input.shape as Record<string, z.ZodType>;
  let changed = false;
  // The caller's arguments stay as received (params_input): containers on the way to a changed value are
  // copied, never the whole input (a deep copy of hostile input nested 100,000 deep would overflow the stack).
  const out: Record<string, unknown> = { ...params };
  for (const [key, value] of Object.entries(params)) {
    const field = shape[key];
    if (!field) continue;
    if (value === null && !field.safeParse(null).success && field.safeParse(undefined).success) {
      delete out[key];
      changed = true;
    } else if (typeof value === 'string' && NUMERIC.test(value) && !field.safeParse(value).success && field.safeParse(Number(value)).success) {
      out[key] = Number(value);
      changed = true;
    }
  }
  // Strict mode makes nested optional properties required and nullable too (edit_file's
  // edits[].replace_all): a null the schema refused inside an object is dropped as "not given"; one that
  // was required then fails as missing.
  for (const issue of issues) {
    if (issue.path.length < 2) continue;
    const parent = copyAlong(out, issue.path.slice(0, -1));
    const last = issue.path[issue.path.length - 1] as PropertyKey;
    if (parent && !Array.isArray(parent) && parent[last] === null) {
      delete parent[last];
      changed = true;
    }
  }
  return changed ? out : null;
}

/** The container at `path` in `root`, each object or array on the way replaced by a shallow copy; null when absent. */
function copyAlong(root: Record<string, unknown>, path: readonly PropertyKey[]): Record<PropertyKey, unknown> | null {
  let node: Record<PropertyKey, unknown> = root;
  for (const key of path) {
    const child = node[key];
    if (!child || typeof child !== 'object') return null;
    const copy = (Array.isArray(child) ? [...(child as unknown[])] : { ...(child as object) }) as Record<PropertyKey, unknown>;
    node[key] = copy;
    node = copy;
  }
  return node;
}

export function createExecutor(opts: ExecutorOptions) {
  const before = opts.before ?? [];
  const after = opts.after ?? [];

  async function execute(call: CallInfo, name: string, rawInput: unknown): Promise<CallOutcome> {
    const started = performance.now();
    const tool = findTool(name);
    const params = rawInput && typeof rawInput === 'object' && !Array.isArray(rawInput) ? (rawInput as Record<string, unknown>) : {};
    let risk: Risk = tool?.risk ?? 'read';
    let riskLevel: RiskLevel = tool?.riskLevel ?? 'low';
    let pathResolved: string | null = null;
    let outcome: CallOutcome;
    try {
      if (!tool) throw new ToolError('NOT_FOUND', `Unknown tool '${shortenText(name, 100)}'; the tools are: ${TOOLS.map((t) => t.name).join(', ')}.`);
      if (rawInput === undefined || rawInput === null || typeof rawInput !== 'object' || Array.isArray(rawInput)) {
        throw new ToolError('INVALID_PARAM', 'The request body must be a JSON object of tool arguments.');
      }
      const { approval_id: approvalId, ...args } = params;
      if (approvalId !== undefined && approvalId !== null && typeof approvalId !== 'string') throw new ToolError('INVALID_PARAM', "Invalid parameter 'approval_id': expected the id of an approval request (apr_…).");
      const aliased = applyParamAliases(args, tool.paramAliases);
      let parsed = tool.input.safeParse(aliased);
      if (!parsed.success) {
        const lenient = lenientArguments(tool, aliased, parsed.error.issues);
        if (lenient) parsed = tool.input.safeParse(lenient);
      }
      if (!parsed.success) throw new ToolError('INVALID_PARAM', describeZodError(parsed.error, tool, aliased), { issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) });
      const input = parsed.data as Record<string, unknown>;
      if (typeof input.path === 'string') pathResolved = safeRel(input.path);
      for (const hook of before) {
        // Most hooks answer synchronously; awaiting them anyway cost a tick each on every call.
        const pending = hook(call, tool, input);
        if (pending) await pending;
      }
      const runTool: RunTool = (i, onResolve, onPlan) => runWithTimeout(tool, call, i, Math.min(opts.toolTimeoutMs, call.timeoutMs ?? Infinity), onResolve, onPlan);
      const { result, httpStatus } = opts.gate ? await opts.gate(call, tool, input, approvalId ?? undefined, runTool) : { result: await runTool(input, undefined, undefined), httpStatus: 200 };
      risk = tool.risk;
      riskLevel = result.riskLevel ?? tool.riskLevel;
      if (result.pathResolved !== undefined) pathResolved = result.pathResolved;
      const envelope = resultEnvelope(contextOf(call, params, pathResolved, risk, riskLevel), result);
      outcome = { envelope, httpStatus, version: result.version ?? null, tool, audit: result.audit ?? {}, durationMs: 0 };
    } catch (err) {
      const e = toToolError(err, pathResolved);
      const envelope = errorEnvelope(contextOf(call, params, pathResolved, risk, riskLevel), e);
      outcome = { envelope, httpStatus: e.httpStatus, version: null, tool: tool ?? null, audit: {}, durationMs: 0 };
    }
    outcome.durationMs = performance.now() - started;
    outcome.envelope.stats.time_ms = Math.round(outcome.durationMs);
    for (const hook of after) {
      try {
        hook(call, tool?.name ?? name, outcome);
      } catch {
        // An observer must never change the answer.
      }
    }
    return outcome;
  }

  return { execute };
}

export type Executor = ReturnType<typeof createExecutor>;

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

/** A lexical relative form of the caller's path for the context, never an absolute host path. */
function safeRel(input: string): string | null {
  if (input.includes('\0') || input.startsWith('/') || input.includes('\\')) return null;
  const n: string[] = [];
  for (const seg of input.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg !== '..') n.push(seg);
    else if (n.pop() === undefined) return null; // leads outside: nothing to name
  }
  return n.length === 0 ? '.' : n.join('/');
}

export async function runWithTimeout(tool: ToolDefinition, call: CallInfo, input: Record<string, unknown>, timeoutMs: number, onResolve?: ResolveHook, onPlan?: PlanHook): Promise<ToolResult<unknown>> {
  // The tool's signal is made when the tool first asks for it: most calls (a small read) never do, and an
  // AbortController per call shows in a small read's profile. Aborts that come before are remembered.
  let controller: AbortController | null = null;
  let reason: ToolError | null = null;
  const abort = (why: ToolError) => {
    if (reason) return;
    reason = why;
    controller?.abort(why);
  };
  const gone = () => abort(new ToolError('EXECUTION_ERROR', `The client went away; tool '${tool.name}' was stopped.`));
  if (call.signal?.aborted) gone();
  call.signal?.addEventListener('abort', gone, { once: true });
  const scope = new HandleScope();
  const ctx: ToolContext = {
    ws: call.ws,
    requestId: call.requestId,
    caller: { actor: call.actor ?? null, clientIp: call.clientIp },
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (reason) controller.abort(reason);
      }
      return controller.signal;
    },
    expectedVersion: call.expectedVersion,
    progress: call.progress,
    handles: scope,
    resolve: onResolve
      ? async (p: string, o?: ResolveOptions) => {
          const resolved = await resolveToolPath(call, p, o, scope);
          await onResolve(resolved, o);
          return resolved;
        }
      : (p: string, o?: ResolveOptions) => resolveToolPath(call, p, o, scope),
    admit: async (p: ResolvedPath) => onResolve?.(p, undefined),
    planned: onPlan,
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Made only when it fires: an Error captures its stack, which cost a small read 10% of its time.
      const timedOut = new ToolError('TIMEOUT', `Tool '${tool.name}' ran longer than ${timeoutMs} ms; narrow the request (path, line range, limit) and retry.`);
      abort(timedOut);
      // A mutating tool is not left running behind the answer: it sees the abort (its signal's reason is
      // this TIMEOUT) before it commits and throws it, or it has committed and its success is the answer.
      if (!tool.mutates) reject(timedOut);
    }, timeoutMs);
  });
  const run = tool.run(ctx, input);
  // The directory handles go when the tool has settled, not when the answer leaves (see HandleScope).
  run.then(
    () => scope.close(),
    () => scope.close(),
  );
  try {
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener('abort', gone);
  }
}

/**
 * `[id]/path` names another project in multi-project mode only (single-project mode has no projects, so there it
 * is a directory); `./[id]/path` is always local. A local path reported back is written so that it reads back.
 */
export async function resolveToolPath(call: CallInfo, input: string, opts: ResolveOptions | undefined, scope: HandleScope) {
  const m = call.workspaceFor ? CROSS_PROJECT.exec(input) : null;
  if (!m || !call.workspaceFor) {
    const local = await resolveInWorkspace(call.ws, input, opts, scope);
    if (local.rel.startsWith('[')) local.rel = asLocalToolPath(local.rel);
    return local;
  }
  const projectId = m[1] as string;
  const other = await call.workspaceFor(projectId);
  const resolved = await resolveInWorkspace(other, m[2] === '' ? '.' : (m[2] as string), opts, scope);
  resolved.rel = `[${projectId}]/${resolved.rel}`;
  return resolved;
}
