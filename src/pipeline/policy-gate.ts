// The policy and the human-approval flow around the one execution path (docs/approvals.md). The executor hands every
// validated call to `gate`: each path the tool resolves is decided on its real path (so a symlink or
// `a/../SOUL.md` meets the rule of SOUL.md), a denial stops the call, an `ask` stops it before it changed
// anything and turns it into an approval request (202, with a dry run's diff), and a repeat that carries
// `approval_id` spends the approval on the path that asked. Walking tools skip the entries a rule denies or
// asks about; dry runs and views are decided like reads, a move on every path it creates (docs/policy.md).
import type { Stats } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import type { Risk } from '../envelope.js';
import { E, ERROR_STATUS, ToolError } from '../errors.js';
import { CallStopped, ChangesNeedReview, type ToolDefinition, type ToolResult } from '../tools/define.js';
import type { CallGate, CallInfo, GatedResult, ResolveHook, RunTool } from '../tools/call.js';
import { changeIdentity, describeChange, describeChangesBriefly, type ChangeEntry, type PlanHook, type PlannedChange } from '../tools/plan.js';
import { TOOLS } from '../tools/registry.js';
import { ApprovalError, argsHash, changesHash, openApprovalStore, type ApprovalBinding, type ApprovalRecord, type ApprovalStatus, type ApprovalStore } from '../policy/approvals.js';
import { denialError, evaluate, resolveSwitches, strictest, toolPolicyView, type PolicyDecision, type SwitchStates } from '../policy/evaluate.js';
import type { Policy } from '../policy/policy-file.js';
import { walkTree } from '../search/walk.js';
import { dropHeld, sweepHeld } from '../exec/held.js';
import { findHidden } from '../exec/overlay.js';
import type { ExecSettings } from '../exec/settings.js';
import { formatBytes } from '../workspace/encoding.js';
import { fileState } from '../workspace/file-state.js';
import { HandleScope, type ResolvedPath } from '../workspace/sandbox.js';
import type { VersionStamp } from '../envelope.js';
import type { AuditLog } from '../ops/audit.js';
import { resolveToolPath } from '../tools/resolve-path.js';
import { allowsProject, allowsRisk, type Principal } from '../ops/auth.js';
import type { Metrics } from '../ops/metrics.js';
import type { Projects } from '../ops/projects.js';

/** The read a dry run or a view is decided like (docs/policy.md). */
const READ = { name: 'read_file', risk: 'read' } as const satisfies { name: string; risk: Risk };
/** How a command's changes are decided: each like the tool that would make it alone. */
const WRITE = { name: 'write_file', risk: 'write' } as const satisfies { name: string; risk: Risk };
const DELETE = { name: 'delete_file', risk: 'destructive' } as const satisfies { name: string; risk: Risk };
/** Paths whose reading asks listed in a command's approval (the rest counted as "more"). */
const MAX_ASKED_SHOWN = 50;

/** Deepest level a moved directory is walked to decide its destination (as the size tools walk). */
const MOVE_WALK_MAX_DEPTH = 64;

/** How often overdue requests are expired (and settled ones past their retention removed). */
const SWEEP_INTERVAL_MS = 30_000;

export interface PolicyDeps {
  config: Config;
  projects: Projects;
  audit: AuditLog;
  metrics: Metrics | null;
}

/** An approval as the routes, the console and the 202 answer show it (the signed record minus its format version). */
export type ApprovalView = Omit<ApprovalRecord, 'v' | 'changes' | 'changes_hash'> & { changes: ChangeEntry[]; changes_hash: string | null };

export function approvalView(record: ApprovalRecord): ApprovalView {
  const { v: _v, ...view } = record;
  return { ...view, changes: record.changes ?? [], changes_hash: record.changes_hash ?? null };
}

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

/** What a gated call has shown its caller (see PolicyService.viewOf). */
interface CallView {
  concealed: boolean;
  observe(p: ResolvedPath): void;
}

export type ApprovalEvent = 'requested' | 'approved' | 'rejected' | 'used' | 'expired' | 'refused' | 'tampered';

export class PolicyService {
  private sweeper: NodeJS.Timeout | null = null;
  /** Aborted on close: calls held by `Prefer: wait` answer 202 at once instead of holding up the shutdown. */
  private readonly closing = new AbortController();

  private constructor(
    readonly policy: Policy | null,
    /** null without a policy: nothing ever asks, so there is nothing to store. */
    readonly store: ApprovalStore | null,
    private readonly deps: PolicyDeps,
  ) {}

