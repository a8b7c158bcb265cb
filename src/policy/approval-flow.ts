// The approval flow of one gated call (docs/approvals.md). The gate (src/pipeline/policy-gate.ts) hands it every
// call under a policy: each path the tool resolves is decided (./decisions.ts) on its real path, a denial stops the
// call, an `ask` stops it before it changed anything and turns it into an approval request (202, with a dry run's
// diff), and a repeat that carries `approval_id` spends the approval on the path that asked and must change exactly
// what the person saw. A command that asks with the network off runs first and its held run is what is decided.
import path from 'node:path';
import type { Config } from '../config.js';
import type { VersionStamp } from '../envelope.js';
import { E, ToolError } from '../errors.js';
import { signalOf, type CallInfo, type GatedResult, type ResolveHook, type RunTool } from '../tools/call.js';
import { CallStopped, ChangesNeedReview, type ToolDefinition, type ToolResult } from '../tools/define.js';
import { changeIdentity, describeChange, describeChangesBriefly, type ChangeEntry, type PlanHook, type PlannedChange } from '../tools/plan.js';
import { resolveToolPath } from '../tools/resolve-path.js';
import { fileState } from '../workspace/file-state.js';
import { HandleScope, type ResolvedPath } from '../workspace/sandbox.js';
import type { ApprovalNotes } from './approval-events.js';
import { approvalRequestView, changesPreview, execSettingsLines, MAX_SHOWN_CHANGES, pendingAnswer, summaryOf, withheldIf, withinRecordBudget } from './approval-view.js';
import { ApprovalError, argsHash, changesHash, type ApprovalBinding, type ApprovalRecord, type ApprovalStore } from './approvals.js';
import { denialError, strictest, type PolicyDecision, type SwitchStates } from './evaluate.js';
import type { PolicyDecisions } from './decisions.js';

/** Thrown from the resolve hook: the call asks, nothing has been changed yet. */
class ApprovalNeeded extends CallStopped {
  /**
   * The project whose file asks (`[B]/SOUL.md` called in project A is B's): the request is recorded, shown
   * to approvers and audited there (docs/policy.md, "Projects").
   */
  readonly project: string | null;
  constructor(
    readonly p: ResolvedPath,
    readonly decision: PolicyDecision,
    readonly version: VersionStamp | null,
    /** A command's held run (ChangesNeedReview): its changes and what it did, instead of a plan or dry run. */
    readonly held: ChangesNeedReview | null = null,
  ) {
    super('approval needed');
    this.project = p.ws.id;
  }
}

/** Thrown from the plan hook when the call is only being planned: it stops before its first write. */
class PlanTaken extends Error {
  constructor() {
    super('plan taken');
  }
}

/** Thrown from the resolve hook: the repeat named a request nobody has decided yet. */
class StillPending extends CallStopped {
  constructor(readonly record: ApprovalRecord) {
    super('approval pending');
  }
}

/** What a gated call has shown its caller (see ApprovalFlow.viewOf). */
interface CallView {
  concealed: boolean;
  observe(p: ResolvedPath): void;
}

export class ApprovalFlow {
  constructor(
    private readonly decisions: PolicyDecisions,
    private readonly store: ApprovalStore,
    private readonly notes: ApprovalNotes,
    private readonly config: Config,
    /** Aborted on close: calls held by `Prefer: wait` answer 202 at once instead of holding up the shutdown. */
    private readonly closing: AbortSignal,
  ) {}

