// Steps 9 and 10 of a call's lifecycle (./lifecycle.ts): the tool run under its time limit with its context, and
// each path it names resolved in its workspace (or another project's) and shown to the policy.
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { signalOf, type CallInfo, type ResolveHook } from '../tools/call.js';
import type { ToolContext, ToolDefinition, ToolResult } from '../tools/define.js';
import type { Workspace } from '../workspace/workspace.js';
import type { PlanHook } from '../tools/plan.js';
import { resolveToolPath } from '../tools/resolve-path.js';
import { HandleScope, type ResolvedPath, type ResolveOptions } from '../workspace/sandbox.js';

/** What the executor adds to a tool's context besides the call: the turn, and where kept backups are told. */
export interface CallExtras {
  turn: string | null;
  keptBackup?: ((sha256: string | null, id: string) => void) | undefined;
}

export function runWithTimeout(tool: ToolDefinition, call: CallInfo, input: Record<string, unknown>, timeoutMs: number, onResolve?: ResolveHook, onPlan?: PlanHook, extras?: CallExtras): Promise<ToolResult<unknown>> {
  return new ToolRun(tool, call, onResolve, onPlan, extras).run(input, timeoutMs);
}

/**
 * One run of a tool: its context, its time limit and the caller's signal. One object with its methods on the
 * prototype, not a context literal with getters and a closure per step: every call made them all, used or not
 * (docs/development.md, "Work done once").
 */
class ToolRun implements ToolContext {
  readonly ws: Workspace;
  readonly requestId: string;
  readonly caller: { readonly actor: string | null; readonly clientIp: string | undefined };
  readonly expectedVersion: CallInfo['expectedVersion'];
  readonly progress: CallInfo['progress'];
  readonly handles = new HandleScope();
  readonly planned: PlanHook | undefined;
  readonly turn: string | null;
  readonly keptBackup: CallExtras['keptBackup'];
  // Private (#): the tool sees its context, not the call's other parts or the run's state.
  readonly #tool: ToolDefinition;
  readonly #call: CallInfo;
  readonly #onResolve: ResolveHook | undefined;
  // The tool's signal is made when the tool first asks for it: most calls (a small read) never do, and an
  // AbortController per call shows in a small read's profile. Aborts that come before are remembered.
  #controller: AbortController | null = null;
  #reason: ToolError | null = null;
  // The caller's signal is looked at only when the tool asks for its own or the time limit fires, and listened to
  // from then on: a listener per call, and the signal a door makes lazily, cost an MCP read more than its door's
  // own work. A caller gone by then is the abort's reason, as a listener added at the start would have made it.
  #listening: AbortSignal | null = null;
  /** The listener on the caller's signal, made when there is one to listen to. */
  #onGone: (() => void) | null = null;

  constructor(tool: ToolDefinition, call: CallInfo, onResolve: ResolveHook | undefined, onPlan: PlanHook | undefined, extras: CallExtras | undefined) {
    this.#tool = tool;
    this.#call = call;
    this.#onResolve = onResolve;
    this.ws = call.ws;
    this.requestId = call.requestId;
    this.caller = { actor: call.actor ?? null, clientIp: call.clientIp };
    this.expectedVersion = call.expectedVersion;
    this.progress = call.progress;
    this.planned = onPlan;
    this.turn = extras?.turn ?? null;
    this.keptBackup = extras?.keptBackup;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason) this.#controller.abort(this.#reason);
      else this.#follow();
    }
    return this.#controller.signal;
  }

  // The reason kept here, with the caller's signal looked at while nothing listens to it yet.
  get aborted(): boolean {
    if (!this.#reason && !this.#listening && signalOf(this.#call)?.aborted) this.#gone();
    return this.#reason !== null;
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.#reason;
  }

  resolve(p: string, o?: ResolveOptions): Promise<ResolvedPath> {
    const resolved = resolveToolPath(this.#call, p, o, this.handles);
    return this.#onResolve ? this.#shown(resolved, this.#onResolve, o) : resolved;
  }

  /** A resolved path once the policy has seen it. */
  async #shown(resolving: Promise<ResolvedPath>, onResolve: ResolveHook, o: ResolveOptions | undefined): Promise<ResolvedPath> {
    const resolved = await resolving;
    await onResolve(resolved, o);
    return resolved;
  }

  async admit(p: ResolvedPath): Promise<void> {
    await this.#onResolve?.(p, undefined);
  }

  #gone(): void {
    this.#abort(E.clientGone(this.#tool.name));
  }

  #abort(why: ToolError): void {
    if (this.#reason) return;
    this.#reason = why;
    this.#controller?.abort(why);
  }

  #follow(): void {
    const signal = signalOf(this.#call);
    if (!signal || this.#listening) return;
    if (signal.aborted) return this.#gone();
    this.#listening = signal;
    this.#onGone = () => this.#gone();
    signal.addEventListener('abort', this.#onGone, { once: true });
  }

  /** One promise settled by the tool or the time limit, whichever comes first: a race of two made a promise and reactions more per call. */
  run(input: Record<string, unknown>, timeoutMs: number): Promise<ToolResult<unknown>> {
    const tool = this.#tool;
    return new Promise<ToolResult<unknown>>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.#reason) this.#follow();
        // Made only when it fires: an Error captures its stack, which cost a small read 10% of its time.
        const timedOut = E.toolTimedOut(tool.name, timeoutMs);
        this.#abort(timedOut);
        // A mutating tool is not left running behind the answer: it sees the abort (its signal's reason is
        // this TIMEOUT) before it commits and throws it, or it has committed and its success is the answer.
        if (!tool.mutates) reject(timedOut);
      }, timeoutMs);
      // The directory handles go when the tool has settled, not when the answer leaves (see HandleScope).
      const settled = () => {
        this.handles.close();
        clearTimeout(timer);
        if (this.#onGone) this.#listening?.removeEventListener('abort', this.#onGone);
      };
      let running: Promise<ToolResult<unknown>>;
      try {
        running = tool.run(this, input);
      } catch (err) {
        settled();
        reject(err);
        return;
      }
      running.then(
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
}
