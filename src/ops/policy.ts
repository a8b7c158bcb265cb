// The policy and the human-approval flow around the one execution path (SPEC §6). The executor hands every
// validated call to `gate`: each path the tool resolves is decided on its real path (so a symlink or
// `a/../SOUL.md` meets the rule of SOUL.md), a denial stops the call, an `ask` stops it before it changed
// anything and turns it into an approval request (202, with a dry run's diff), and a repeat that carries
// `approval_id` spends the approval on the path that asked. Walking tools skip the entries a rule denies.
import path from 'node:path';
import type { Config } from '../config.js';
import { ToolError, type ErrorCode } from '../envelope.js';
import type { ToolDefinition, ToolResult } from '../tools/define.js';
import type { CallGate, CallInfo, GatedResult, ResolveHook, RunTool } from '../tools/execute.js';
import { TOOLS } from '../tools/registry.js';
import { ApprovalError, argsHash, openApprovalStore, type ApprovalBinding, type ApprovalRecord, type ApprovalStatus, type ApprovalStore } from '../policy/approvals.js';
import { denialError, evaluate, resolveSwitches, toolPolicyView, type PolicyDecision, type SwitchStates } from '../policy/evaluate.js';
import { loadPolicy, type Policy } from '../policy/policy-file.js';
import { fileState } from '../workspace/file-state.js';
import type { ResolvedPath } from '../workspace/sandbox.js';
import type { VersionStamp } from '../envelope.js';
import type { AuditLog } from './audit.js';
import { allowsProject, allowsRisk, type Principal } from './auth.js';
import type { Metrics } from './metrics.js';
import type { Projects } from './projects.js';

/** How often overdue requests are expired (and settled ones past their retention removed). */
const SWEEP_INTERVAL_MS = 30_000;

export interface PolicyDeps {
  config: Config;
  projects: Projects;
  audit: AuditLog;
  metrics: Metrics | null;
}

/** An approval as the routes, the console and the 202 answer show it (the signed record minus its format version). */
export type ApprovalView = Omit<ApprovalRecord, 'v'>;

export function approvalView(record: ApprovalRecord): ApprovalView {
  const { v: _v, ...view } = record;
  return view;
}

/** Thrown from the resolve hook: the call asks, nothing has been changed yet. */
class ApprovalNeeded extends Error {
  constructor(
    readonly p: ResolvedPath,
    readonly decision: PolicyDecision,
    readonly version: VersionStamp | null,
  ) {
    super('approval needed');
  }
}

/** Thrown from the resolve hook: the repeat named a request nobody has decided yet. */
class StillPending extends Error {
  constructor(readonly record: ApprovalRecord) {
    super('approval pending');
  }
}