  async runGated(
    call: CallInfo,
    tool: ToolDefinition,
    input: Record<string, unknown>,
    approvalId: string | undefined,
    runTool: RunTool,
    switches: SwitchStates,
    mayWait: boolean,
  ): Promise<GatedResult> {
    const store = this.store;
    // A dry run changes nothing, so the change's own rule does not ask for it (it is how a caller previews what
    // would ask); it is decided like a read of what it shows (decideDryRun).
    // A command's dry run still runs the command (only its changes stay in its overlay): decided as the call.
    const dryRun = input.dry_run === true && tool.risk !== 'execute';
    const viewing = !dryRun && tool.viewing?.(input) === true;
    const argsDigest = argsHash(input);
    // Bound to the project of the path that asks, as the request was recorded (ApprovalNeeded.project).
    const bindingAt = (p: ResolvedPath): ApprovalBinding => ({ caller: call.actor ?? null, project: p.ws.id, tool: tool.name, args_hash: argsDigest });
    let cleared = false;
    /** The approval this repeat used, and whether the tool then passed its plan (from there on it may have written). */
    let spent: ApprovalRecord | null = null;
    let planPassed = false;
    const view = this.viewOf(switches);
    const onResolve: ResolveHook = async (p, opts) => {
      if (opts?.arrived) return this.decisions.checkArrived(tool, p, switches, cleared);
      view.observe(p);
      let d = dryRun ? this.decisions.decideDryRun(tool, p, switches, input) : viewing ? this.decisions.decideViewing(tool, p, switches, input) : this.decisions.decide(tool, p, switches, input);
      if (opts?.receives && d.decision !== 'deny') d = strictest([d, await this.decisions.decideReceived(tool, p, opts.receives, switches)]);
      const denied = denialError(d);
      if (denied) throw denied;
      // With the network off a command that asks runs first on its overlay, and the person decides on what it did
      // (its changes are held); it sees only what this caller may read, as nobody has approved it yet.
      // A command that would see paths whose reading asks is approved before it runs, as with the network on.
      const firstThenAsk = d.decision === 'ask' && tool.risk === 'execute' && input.dry_run !== true && p.ws.limits.exec?.mode === 'sandboxed' && p.ws.limits.exec.network === false && !(await this.decisions.seesAskedReads(tool, p, switches, input));
      const runFirst = firstThenAsk && !cleared && approvalId === undefined;
      if (d.decision === 'ask' && !cleared && !runFirst) await clear(p, d);
      this.decisions.filterWalk(tool, p, switches, runFirst ? 'own' : d.decision === 'ask', viewing, input);
      if (tool.risk === 'execute' && p.stat?.isDirectory()) {
        p.commandReview = {
          decide: (realRel, op) => {
            const c = this.decisions.decideChange(realRel, op, switches);
            return { decision: c.decision, message: c.message ?? '', rule: c.rule ? (c.rule.name ?? c.rule.index) : undefined };
          },
          runFirst,
          changesRuled: this.decisions.changesRuled(switches),
          approvalHolds: firstThenAsk,
          claim: async () => {
            if (approvalId === undefined) return null;
            if (!cleared) await clear(p, d.decision === 'ask' ? d : { decision: 'ask' });
            return approvalId;
          },
        };
      }
    };
    /** Spends the repeat's approval on the path that asks (the first one; the approval covers the call), or asks. */
    const clear = async (p: ResolvedPath, d: PolicyDecision): Promise<void> => {
      // Taken while the call's directory handles are open; the same function on the repeat, so both compare alike.
      const version = tool.approvalBinding ? await tool.approvalBinding(p) : await versionAt(p);
      if (approvalId === undefined) throw new ApprovalNeeded(p, d, version);
      const out = await store.consume(approvalId, bindingAt(p), version);
      if (out.kind === 'run') {
        cleared = true;
        spent = out.record;
        return;
      }
      if (out.kind === 'pending') throw new StillPending(out.record);
      this.notes.note('refused', out.record, { approval_id: approvalId, code: out.error.code, request_id: call.requestId });
      // An ApprovalError is a ToolError: the envelope answers with its code.
      throw out.error;
    };
    // The approved repeat must change exactly what the person saw: the tool tells its plan before its first write.
    const check = approvalId === undefined || dryRun ? undefined : this.checkPlan(approvalId, () => cleared);
    const onPlan: PlanHook | undefined = check
      ? async (planned) => {
          await check(planned);
          planPassed = true;
        }
      : undefined;
    try {
      const result = await runTool(approvalId === undefined ? input : await this.pinVersion(tool, input, approvalId), onResolve, onPlan);
      if (spent) this.notes.note('used', spent, { request_id: call.requestId });
      return { result, httpStatus: 200 };
    } catch (err) {
      if (spent) {
        // Stopped before its first write (a tool that shows its call instead of a plan, run_command, may have run):
        // nothing was applied, so the approval stays for a repeat that can apply (docs/approvals.md).
        if (!planPassed && !tool.approvalPreview) throw await this.keepApproval(call, spent, err);
        this.notes.note('used', spent, { request_id: call.requestId });
      }
      if (err instanceof ApprovalNeeded) return this.askFor(call, tool, input, runTool, switches, err, mayWait, view);
      if (err instanceof ChangesNeedReview) return this.askForChanges(call, tool, input, runTool, switches, err, mayWait, view);
      if (err instanceof StillPending) {
        if (mayWait && (await this.waitFor(call, err.record.id))) return this.runGated(call, tool, input, err.record.id, runTool, switches, false);
        return this.answerPending(tool, input, runTool, switches, err.record, view);
      }
      throw err;
    }
  }

