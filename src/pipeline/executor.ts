// Steps 9 and 10 of a call's lifecycle (./lifecycle.ts): the tool run under its time limit with its context, and
// each path it names resolved in its workspace (or another project's) and shown to the policy.
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { signalOf, type CallInfo, type ResolveHook } from '../tools/call.js';
import type { ToolContext, ToolDefinition, ToolResult } from '../tools/define.js';
import type { PlanHook } from '../tools/plan.js';
import { resolveToolPath } from '../tools/resolve-path.js';
import { HandleScope, type ResolvedPath, type ResolveOptions } from '../workspace/sandbox.js';

/** What the executor adds to a tool's context besides the call: the turn, and where kept backups are told. */
export interface CallExtras {
  turn: string | null;
  keptBackup?: ((sha256: string | null, id: string) => void) | undefined;
}

export function runWithTimeout(tool: ToolDefinition, call: CallInfo, input: Record<string, unknown>, timeoutMs: number, onResolve?: ResolveHook, onPlan?: PlanHook, extras?: CallExtras): Promise<ToolResult<unknown>> {
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
  // The caller's signal is looked at only when the tool asks for its own or the time limit fires, and listened to
  // from then on: a listener per call, and the signal a door makes lazily, cost an MCP read more than its door's
  // own work (docs/development.md, "Work done once"). A caller gone by then is the abort's reason, as a listener
  // added at the start would have made it.
  let listening: AbortSignal | null = null;
  const follow = () => {
    const signal = signalOf(call);
    if (!signal || listening) return;
    if (signal.aborted) return gone();
    listening = signal;
    signal.addEventListener('abort', gone, { once: true });
  };
  const scope = new HandleScope();
  const ctx: ToolContext = {
    ws: call.ws,
    requestId: call.requestId,
    caller: { actor: call.actor ?? null, clientIp: call.clientIp },
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (reason) controller.abort(reason);
        else follow();
      }
      return controller.signal;
    },
    // The reason kept here, with the caller's signal looked at while nothing listens to it yet.
    get aborted() {
      if (!reason && !listening && signalOf(call)?.aborted) gone();
      return reason !== null;
    },
    throwIfAborted() {
      if (ctx.aborted) throw reason;
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
  // One promise settled by the tool or the time limit, whichever comes first: a race of two made a promise and
  // reactions more per call (docs/development.md, "Work done once").
  return new Promise<ToolResult<unknown>>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (!reason) follow();
      // Made only when it fires: an Error captures its stack, which cost a small read 10% of its time.
      const timedOut = E.toolTimedOut(tool.name, timeoutMs);
      abort(timedOut);
      // A mutating tool is not left running behind the answer: it sees the abort (its signal's reason is
      // this TIMEOUT) before it commits and throws it, or it has committed and its success is the answer.
      if (!tool.mutates) reject(timedOut);
    }, timeoutMs);
    // The directory handles go when the tool has settled, not when the answer leaves (see HandleScope).
    const settled = () => {
      scope.close();
      clearTimeout(timer);
      (listening as AbortSignal | null)?.removeEventListener('abort', gone);
    };
    let run: Promise<ToolResult<unknown>>;
    try {
      run = tool.run(ctx, input);
    } catch (err) {
      settled();
      reject(err);
      return;
    }
    run.then(
      (result) => {
        settled();
        resolve(result);
      },
      (err: unknown) => {
        settled();
        reject(err);
      },
    );
  });
}