  /** Loads TOOLGATE_POLICY (a PolicyError stops start-up) and opens the approval store next to it. */
  static async open(deps: PolicyDeps): Promise<PolicyService> {
    const { config, projects } = deps;
    // A rule may name a tool by any alias a call may use; it is stored as the tool itself (docs/policy.md).
    const toolNames = new Map(TOOLS.flatMap((t) => [t.name, ...(t.aliases ?? [])].map((n) => [n, t.name] as const)));
    // The YAML parser and the policy file's schemas load only when there is a policy to read.
    const policy = config.policy ? await (await import('../policy/policy-file.js')).loadPolicy(config.policy, { toolNames }) : null;
    let store: ApprovalStore | null = null;
    let service: PolicyService | null = null;
    if (policy) {
      const stateDir = config.stateDir ?? projects.single?.stateDir ?? path.join(projects.root ?? config.root, '.toolgate');
      store = await openApprovalStore({
        stateDir,
        ...(config.redisUrl !== undefined && { redisUrl: config.redisUrl }),
        ...(config.approvalSecret !== undefined && { secret: config.approvalSecret }),
        onTampered: (id) => service?.note('tampered', null, { approval_id: id }),
      });
    }
    service = new PolicyService(policy, store, deps);
    deps.metrics?.setPendingSource(store ? async () => (await store.list({ status: 'pending' })).length : null);
    return service;
  }

