// The policy and the human-approval flow around the one execution path (docs/approvals.md): opens the policy and
// the approval store and wires together what src/policy/ holds: the rule decisions (decisions.ts), the approval
// flow of one gated call (approval-flow.ts), the requests as the routes and the console handle them
// (approval-operations.ts), the shapes they are shown in (approval-view.ts), their audit lines and the sweep
// (approval-events.ts). The executor hands every validated call to `gate`; without a policy it runs the tool.
import path from 'node:path';
import type { Config } from '../config.js';
import type { AuditLog } from '../ops/audit.js';
import type { Principal } from '../ops/auth.js';
import type { Metrics } from '../ops/metrics.js';
import type { Projects } from '../ops/projects.js';
import { ApprovalFlow } from '../policy/approval-flow.js';
import { ApprovalNotes, ApprovalSweeper, type ApprovalEvent } from '../policy/approval-events.js';
import { ApprovalOperations, mayDecide } from '../policy/approval-operations.js';
import { openApprovalStore, type ApprovalRecord, type ApprovalStatus, type ApprovalStore } from '../policy/approvals.js';
import { PolicyDecisions, toolsFor } from '../policy/decisions.js';
import { resolveSwitches } from '../policy/evaluate.js';
import type { Policy } from '../policy/policy-file.js';
import type { CallGate } from '../tools/call.js';
import type { ToolDefinition } from '../tools/define.js';
import { TOOLS } from '../tools/registry.js';

export interface PolicyDeps {
  config: Config;
  projects: Projects;
  audit: AuditLog;
  metrics: Metrics | null;
}

export class PolicyService {
  /** Aborted on close: calls held by `Prefer: wait` answer 202 at once instead of holding up the shutdown. */
  private readonly closing = new AbortController();
  /** null without a policy (the gate then runs every call as it is). */
  private readonly flow: ApprovalFlow | null;
  private readonly decisions: PolicyDecisions | null;
  private readonly operations: ApprovalOperations;
  private readonly sweeper: ApprovalSweeper | null;

  private constructor(
    readonly policy: Policy | null,
    /** null without a policy: nothing ever asks, so there is nothing to store. */
    readonly store: ApprovalStore | null,
    private readonly notes: ApprovalNotes,
    private readonly config: Config,
    projects: Projects,
  ) {
    this.decisions = policy ? new PolicyDecisions(policy) : null;
    this.flow = this.decisions && store ? new ApprovalFlow(this.decisions, store, notes, config, this.closing.signal) : null;
    this.operations = new ApprovalOperations(store, notes);
    this.sweeper = store ? new ApprovalSweeper(store, notes, projects) : null;
  }

  /** Loads TOOLGATE_POLICY (a PolicyError stops start-up) and opens the approval store next to it. */
  static async open(deps: PolicyDeps): Promise<PolicyService> {
    const { config, projects } = deps;
    // A rule may name a tool by any alias a call may use; it is stored as the tool itself (docs/policy.md).
    const toolNames = new Map(TOOLS.flatMap((t) => [t.name, ...(t.aliases ?? [])].map((n) => [n, t.name] as const)));
    // The YAML parser and the policy file's schemas load only when there is a policy to read.
    const policy = config.policy ? await (await import('../policy/policy-file.js')).loadPolicy(config.policy, { toolNames }) : null;
    const notes = new ApprovalNotes(deps);
    let store: ApprovalStore | null = null;
    if (policy) {
      const stateDir = config.stateDir ?? projects.single?.stateDir ?? path.join(projects.root ?? config.root, '.toolgate');
      store = await openApprovalStore({
        stateDir,
        ...(config.redisUrl !== undefined && { redisUrl: config.redisUrl }),
        ...(config.approvalSecret !== undefined && { secret: config.approvalSecret }),
        onTampered: (id) => notes.note('tampered', null, { approval_id: id }),
      });
    }
    const service = new PolicyService(policy, store, notes, config, projects);
    deps.metrics?.setPendingSource(store ? async () => (await store.list({ status: 'pending' })).length : null);
    return service;
  }

  /** Expires overdue requests on a timer (src/policy/approval-events.ts); each expiry is one audit line. */
  startSweeper(onError: (err: unknown) => void): void {
    this.sweeper?.start(onError);
  }

  async sweep(now?: number): Promise<ApprovalRecord[]> {
    return this.sweeper ? this.sweeper.sweep(now) : [];
  }

  /** Releases the calls held by `Prefer: wait` (they answer 202): called before the server stops accepting. */
  stopWaiting(): void {
    this.closing.abort();
  }

  async close(): Promise<void> {
    this.closing.abort();
    this.sweeper?.stop();
    await this.store?.close();
  }

  readonly gate: CallGate = async (call, tool, input, approvalId, runTool) => {
    if (!this.policy) return { result: await runTool(input, undefined, undefined), httpStatus: 200 };
    // No rule can decide anything of this call: it runs as without a policy, its switches still checked.
    if (approvalId === undefined && this.decisions?.unruled(tool, input)) {
      if (call.switches !== undefined) resolveSwitches(this.policy, call.switches);
      return { result: await runTool(input, undefined, undefined), httpStatus: 200 };
    }
    const switches = resolveSwitches(this.policy, call.switches);
    return (this.flow as ApprovalFlow).runGated(call, tool, input, approvalId, runTool, switches, true);
  };

  // --- The routes and the console ---------------------------------------------------------------------------

  /** Whether this caller decides requests: a token with `approve`, or anyone without tokens (loopback only). */
  static readonly mayDecide: (principal: Principal | null) => boolean = mayDecide;

  list(principal: Principal | null, status: ApprovalStatus | undefined): Promise<ApprovalRecord[]> {
    return this.operations.list(principal, status);
  }

  get(principal: Principal | null, id: string): Promise<ApprovalRecord> {
    return this.operations.get(principal, id);
  }

  decideRequest(principal: Principal | null, id: string, decision: 'approved' | 'rejected', reason: string | null): Promise<ApprovalRecord> {
    return this.operations.decideRequest(principal, id, decision, reason);
  }

  /** GET /v1/tools for this caller: tools its token or the policy rule out are left out; the others say where they ask. */
  toolsFor(principal: Principal | null, switchesHeader: string | readonly string[] | undefined): ToolDefinition[] {
    return toolsFor(this.policy, this.config, principal, switchesHeader);
  }

  /** One audit line and one count per request, decision, use, refusal and expiry. */
  note(event: ApprovalEvent, record: ApprovalRecord | null, extra: Record<string, unknown> = {}): void {
    this.notes.note(event, record, extra);
  }
}