  /** What the call has shown the caller so far: `concealed` once it touched a file this caller may not read (a 202 then carries no preview of it). */
  private viewOf(switches: SwitchStates): CallView {
    const view: CallView = {
      concealed: false,
      observe: (p) => {
        if (!view.concealed && this.decisions.decideRead(p, switches).decision !== 'allow') view.concealed = true;
      },
    };
    return view;
  }

  /** The call asks: its preview and approval request, every path the preview resolves observed on the way. */
  private async askFor(call: CallInfo, tool: ToolDefinition, input: Record<string, unknown>, runTool: RunTool, switches: SwitchStates, needed: ApprovalNeeded, mayWait: boolean, view: CallView): Promise<GatedResult> {
    // The plan hook passes through: without it a tool with no dry run would run for real instead of stopping.
    const observing: RunTool = (i, hook, onPlanned) =>
      runTool(
        i,
        async (p, o) => {
          view.observe(p);
          await hook?.(p, o);
        },
        onPlanned,
      );
    const out = await this.ask(call, tool, input, observing, switches, needed, mayWait);
    return withheldIf(view.concealed, out);
  }

  /**
   * A command's run is held for a person (its changes ask, or the call asked and ran first): the request shows the
   * command, what it did and every change, and binds to the project as it is now (with nothing of the run landed).
   */
  private async askForChanges(call: CallInfo, tool: ToolDefinition, input: Record<string, unknown>, runTool: RunTool, switches: SwitchStates, held: ChangesNeedReview, mayWait: boolean, view: CallView): Promise<GatedResult> {
    try {
      const decision = held.asking ? this.decisions.decideChange(held.asking.path, held.asking.op, switches) : this.decisions.decide(tool, held.p, switches, input);
      const version = tool.approvalBinding ? await tool.approvalBinding(held.p) : null;
      return await this.askFor(call, tool, input, runTool, switches, new ApprovalNeeded(held.p, decision, version, held), mayWait, view);
    } catch (err) {
      await held.discard();
      throw err;
    }
  }

  /**
   * The repeat named a request nobody has decided yet. The call stopped at the path that asks; the record's
   * preview may show paths after it, so they are looked at through a dry run (one that fails shows nothing,
   * and the preview is withheld).
   */
  private async answerPending(tool: ToolDefinition, input: Record<string, unknown>, runTool: RunTool, switches: SwitchStates, record: ApprovalRecord, view: CallView): Promise<GatedResult> {
    if (!view.concealed && 'dry_run' in tool.input.shape && tool.risk !== 'execute') {
      const look: ResolveHook = (p) => {
        view.observe(p);
        const denied = denialError(this.decisions.decide(tool, p, switches, input));
        if (denied) throw denied;
      };
      await runTool({ ...input, dry_run: true }, look, undefined).catch(() => {
        view.concealed = true;
      });
    }
    return withheldIf(view.concealed, pendingAnswer(record, null));
  }

  /**
   * The repeat runs against the version the person saw: consume checks it before the tool starts, and the
   * approved sha256 given as the tool's expected_sha256 makes the tool check it again under its file lock,
   * so a write that lands in between is CONFLICT rather than overwritten. The binding hash is unaffected.
   */
  private async pinVersion(tool: ToolDefinition, input: Record<string, unknown>, approvalId: string): Promise<Record<string, unknown>> {
    if (!('expected_sha256' in tool.input.shape) || input.expected_sha256 !== undefined || typeof input.path !== 'string') return input;
    const record = await this.store.get(approvalId);
    const sha = record?.file_version?.sha256;
    if (!record || !sha || record.path !== path.posix.normalize(input.path)) return input;
    return { ...input, expected_sha256: sha };
  }

  /**
   * The repeat's plan against the approved one (changes_hash): a file of the patch that changed since, another
   * destination, other content are CONFLICT before anything is written. `used` says whether this call spent
   * the approval (a call that met no `ask` rule runs as it would without one).
   */
  private checkPlan(approvalId: string, used: () => boolean): PlanHook {
    return async (planned) => {
      if (!used()) return;
      const record = await this.store.get(approvalId);
      if (!record || record.changes_hash === undefined || record.changes_hash === null) return;
      const now = planned.map(describeChange);
      if (changesHash(now) === record.changes_hash) return;
      throw E.approvedChangesDiffer(approvalId, describeChangesBriefly(record.changes ?? []), describeChangesBriefly(now), (record.changes ?? []).map(changeIdentity), now.map(changeIdentity));
    };
  }