  /** Expires overdue requests every SWEEP_INTERVAL_MS; each expiry is one audit line (from the replica that won it). */
  startSweeper(onError: (err: unknown) => void): void {
    if (!this.store || this.sweeper) return;
    this.sweeper = setInterval(() => void this.sweep().catch(onError), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  async sweep(now?: number): Promise<ApprovalRecord[]> {
    if (!this.store) return [];
    const store = this.store;
    const { expired } = await store.sweepExpired(now);
    for (const r of expired) this.note('expired', r);
    // Held command runs nobody can land any more (their request settled elsewhere, or was never recorded).
    const single = this.deps.projects.single;
    if (single) {
      await sweepHeld(single.stateDir, async (id) => {
        const r = await store.get(id);
        return r !== null && (r.status === 'pending' || r.status === 'approved' || r.status === 'used');
      });
    }
    return expired;
  }

  /** Releases the calls held by `Prefer: wait` (they answer 202): called before the server stops accepting. */
  stopWaiting(): void {
    this.closing.abort();
  }

  async close(): Promise<void> {
    this.closing.abort();
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    await this.store?.close();
  }

  // --- The executor's gate ------------------------------------------------------------------------------

  readonly gate: CallGate = async (call, tool, input, approvalId, runTool) => {
    if (!this.policy) return { result: await runTool(input, undefined, undefined), httpStatus: 200 };
    const switches = resolveSwitches(this.policy, call.switches);
    return this.runGated(call, tool, input, approvalId, runTool, switches, true);
  };

  private decide(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>, changes = tool.mutates): PolicyDecision {
    const st = p.stat;
    return evaluate(this.policy, {
      ...(tool.commandWords && { command: tool.commandWords(input) }),
      tool: tool.name,
      risk: tool.risk,
      realRel: p.realRel,
      isExecutable: st !== null && st.isFile() && (st.mode & 0o111) !== 0,
      // Changing an existing directory (moving it) changes everything inside: a rule on any file there counts.
      scope: changes && st !== null && st.isDirectory() && tool.name !== 'create_directory' ? 'tree' : 'path',
      switches,
    });
  }

  /**
   * A move's destination decided on every path it would create there, existing or not (docs/policy.md,
   * "Moves"): a file as it arrives (its execute bit), a directory by walking the source and deciding each
   * entry at its new place. The walk has the search bounds; a tree beyond them is refused, never half checked.
   */
  private async decideReceived(tool: ToolDefinition, dst: ResolvedPath, src: ResolvedPath, switches: SwitchStates): Promise<PolicyDecision> {
    const st = src.stat;
    if (!st || dst.realRel === '.') return { decision: 'allow' };
    const at = (realRel: string, entry: Stats | null | undefined): PolicyDecision =>
      evaluate(this.policy, { tool: tool.name, risk: tool.risk, realRel, isExecutable: !!entry && entry.isFile() && (entry.mode & 0o111) !== 0, switches });
    if (!st.isDirectory()) return at(dst.realRel, st);
    // No rule can match anything under the destination: nothing to walk.
    if (evaluate(this.policy, { tool: tool.name, risk: tool.risk, realRel: dst.realRel, scope: 'tree', switches }).decision === 'allow') return { decision: 'allow' };
    const { searchMaxFiles, searchTimeoutMs } = src.ws.limits;
    let worst: PolicyDecision = { decision: 'allow' };
    let tooDeep = false;
    const walk = await walkTree(src.ws, { at: src.at, real: src.real }, {
      maxDepth: MOVE_WALK_MAX_DEPTH,
      maxEntries: searchMaxFiles,
      deadline: Date.now() + searchTimeoutMs,
      includeHidden: true,
      skipDirs: new Set(),
      stats: true,
      onEntry: (e) => {
        if (e.kind === 'directory' && e.depth >= MOVE_WALK_MAX_DEPTH) tooDeep = true;
        worst = strictest([worst, at(`${dst.realRel}/${e.relFromStart}`, e.stat)]);
        return worst.decision !== 'deny' && !tooDeep;
      },
    });
    if (worst.decision === 'deny') return worst;
    const bound = tooDeep
      ? `is more than ${MOVE_WALK_MAX_DEPTH} levels deep`
      : walk.reason === 'entries'
        ? `holds more than ${searchMaxFiles} entries (TOOLGATE_SEARCH_MAX_FILES)`
        : walk.reason === 'time'
          ? `could not be walked within TOOLGATE_SEARCH_TIMEOUT_MS (${searchTimeoutMs} ms)`
          : null;
    if (bound !== null) {
      throw E.moveTooWideForPolicy(src.rel, bound, dst.rel);
    }
    return worst;
  }

  /**
   * A moved directory decided again at its destination after the rename (docs/policy.md, "Moves"): a file written
   * into it between the check and the rename arrived unchecked. A path the policy denies, or one it asks about in a
   * call nobody approved, refuses the move, which the tool then puts back.
   */
  private async checkArrived(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, cleared: boolean): Promise<void> {
    const d = await this.decideReceived(tool, p, p, switches);
    const denied = denialError(d);
    if (denied) throw denied;
    if (d.decision === 'ask' && !cleared) {
      throw E.moveReceivedAsk(p.rel);
    }
  }

  /**
   * A dry run changes nothing, so the rule on the change does not ask for it; but its answer shows the file's
   * content, so it is decided like a read of that path (docs/policy.md, "Dry runs"). A denial of the tool
   * itself still stands.
   */
  private decideDryRun(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): PolicyDecision {
    const own = this.decide(tool, p, switches, input);
    if (own.decision === 'deny') return own;
    const read = this.decideRead(p, switches);
    if (read.decision !== 'deny') return read;
    return { ...read, message: `A dry run shows the content of '${p.rel}', so it is decided like a read: ${read.message ?? 'the policy denies reading it.'}` };
  }

  /**
   * A call of a writing tool that only shows what is there (the text editor's view) is a read as well: the
   * rules on reading apply to it besides its own (docs/policy.md, "Walks, searches and listings").
   */
  private decideViewing(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): PolicyDecision {
    // Viewing a directory changes nothing in it: its entries are filtered (filterWalk), not all decided at once.
    const own = this.decide(tool, p, switches, input, false);
    if (own.decision === 'deny') return own;
    const read = this.decideRead(p, switches, 'path');
    if (read.decision !== 'deny') return strictest([own, read]);
    return { ...read, message: `${tool.name} shows the content of '${p.rel}', so it is decided like a read: ${read.message ?? 'the policy denies reading it.'}` };
  }

  /** What read_file would meet on this path (a directory: by default on anything under it). */
  private decideRead(p: ResolvedPath, switches: SwitchStates, dirScope: 'path' | 'tree' = 'tree'): PolicyDecision {
    const st = p.stat;
    return evaluate(this.policy, {
      tool: READ.name,
      risk: READ.risk,
      realRel: p.realRel,
      isExecutable: st !== null && st.isFile() && (st.mode & 0o111) !== 0,
      scope: st?.isDirectory() ? dirScope : 'path',
      switches,
    });
  }

  /**
   * A walk from this directory leaves out what the policy denies this tool or asks about (it is not there for
   * this caller), unless the walk's start itself asked and a person approved it: then they saw that it
   * reaches what is under it (docs/policy.md, "Walks, searches and listings"). A viewing call's walk also
   * leaves out what a read may not see.
   */
  private filterWalk(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, startApproved: boolean | 'own', viewing: boolean, input: Record<string, unknown>): void {
    if (!p.stat?.isDirectory()) return;
    const ruled = (t: { name: string; risk: Risk }) => {
      const view = toolPolicyView(this.policy, t, switches);
      return view.denyPaths.length > 0 || view.askPaths.length > 0;
    };
    if (!ruled(tool) && !(viewing && ruled(READ))) return;
    const policy = this.policy;
    // The call's command words (run_command) decide each entry as they decided the call: a `commands:` rule matches there too.
    const command = tool.commandWords?.(input);
    const at = (t: { name: string; risk: Risk }, realRel: string) => evaluate(policy, { ...(t === tool && command !== undefined && { command }), tool: t.name, risk: t.risk, realRel, switches });
    p.allowsEntry = (realRel) => {
      // 'own': a command run first (its effects held for a person) passes its own rule's ask, never a read's.
      if (startApproved === 'own') return at(tool, realRel).decision !== 'deny' && (!viewing || at(READ, realRel).decision === 'allow');
      const d = viewing ? strictest([at(tool, realRel), at(READ, realRel)]).decision : at(tool, realRel).decision;
      return d === 'allow' || (d === 'ask' && startApproved);
    };
  }

  /** A change a command made, decided as write_file would be decided on it, a removal as delete_file (docs/run-command.md). */
  private decideChange(realRel: string, op: 'write' | 'delete', switches: SwitchStates): PolicyDecision {
    const as = op === 'write' ? WRITE : DELETE;
    return evaluate(this.policy as Policy, { tool: as.name, risk: as.risk, realRel, switches });
  }

  /** Whether an approved viewing call would see paths whose reading asks (see askedReads). */
  private async seesAskedReads(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): Promise<boolean> {
    if (toolPolicyView(this.policy, READ, switches).askPaths.length === 0) return false;
    const seen = await this.askedReads(tool, p, switches, input);
    return seen !== undefined && (seen.asks.length > 0 || seen.more);
  }

  /**
   * The paths whose reading asks that an approved viewing call (run_command) will see: its walk shows what asks
   * once the call is approved (filterWalk), so the person deciding is told which (docs/approvals.md). The whole
   * project, at any depth: a command sees all of it.
   */
  private askedReads(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): Promise<{ asks: string[]; more: boolean } | undefined> {
    // A call that asks walks once: whether a command may run first, then its request's list, look at the same root.
    let seen = this.readsSeen.get(p);
    if (!seen) this.readsSeen.set(p, (seen = this.walkAskedReads(tool, p, switches, input)));
    return seen;
  }

  /** Paths whose reading asks that a person would be naming; memo of one call's root in readsSeen. */
  private readonly readsSeen = new WeakMap<ResolvedPath, Promise<{ asks: string[]; more: boolean } | undefined>>();

  private async walkAskedReads(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): Promise<{ asks: string[]; more: boolean } | undefined> {
    if (tool.viewing?.(input) !== true || !p.stat?.isDirectory()) return undefined;
    const after: ResolvedPath = { ...p, allowsEntry: undefined };
    this.filterWalk(tool, after, switches, true, true, input);
    const shownAfter = after.allowsEntry ?? (() => true);
    const policy = this.policy as Policy;
    // Each entry's read decided once: the walk keeps those not allowed, of which the ones that ask are listed.
    const asking = new Set<string>();
    const readable = (realRel: string) => {
      const d = evaluate(policy, { tool: READ.name, risk: READ.risk, realRel, switches }).decision;
      if (d === 'ask') asking.add(realRel);
      return d === 'allow';
    };
    try {
      const hidden = await findHidden(p.ws, readable, { maxEntries: p.ws.limits.searchMaxFiles, deadline: Date.now() + p.ws.limits.searchTimeoutMs });
      const asks = [...hidden.dirs.map((d) => [d, true] as const), ...hidden.files.map((f) => [f, false] as const)]
        .map(([rel, isDir]) => [rel.toString('utf8'), isDir] as const)
        .filter(([rel, isDir]) => asking.has(rel) && shownAfter(rel, isDir))
        .map(([rel, isDir]) => (isDir ? `${rel}/` : rel))
        .sort();
      return { asks: asks.slice(0, MAX_ASKED_SHOWN), more: asks.length > MAX_ASKED_SHOWN };
    } catch {
      return { asks: [], more: true };
    }
  }

  private async runGated(
    call: CallInfo,
    tool: ToolDefinition,
    input: Record<string, unknown>,
    approvalId: string | undefined,
    runTool: RunTool,
    switches: SwitchStates,
    mayWait: boolean,
  ): Promise<GatedResult> {
    const store = this.store as ApprovalStore;
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
      if (opts?.arrived) return this.checkArrived(tool, p, switches, cleared);
      view.observe(p);
      let d = dryRun ? this.decideDryRun(tool, p, switches, input) : viewing ? this.decideViewing(tool, p, switches, input) : this.decide(tool, p, switches, input);
      if (opts?.receives && d.decision !== 'deny') d = strictest([d, await this.decideReceived(tool, p, opts.receives, switches)]);
      const denied = denialError(d);
      if (denied) throw denied;
      // With the network off a command that asks runs first on its overlay, and the person decides on what it did
      // (its changes are held); it sees only what this caller may read, as nobody has approved it yet.
      // A command that would see paths whose reading asks is approved before it runs, as with the network on.
      const firstThenAsk = d.decision === 'ask' && tool.risk === 'execute' && input.dry_run !== true && p.ws.limits.exec?.mode === 'sandboxed' && p.ws.limits.exec.network === false && !(await this.seesAskedReads(tool, p, switches, input));
      const runFirst = firstThenAsk && !cleared && approvalId === undefined;
      if (d.decision === 'ask' && !cleared && !runFirst) await clear(p, d);
      this.filterWalk(tool, p, switches, runFirst ? 'own' : d.decision === 'ask', viewing, input);
      if (tool.risk === 'execute' && p.stat?.isDirectory()) {
        p.commandReview = {
          decide: (realRel, op) => {
            const c = this.decideChange(realRel, op, switches);
            return { decision: c.decision, message: c.message ?? '', rule: c.rule ? (c.rule.name ?? c.rule.index) : undefined };
          },
          runFirst,
          changesRuled: [WRITE, DELETE].some((t) => {
            const v = toolPolicyView(this.policy, t, switches);
            return v.askPaths.length > 0 || v.denyPaths.length > 0;
          }),
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
      this.note('refused', out.record, { approval_id: approvalId, code: out.error.code, request_id: call.requestId });
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
      if (spent) this.note('used', spent, { request_id: call.requestId });
      return { result, httpStatus: 200 };
    } catch (err) {
      if (spent) {
        // Stopped before its first write (a tool that shows its call instead of a plan, run_command, may have run):
        // nothing was applied, so the approval stays for a repeat that can apply (docs/approvals.md).
        if (!planPassed && !tool.approvalPreview) throw await this.keepApproval(call, spent, err);
        this.note('used', spent, { request_id: call.requestId });
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
        if (!view.concealed && this.decideRead(p, switches).decision !== 'allow') view.concealed = true;
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
      const decision = held.asking ? this.decideChange(held.asking.path, held.asking.op, switches) : this.decide(tool, held.p, switches, input);
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
        const denied = denialError(this.decide(tool, p, switches, input));
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
    const record = await this.store?.get(approvalId);
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
      if (!used() || !this.store) return;
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
    const kept = await (this.store as ApprovalStore).release(spent).catch(() => null);
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
    this.note('refused', kept ?? spent, { approval_id: spent.id, code, ...(mismatch !== undefined && { mismatch }), approval_kept: kept !== null, request_id: call.requestId });
    return answer;
  }

  /**
   * The door asks its person (MCP elicitation, WebSocket confirmation_request); true when they decided. The
   * decision is the caller's own (the pipeline offers `confirm` only to a token that may decide its own calls).
   */
  private async confirmInBand(call: CallInfo, record: ApprovalRecord): Promise<boolean> {
    if (!call.confirm || !this.store) return false;
    const answer = await call.confirm(approvalRequestView(record), call.signal);
    if (!answer) return false;
    try {
      const decided = await this.store.decide(record.id, { decision: answer.approve ? 'approved' : 'rejected', by: call.actor ?? null, reason: answer.reason ?? null, selfApprove: true });
      this.note(decided.status === 'approved' ? 'approved' : 'rejected', decided);
    } catch (err) {
      // Decided elsewhere meanwhile (the console, another replica): the repeat below meets that decision.
      if (!(err instanceof ApprovalError)) throw err;
    }
    return true;
  }

  /** True when a person decided within the caller's `Prefer: wait`. */
  private async waitFor(call: CallInfo, id: string): Promise<boolean> {
    const waitS = Math.min(call.waitS ?? 0, this.deps.config.approvalMaxWaitS);
    if (waitS <= 0 || !this.store) return false;
    const signal = call.signal ? AbortSignal.any([call.signal, this.closing.signal]) : this.closing.signal;
    const record = await this.store.waitForDecision(id, waitS * 1000, signal);
    return record !== null && record.status !== 'pending';
  }

  private async ask(call: CallInfo, tool: ToolDefinition, input: Record<string, unknown>, runTool: RunTool, switches: SwitchStates, need: ApprovalNeeded, mayWait: boolean): Promise<GatedResult> {
    const store = this.store as ApprovalStore;
    const held = need.held;
    const { dry, planned } = held ? { dry: null, planned: held.planned } : await this.plan(tool, input, runTool, switches);
    const all = planned.map(describeChange);
    const changes = withinRecordBudget(all.slice(0, MAX_SHOWN_CHANGES));
    const shown = changesPreview(changes);
    // A tool that shows the person its call itself (run_command: the command, cwd, env, stdin) plans nothing; a
    // command is shown with what the operator lets it do (network, limits), which its arguments do not say. A
    // held run shows what it did (exit, output) before its changes.
    const told = held ? held.told : tool.approvalPreview ? tool.approvalPreview(input, await this.askedReads(tool, need.p, switches, input)) : null;
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
      ttlMs: (this.policy as Policy).approvalTtlMs,
    });
    // The held run is named by its request from here on (a refusal or expiry discards it, see note).
    if (held) await held.bind(record.id);
    // The audit names every path the request would change (never content).
    this.note('requested', record, { request_id: call.requestId, changes: all.map(changeIdentity) });
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
      const denied = denialError(this.decide(tool, p, switches, input));
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

  // --- Deciding (the routes and the console) --------------------------------------------------------------

  /** Whether this caller decides requests: a token with `approve`, or anyone without tokens (loopback only). */
  static mayDecide(principal: Principal | null): boolean {
    return principal === null || allowsRisk(principal, 'approve');
  }

  /** Requests this caller may see: a decider sees those of its projects, anyone else only its own. */
  async list(principal: Principal | null, status: ApprovalStatus | undefined): Promise<ApprovalRecord[]> {
    if (!this.store) return [];
    const all = await this.store.list(status !== undefined ? { status } : {});
    return all.filter((r) => visibleTo(r, principal)).map((r) => previewFor(r, principal));
  }

  async get(principal: Principal | null, id: string): Promise<ApprovalRecord> {
    const r = this.store ? await this.store.get(id) : null;
    if (!r || !visibleTo(r, principal)) throw E.approvalRequestGone();
    return previewFor(r, principal);
  }

  async decideRequest(principal: Principal | null, id: string, decision: 'approved' | 'rejected', reason: string | null): Promise<ApprovalRecord> {
    if (!PolicyService.mayDecide(principal)) {
      throw E.approvalDecideDenied(principal?.id ?? '');
    }
    const current = await this.get(principal, id);
    // The store's refusals are ApprovalErrors, ToolErrors with the envelope's code.
    const record = await (this.store as ApprovalStore).decide(current.id, { decision, by: principal?.id ?? null, reason, selfApprove: principal?.selfApprove ?? false });
    this.note(decision, record);
    return record;
  }

  // --- Listing tools for the caller -------------------------------------------------------------------------

  /** GET /v1/tools for this caller: tools its token or the policy rule out are left out; the others say where they ask. */
  toolsFor(principal: Principal | null, switchesHeader: string | readonly string[] | undefined): ToolDefinition[] {
    const switches = this.policy ? resolveSwitches(this.policy, switchesHeader) : {};
    const out: ToolDefinition[] = [];
    for (const tool of TOOLS) {
      if (tool.offered && !tool.offered(this.deps.config)) continue;
      if (!allowsRisk(principal, tool.risk)) continue;
      const view = toolPolicyView(this.policy, tool, switches);
      if (view.hidden) continue;
      out.push(view.note ? { ...tool, description: `${tool.description} ${view.note}` } : tool);
    }
    return out;
  }

  // --- Audit and metrics --------------------------------------------------------------------------------------

  /** One audit line and one count per request, decision, use, refusal and expiry. */
  note(event: ApprovalEvent, record: ApprovalRecord | null, extra: Record<string, unknown> = {}): void {
    this.deps.metrics?.approvals.inc({ outcome: event });
    const entry = {
      time: new Date().toISOString(),
      event: `approval_${event}`,
      approval_id: record?.id ?? null,
      actor: record?.caller ?? null,
      project: record?.project ?? null,
      tool: record?.tool ?? null,
      path: record?.path ?? null,
      risk: record?.risk ?? null,
      status: record?.status ?? null,
      ...(record?.decided_by !== undefined && record.decided_at !== null && { decided_by: record.decided_by, decided_at: record.decided_at, reason: record.reason }),
      ...extra,
    };
    const { projects, audit } = this.deps;
    // A refused or expired request of a command discards the run it held (docs/run-command.md, "Changes that ask").
    const discards = record !== null && (event === 'rejected' || event === 'expired') && TOOLS_HOLDING.has(record.tool);
    // In a single workspace the line is queued at once, in the order of the events.
    if (projects.single) {
      audit.recordEvent(entry, projects.single.stateDir);
      if (discards) void dropHeld(projects.single.stateDir, record.id);
    } else {
      void this.projectStateDir(record?.project ?? null).then(async (dir) => {
        audit.recordEvent(entry, dir);
        if (discards && dir !== null) await dropHeld(dir, record.id);
      });
    }
  }

  private async projectStateDir(project: string | null): Promise<string | null> {
    const { projects } = this.deps;
    if (project === null) return null;
    try {
      return (await projects.project(project, null)).stateDir;
    } catch {
      return null;
    }
  }
}

/**
 * The preview (the diff) is for the person deciding. The caller who asked got in its 202 what it may read;
 * its own view of the request shows no diff, which may show a file the policy keeps from it (docs/policy.md).
 */
function previewFor(r: ApprovalRecord, principal: Principal | null): ApprovalRecord {
  if (PolicyService.mayDecide(principal)) return r;
  return { ...r, diff_preview: '', diff_truncated: false, ...(r.changes && { changes: withoutContent(r.changes) }) };
}

/** The changes with their paths and operations but none of the content (diffs, deleted text). */
function withoutContent(changes: readonly ChangeEntry[]): ChangeEntry[] {
  return changes.map((c) => ({ ...c, diff: '', content: c.content === null ? null : '' }));
}

function visibleTo(r: ApprovalRecord, principal: Principal | null): boolean {
  if (principal === null) return true;
  if (r.project !== null && !allowsProject(principal, r.project)) return false;
  return PolicyService.mayDecide(principal) || r.caller === principal.id;
}

/**
 * A 202 for a call that touches a file the caller may not read shows none of its content: the preview (the
 * dry run's data, the diff) is for the person deciding, who sees it on /v1/approvals (docs/policy.md).
 */
function withheldIf(concealed: boolean, out: GatedResult): GatedResult {
  if (!concealed || out.httpStatus !== ERROR_STATUS.APPROVAL_REQUIRED) return out;
  const { approval } = out.result.data as { approval?: Record<string, unknown> };
  return {
    ...out,
    result: {
      ...out.result,
      data: {
        applied: false,
        ...(approval && { approval: { ...approval, diff_preview: '', diff_truncated: false, ...(Array.isArray(approval.changes) && { changes: withoutContent(approval.changes as ChangeEntry[]) }) } }),
      },
      text: `${out.result.text} The preview is shown only to the person deciding: the policy does not let this caller read what the call touches.`,
    },
  };
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

/** What the person deciding sees of a request (the 202 answer's `approval`, a door's confirmation). */
function approvalRequestView(record: ApprovalRecord) {
  return {
    id: record.id,
    status: record.status,
    expires_at: record.expires_at,
    tool: record.tool,
    path: record.path,
    risk: record.risk,
    risk_level: record.risk_level,
    summary: record.summary,
    diff_preview: record.diff_preview,
    diff_truncated: record.diff_truncated,
    changes: record.changes ?? [],
  };
}

/** One line for the person: the dry run's own sentence for one change, else every change named. */
function summaryOf(tool: ToolDefinition, rel: string, dry: ToolResult<unknown> | null, changes: readonly ChangeEntry[]): string {
  if (dry && changes.length <= 1) return dry.text.replace(/^\[Dry Run\] /, '').split('\n')[0] ?? '';
  if (changes.length > 0) return `${tool.name} would ${describeChangesBriefly(changes)}.`;
  return tool.mutates ? `${tool.name} on '${rel}' (no file changes).` : `${tool.name} on '${rel}'.`;
}

/**
 * The last lines of a command's preview (the console shows them as the request's facts): whether the command
 * reaches a network, and the limits it runs under (TOOLGATE_EXEC_*, docs/run-command.md).
 */
function execSettingsLines(exec: ExecSettings | undefined): string[] {
  if (!exec) return [];
  const l = exec.limits;
  const size = (n: number) => (n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : formatBytes(n));
  return [
    `network: ${exec.network ? 'on (never the service host or the metadata address)' : 'off'}`,
    `limits: time ${l.timeoutS} s, CPU ${l.cpuS} s, memory ${size(l.memoryBytes)}, ${l.maxProcesses} processes, files up to ${size(l.maxFileBytes)}, ` +
      `${l.maxOpenFiles} open files, /tmp ${size(l.tmpBytes)}, ${l.quotaBytes > 0 ? `project growth up to ${size(l.quotaBytes)}` : 'no project quota'}`,
  ];
}

/** Tools whose requests may hold a run (src/exec/held.ts). */
const TOOLS_HOLDING = new Set(['run_command']);

/** At most this many changes are shown in a record (the hash binds them all); each is bounded like a diff preview. */
const MAX_SHOWN_CHANGES = 200;
/** Diff and content bytes a record holds in all; changes past it keep their path and operation, marked truncated. */
const MAX_RECORD_CHANGE_BYTES = 256 * 1024;

function withinRecordBudget(changes: ChangeEntry[]): ChangeEntry[] {
  let left = MAX_RECORD_CHANGE_BYTES;
  return changes.map((c) => {
    const size = Buffer.byteLength(c.diff) + Buffer.byteLength(c.content ?? '');
    if (size <= left) {
      left -= size;
      return c;
    }
    left = 0;
    return { ...c, diff: '', content: c.content === null ? null : '', truncated: true };
  });
}

/** The combined `diff_preview` (every change, one after the other) is cut here. */
const MAX_COMBINED_PREVIEW_BYTES = 64 * 1024;

/**
 * `diff_preview` for clients that read only it: each change's diff in order, git's `rename from/to` for a move,
 * a delete without a diff as the removal of its content, a new directory as one line.
 */
function changesPreview(changes: readonly ChangeEntry[]): { text: string; truncated: boolean } {
  const parts: string[] = [];
  let truncated = changes.some((c) => c.truncated);
  for (const c of changes) {
    let part = '';
    if (c.to !== undefined) part += `rename from ${c.path}\nrename to ${c.to}\n`;
    if (c.kind === 'directory' && c.op === 'create') part += `new directory ${c.path}/\n`;
    if (c.kind === 'directory' && c.op !== 'create' && c.content !== null) part += `${c.content.split('\n').filter((l) => l !== '').map((l) => `  ${l}`).join('\n')}\n`;
    if (c.diff !== '') part += c.diff.endsWith('\n') ? c.diff : `${c.diff}\n`;
    else if (c.op === 'delete' && c.content !== null) part += `--- a/${c.path}\n+++ /dev/null\n${c.content.split('\n').filter((l, i, all) => i < all.length - 1 || l !== '').map((l) => `-${l}`).join('\n')}\n`;
    parts.push(part);
  }
  let text = parts.join('');
  if (Buffer.byteLength(text) > MAX_COMBINED_PREVIEW_BYTES) {
    text = `${Buffer.from(text).subarray(0, MAX_COMBINED_PREVIEW_BYTES).toString('utf8').replace(/\uFFFD$/, '')}\n... (truncated)`;
    truncated = true;
  }
  return { text, truncated };
}

/** The 202 answer: nothing changed, the request and what the dry run showed. */
function pendingAnswer(record: ApprovalRecord, dry: ToolResult<unknown> | null): GatedResult {
  const approval = approvalRequestView(record);
  const base = dry?.data && typeof dry.data === 'object' ? (dry.data as Record<string, unknown>) : {};
  return {
    httpStatus: ERROR_STATUS.APPROVAL_REQUIRED,
    result: {
      data: { ...base, applied: false, approval },
      text:
        `Waiting for approval ${record.id}: ${record.summary} Nothing was changed. A person approves or rejects it ` +
        `(the console at /console, or POST /v1/approvals/${record.id}/approve); then repeat this call with "approval_id": "${record.id}".`,
      ...(dry?.stats && { stats: { ...dry.stats, bytes_written: 0 } }),
      partial: true,
      pathResolved: record.path,
      riskLevel: record.risk_level,
    },
  };
}
