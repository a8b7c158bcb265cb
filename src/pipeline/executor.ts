// The tool-execution core under the pipeline (src/pipeline/execute-tool.ts, which every door calls): look
// up, validate (./arguments.ts), run with a time limit, and wrap the result (or the error) in the
// envelope. Risk, policy and rate limit plug in as before-hooks, audit and metrics as after-hooks.
import { errorEnvelope, resultEnvelope, shortenParams, shortenText, toToolError, ToolError, type Envelope, type Risk, type RiskLevel } from '../envelope.js';
import { E } from '../errors.js';
import type { AfterHook, BeforeHook, CallGate, CallInfo, CallOutcome, ResolveHook, RunTool } from '../tools/call.js';
import type { ToolContext, ToolDefinition, ToolResult } from '../tools/define.js';
import type { PlanHook } from '../tools/plan.js';
import { findTool, TOOLS } from '../tools/registry.js';
import { resolveToolPath } from '../tools/resolve-path.js';
import { lexicalRel } from '../workspace/path-syntax.js';
import { HandleScope, type ResolvedPath, type ResolveOptions } from '../workspace/sandbox.js';
import { parseArguments } from './arguments.js';
import { CallRecorder, keepRecord, parseTurn } from './checkpoint-recorder.js';

export interface ExecutorOptions {
  toolTimeoutMs: number;
  before?: BeforeHook[];
  after?: AfterHook[];
  gate?: CallGate | undefined;
  /** A checkpoint record that could not be written (the change stands; the log says so). */
  onRecordError?: ((err: unknown) => void) | undefined;
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
      if (!tool) throw E.toolUnknown(shortenText(name, 100), TOOLS.map((t) => t.name).join(', '));
      if (rawInput === undefined || rawInput === null || typeof rawInput !== 'object' || Array.isArray(rawInput)) {
        throw E.argumentsNotObject();
      }
      const { approval_id: approvalId, ...args } = params;
      if (approvalId !== undefined && approvalId !== null && typeof approvalId !== 'string') throw E.approvalIdNotString();
      const turn = parseTurn(call.turn);
      const input = parseArguments(tool, args);
      if (typeof input.path === 'string') pathResolved = lexicalRel(input.path);
      for (const hook of before) {
        // Most hooks answer synchronously; awaiting them anyway cost a tick each on every call.
        const pending = hook(call, tool, input);
        if (pending) await pending;
      }
      // Every change is recorded under its turn, once here for every tool (./checkpoint-recorder.ts).
      const recorder = tool.mutates && !tool.recordsItself ? new CallRecorder() : null;
      const extras: CallExtras = { turn, keptBackup: recorder?.kept };
      const runTool: RunTool = (i, onResolve, onPlan) => {
        recorder?.started(i.dry_run === true);
        const plan: PlanHook | undefined = recorder
          ? async (changes) => {
              recorder.planned(changes);
              if (onPlan) await onPlan(changes);
            }
          : onPlan;
        return runWithTimeout(tool, call, i, Math.min(opts.toolTimeoutMs, call.timeoutMs ?? Infinity), onResolve, plan, extras);
      };
      const { result, httpStatus } = opts.gate ? await opts.gate(call, tool, input, approvalId ?? undefined, runTool) : { result: await runTool(input, undefined, undefined), httpStatus: 200 };
      const record = recorder && httpStatus === 200 ? recorder.recordOf(tool, result, { turn, actor: call.actor ?? null, requestId: call.requestId }) : null;
      if (record) keepRecord(call.ws, record, opts.onRecordError ?? (() => undefined));
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

/** What the executor adds to a tool's context besides the call: the turn, and where kept backups are told. */
export interface CallExtras {
  turn: string | null;
  keptBackup?: ((sha256: string | null, id: string) => void) | undefined;
}

export async function runWithTimeout(tool: ToolDefinition, call: CallInfo, input: Record<string, unknown>, timeoutMs: number, onResolve?: ResolveHook, onPlan?: PlanHook, extras?: CallExtras): Promise<ToolResult<unknown>> {
  // The tool's signal is made when the tool first asks for it: most calls (a small read) never do, and an
  // AbortController per call shows in a small read's profile. Aborts that come before are remembered.
  let controller: AbortController | null = null;
  let reason: ToolError | null = null;
  const abort = (why: ToolError) => {
    if (reason) return;
    reason = why;
    controller?.abort(why);
  };
  const gone = () => abort(E.clientGone(tool.name));
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
    turn: extras?.turn ?? null,
    keptBackup: extras?.keptBackup,
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Made only when it fires: an Error captures its stack, which cost a small read 10% of its time.
      const timedOut = E.toolTimedOut(tool.name, timeoutMs);
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