export function toToolErrorFromApproval(err: ApprovalError): ToolError {
  return new ToolError(err.code as ErrorCode, err.message, err.details);
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
    const knownTools = TOOLS.flatMap((t) => [t.name, ...(t.aliases ?? [])]);
    const policy = config.policy ? await loadPolicy(config.policy, { knownTools }) : null;
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
    const { expired } = await this.store.sweepExpired(now);
    for (const r of expired) this.note('expired', r);
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
    if (!this.policy) return { result: await runTool(input), httpStatus: 200 };
    const switches = resolveSwitches(this.policy, call.switches);
    return this.runGated(call, tool, input, approvalId, runTool, switches, true);
  };

  private decide(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): PolicyDecision {
    const st = p.stat;
    return evaluate(this.policy, {
      ...(tool.commandWords && { command: tool.commandWords(input) }),
      tool: tool.name,
      risk: tool.risk,
      realRel: p.realRel,
      isExecutable: st !== null && st.isFile() && (st.mode & 0o111) !== 0,
      // Changing an existing directory (moving it) changes everything inside: a rule on any file there counts.
      scope: tool.mutates && st !== null && st.isDirectory() && tool.name !== 'create_directory' ? 'tree' : 'path',
      switches,
    });
  }

  /** A walk from this directory leaves out what the policy denies this tool (it is not there for this caller). */
  private filterWalk(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates): void {
    if (!p.stat?.isDirectory()) return;
    if (toolPolicyView(this.policy, tool, switches).denyPaths.length === 0) return;
    const policy = this.policy;
    p.allowsEntry = (realRel) => evaluate(policy, { tool: tool.name, risk: tool.risk, realRel, switches }).decision !== 'deny';
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
    // A dry run changes nothing, so it needs nobody's approval (it is how a caller previews what would ask).
    const dryRun = input.dry_run === true;
    const binding: ApprovalBinding = { caller: call.actor ?? null, project: call.ws.id, tool: tool.name, args_hash: argsHash(input) };
    let cleared = false;
    const onResolve: ResolveHook = async (p) => {
      const d = this.decide(tool, p, switches, input);
      const denied = denialError(d);
      if (denied) throw denied;
      this.filterWalk(tool, p, switches);
      if (d.decision !== 'ask' || dryRun || cleared) return;
      // Taken while the call's directory handles are open; the same function on the repeat, so both compare alike.
      const version = await versionAt(p);
      if (approvalId === undefined) throw new ApprovalNeeded(p, d, version);
      const out = await store.consume(approvalId, binding, version);
      if (out.kind === 'run') {
        cleared = true;
        this.note('used', out.record, { request_id: call.requestId });
        return;
      }
      if (out.kind === 'pending') throw new StillPending(out.record);
      this.note('refused', out.record, { approval_id: approvalId, code: out.error.code, request_id: call.requestId });
      throw toToolErrorFromApproval(out.error);
    };
    try {
      return { result: await runTool(approvalId === undefined ? input : await this.pinVersion(tool, input, approvalId), onResolve), httpStatus: 200 };
    } catch (err) {
      if (err instanceof ApprovalNeeded) return this.ask(call, tool, input, runTool, switches, err, mayWait);
      if (err instanceof StillPending) {
        if (mayWait && (await this.waitFor(call, err.record.id))) return this.runGated(call, tool, input, err.record.id, runTool, switches, false);
        return pendingAnswer(err.record, null);
      }
      throw err;
    }
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
    let dry: ToolResult<unknown> | null = null;
    if ('dry_run' in tool.input.shape) {
      // The person sees what would happen; a dry run that fails (NO_MATCH, VERSION_REQUIRED) answers the caller now.
      dry = await runTool({ ...input, dry_run: true }, (p) => {
        const denied = denialError(this.decide(tool, p, switches, input));
        if (denied) throw denied;
      });
    }
    const data = (dry?.data ?? {}) as { diff_preview?: unknown; diff_truncated?: unknown };
    // A tool without a dry run says what it will do (run_command: the command, its cwd and env).
    const shown = !dry && tool.approvalPreview ? tool.approvalPreview(input) : null;
    const record = await store.create({
      caller: call.actor ?? null,
      project: call.ws.id,
      tool: tool.name,
      path: need.p.rel,
      risk: tool.risk,
      risk_level: dry?.riskLevel ?? tool.riskLevel,
      args_hash: argsHash(input),
      file_version: need.version,
      summary: dry ? (dry.text.replace(/^\[Dry Run\] /, '').split('\n')[0] ?? '') : (shown?.summary ?? `${tool.name} on '${need.p.rel}'.`),
      diff_preview: typeof data.diff_preview === 'string' ? data.diff_preview : (shown?.preview ?? ''),
      diff_truncated: data.diff_truncated === true,
      rule: need.decision.rule ? { index: need.decision.rule.index, ...(need.decision.rule.name !== undefined && { name: need.decision.rule.name }) } : null,
      ttlMs: (this.policy as Policy).approvalTtlMs,
    });
    this.note('requested', record, { request_id: call.requestId });
    if (mayWait && (await this.confirmInBand(call, record))) return this.runGated(call, tool, input, record.id, runTool, switches, false);
    if (mayWait && (await this.waitFor(call, record.id))) return this.runGated(call, tool, input, record.id, runTool, switches, false);
    return pendingAnswer(record, dry);
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
    return all.filter((r) => visibleTo(r, principal));
  }

  async get(principal: Principal | null, id: string): Promise<ApprovalRecord> {
    const r = this.store ? await this.store.get(id) : null;
    if (!r || !visibleTo(r, principal)) throw new ToolError('NOT_FOUND', 'No such approval request; it may have been swept after it expired.');
    return r;
  }

  async decideRequest(principal: Principal | null, id: string, decision: 'approved' | 'rejected', reason: string | null): Promise<ApprovalRecord> {
    if (!PolicyService.mayDecide(principal)) {
      throw new ToolError('ACCESS_DENIED', `Token '${principal?.id ?? ''}' may not decide approval requests; ask the operator for a token with the 'approve' risk class.`);
    }
    const current = await this.get(principal, id);
    try {
      const record = await (this.store as ApprovalStore).decide(current.id, { decision, by: principal?.id ?? null, reason, selfApprove: principal?.selfApprove ?? false });
      this.note(decision, record);
      return record;
    } catch (err) {
      if (err instanceof ApprovalError) throw toToolErrorFromApproval(err);
      throw err;
    }
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
    // In a single workspace the line is queued at once, in the order of the events.
    if (projects.single) audit.recordEvent(entry, projects.single.stateDir);
    else void this.projectStateDir(record?.project ?? null).then((dir) => audit.recordEvent(entry, dir));
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

function visibleTo(r: ApprovalRecord, principal: Principal | null): boolean {
  if (principal === null) return true;
  if (r.project !== null && !allowsProject(principal, r.project)) return false;
  return PolicyService.mayDecide(principal) || r.caller === principal.id;
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
  };
}

/** The 202 answer: nothing changed, the request and what the dry run showed. */
function pendingAnswer(record: ApprovalRecord, dry: ToolResult<unknown> | null): GatedResult {
  const approval = approvalRequestView(record);
  const base = dry?.data && typeof dry.data === 'object' ? (dry.data as Record<string, unknown>) : {};
  return {
    httpStatus: 202,
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