  /**
   * The approved repeat stopped before its first write: the approval goes back to `approved` (a person need not
   * decide again), and a failure because files of the call moved on since the approval (a file of the patch
   * removed, its lines edited) is CONFLICT naming them, as a changed file is. Returns what the call answers.
   */
  private async keepApproval(call: CallInfo, spent: ApprovalRecord, err: unknown): Promise<unknown> {
    const kept = await this.store.release(spent).catch(() => null);
    let answer = err;
    if (err instanceof ToolError && err.details?.mismatch !== 'changes') {
      const moved = await movedOn(call, spent.changes ?? []);
      if (moved.length > 0) {
        const named = moved.map((f) => `${f.path} (${f.current === null ? 'gone' : f.approved === null ? 'created since' : 'changed'})`).join(', ');
        answer = E.approvedFilesMovedOn(spent.id, named, moved, kept !== null);
      }
    }
    const code = answer instanceof ToolError ? answer.code : null;
    const mismatch = answer instanceof ToolError ? answer.details?.mismatch : undefined;
    this.notes.note('refused', kept ?? spent, { approval_id: spent.id, code, ...(mismatch !== undefined && { mismatch }), approval_kept: kept !== null, request_id: call.requestId });
    return answer;
  }

  /**
   * The door asks its person (MCP elicitation, WebSocket confirmation_request); true when they decided. The
   * decision is the caller's own (the pipeline offers `confirm` only to a token that may decide its own calls).
   */
  private async confirmInBand(call: CallInfo, record: ApprovalRecord): Promise<boolean> {
    if (!call.confirm) return false;
    const answer = await call.confirm(approvalRequestView(record), signalOf(call));
    if (!answer) return false;
    try {
      const decided = await this.store.decide(record.id, { decision: answer.approve ? 'approved' : 'rejected', by: call.actor ?? null, reason: answer.reason ?? null, selfApprove: true });
      this.notes.note(decided.status === 'approved' ? 'approved' : 'rejected', decided);
    } catch (err) {
      // Decided elsewhere meanwhile (the console, another replica): the repeat below meets that decision.
      if (!(err instanceof ApprovalError)) throw err;
    }
    return true;
  }

  /** True when a person decided within the caller's `Prefer: wait`. */
  private async waitFor(call: CallInfo, id: string): Promise<boolean> {
    const waitS = Math.min(call.waitS ?? 0, this.config.approvalMaxWaitS);
    if (waitS <= 0) return false;
    const gone = signalOf(call);
    const signal = gone ? AbortSignal.any([gone, this.closing]) : this.closing;
    const record = await this.store.waitForDecision(id, waitS * 1000, signal);
    return record !== null && record.status !== 'pending';
  }

  private async ask(call: CallInfo, tool: ToolDefinition, input: Record<string, unknown>, runTool: RunTool, switches: SwitchStates, need: ApprovalNeeded, mayWait: boolean): Promise<GatedResult> {
    const store = this.store;
    const held = need.held;
    const { dry, planned } = held ? { dry: null, planned: held.planned } : await this.plan(tool, input, runTool, switches);
    const all = planned.map(describeChange);
    const changes = withinRecordBudget(all.slice(0, MAX_SHOWN_CHANGES));
    const shown = changesPreview(changes);
    // A tool that shows the person its call itself (run_command: the command, cwd, env, stdin) plans nothing; a
    // command is shown with what the operator lets it do (network, limits), which its arguments do not say. A
    // held run shows what it did (exit, output) before its changes.
    const told = held ? held.told : tool.approvalPreview ? tool.approvalPreview(input, await this.decisions.askedReads(tool, need.p, switches, input)) : null;
    const shownCall = told && tool.risk === 'execute' ? { ...told, preview: [told.preview, ...execSettingsLines(call.ws.limits.exec)].join('\n') } : told;
    const preview = held && shownCall ? { ...shownCall, preview: [shownCall.preview, ...(all.length > 0 ? ['', shown.text] : ['', 'It changed nothing in the project.'])].join('\n') } : shownCall;
    const data = (dry?.data ?? {}) as { diff_preview?: unknown; diff_truncated?: unknown };
    const record = await store.create({
      caller: call.actor ?? null,
      project: need.project,
      tool: tool.name,
      path: need.p.rel,
      risk: tool.risk,
      risk_level: dry?.riskLevel ?? tool.riskLevel,
      args_hash: argsHash(input),
      file_version: need.version,
      summary: preview?.summary ?? summaryOf(tool, need.p.rel, dry, all),
      // Every change (the old field held the dry run's diff of one file only).
      diff_preview: held ? (preview?.preview ?? '') : all.length > 0 ? shown.text : typeof data.diff_preview === 'string' ? data.diff_preview : (preview?.preview ?? ''),
      diff_truncated: all.length > 0 ? shown.truncated || all.length > changes.length : data.diff_truncated === true,
      changes,
      changes_hash: tool.mutates ? changesHash(all) : null,
      rule: need.decision.rule ? { index: need.decision.rule.index, ...(need.decision.rule.name !== undefined && { name: need.decision.rule.name }) } : null,
      ttlMs: this.decisions.policy.approvalTtlMs,
    });
    // The held run is named by its request from here on (a refusal or expiry discards it, see note).
    if (held) await held.bind(record.id);
    // The audit names every path the request would change (never content).
    this.notes.note('requested', record, { request_id: call.requestId, changes: all.map(changeIdentity) });
    if (mayWait && (await this.confirmInBand(call, record))) return this.runGated(call, tool, input, record.id, runTool, switches, false);
    if (mayWait && (await this.waitFor(call, record.id))) return this.runGated(call, tool, input, record.id, runTool, switches, false);
    return pendingAnswer(record, dry);
  }

  /**
   * What the call would do, from the tool's own code: a dry run where the tool has one, else the call itself
   * stopped where it announces its changes (before its first write). A read tool is not run (its answer is
   * what the person decides on).
   */
  private async plan(tool: ToolDefinition, input: Record<string, unknown>, runTool: RunTool, switches: SwitchStates): Promise<{ dry: ToolResult<unknown> | null; planned: PlannedChange[] }> {
    const hasDryRun = 'dry_run' in tool.input.shape;
    // Not run: a read tool (its answer is what the person decides on), and a tool that announces no plan before
    // it acts (run_command: the person sees the command itself, approvalPreview).
    if ((!hasDryRun && !tool.mutates) || tool.approvalPreview) return { dry: null, planned: [] };
    let planned: PlannedChange[] = [];
    const denyOnly = (p: ResolvedPath) => {
      const denied = denialError(this.decisions.decide(tool, p, switches, input));
      if (denied) throw denied;
    };
    const capture: PlanHook = async (changes) => {
      planned = changes;
      if (!hasDryRun) throw new PlanTaken();
    };
    try {
      // A plan that fails (NO_MATCH, VERSION_REQUIRED) answers the caller now. A run that ends without announcing
      // a change changed nothing (an existing directory); its answer is not shown before the person decides.
      const result = await runTool(hasDryRun ? { ...input, dry_run: true } : input, denyOnly, capture);
      return { dry: hasDryRun ? result : null, planned };
    } catch (err) {
      if (err instanceof PlanTaken) return { dry: null, planned };
      throw err;
    }
  }
}

/** The approved changes whose file is not as the person saw it now (sha256 before the change; null: absent), with the sha256 it has. */
async function movedOn(call: CallInfo, changes: readonly ChangeEntry[]): Promise<{ path: string; approved: string | null; current: string | null }[]> {
  const scope = new HandleScope();
  const moved: { path: string; approved: string | null; current: string | null }[] = [];
  try {
    for (const c of changes) {
      // A directory's `sha256_before` is a hash of its entries, not of content: the plan check compares those.
      if (c.kind !== 'file') continue;
      let current: string | null = null;
      try {
        const p = await resolveToolPath(call, c.path, { noFollowLeaf: true }, scope);
        if (p.stat?.isFile()) current = (await fileState(p))?.version.sha256 ?? null;
      } catch {
        // No longer reachable (a parent replaced by a file or a link): not as the person saw it.
      }
      if (current !== c.sha256_before) moved.push({ path: c.path, approved: c.sha256_before, current });
    }
  } finally {
    scope.close();
  }
  return moved;
}

/** The file's version (streamed hash) when the path names a regular file; null for a new file or a directory. */
async function versionAt(p: ResolvedPath): Promise<VersionStamp | null> {
  if (!p.stat?.isFile()) return null;
  return (await fileState(p))?.version ?? null;
}
