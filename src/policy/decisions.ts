// What the policy decides for a call (docs/policy.md): each path a tool resolves decided on its real path, a move
// on every path it creates, dry runs and views like reads, the entries a walk may show (filterWalk), a command's
// changes each like the tool that would make it alone, and the tools a caller is offered. No I/O but the walks a
// decision needs; the approval flow (./approval-flow.ts) acts on what is decided here.
import type { Stats } from 'node:fs';
import type { Config } from '../config.js';
import type { Risk } from '../envelope.js';
import { E } from '../errors.js';
import { findHidden } from '../exec/overlay.js';
import { allowsRisk, type Principal } from '../ops/auth.js';
import { walkTree } from '../search/walk.js';
import type { ToolDefinition } from '../tools/define.js';
import { TOOLS } from '../tools/registry.js';
import type { ResolvedPath } from '../workspace/sandbox.js';
import { denialError, evaluate, resolveSwitches, strictest, toolPolicyView, type PolicyDecision, type SwitchStates } from './evaluate.js';
import type { Policy } from './policy-file.js';

/** The read a dry run or a view is decided like (docs/policy.md). */
const READ = { name: 'read_file', risk: 'read' } as const satisfies { name: string; risk: Risk };
/** How a command's changes are decided: each like the tool that would make it alone. */
const WRITE = { name: 'write_file', risk: 'write' } as const satisfies { name: string; risk: Risk };
const DELETE = { name: 'delete_file', risk: 'destructive' } as const satisfies { name: string; risk: Risk };
/** Paths whose reading asks listed in a command's approval (the rest counted as "more"). */
const MAX_ASKED_SHOWN = 50;

/** Deepest level a moved directory is walked to decide its destination (as the size tools walk). */
const MOVE_WALK_MAX_DEPTH = 64;

/** The decisions of one loaded policy; the gate makes one when a policy is set. */
export class PolicyDecisions {
  /** Per tool name: whether any rule could apply to it at all, paths and switches aside (see unruled). */
  private readonly ruled = new Map<string, boolean>();

  constructor(readonly policy: Policy) {}

  /**
   * Whether no rule can decide anything of this call, so that it runs as it would without a policy: no rule could
   * apply to the tool whatever the paths and switches, nor to reading when the call is decided as a read as well
   * (a dry run, a view). A command (its changes are decided as writes and removals) always goes the long way.
   * Worked out once per tool: the gate's answer is then a lookup (docs/development.md, "Work done once").
   */
  unruled(tool: ToolDefinition, input: Record<string, unknown>): boolean {
    if (tool.risk === 'execute' || this.mayApply(tool)) return false;
    const dryRun = input.dry_run === true;
    return !(dryRun || tool.viewing?.(input) === true) || !this.mayApply(READ);
  }

  /** Whether some rule applies to calls of this tool for some path and some switches (appliesTo without them). */
  private mayApply(tool: { name: string; risk: Risk; commandWords?: unknown }): boolean {
    let ruled = this.ruled.get(tool.name);
    if (ruled === undefined) {
      ruled = this.policy.rules.some(
        (r) => (r.tools === null || r.tools.includes(tool.name)) && (r.risks === null || r.risks.includes(tool.risk)) && (r.commands === null || tool.commandWords !== undefined),
      );
      this.ruled.set(tool.name, ruled);
    }
    return ruled;
  }

  decide(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>, changes = tool.mutates): PolicyDecision {
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
  async decideReceived(tool: ToolDefinition, dst: ResolvedPath, src: ResolvedPath, switches: SwitchStates): Promise<PolicyDecision> {
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
  async checkArrived(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, cleared: boolean): Promise<void> {
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
  decideDryRun(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): PolicyDecision {
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
  decideViewing(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): PolicyDecision {
    // Viewing a directory changes nothing in it: its entries are filtered (filterWalk), not all decided at once.
    const own = this.decide(tool, p, switches, input, false);
    if (own.decision === 'deny') return own;
    const read = this.decideRead(p, switches, 'path');
    if (read.decision !== 'deny') return strictest([own, read]);
    return { ...read, message: `${tool.name} shows the content of '${p.rel}', so it is decided like a read: ${read.message ?? 'the policy denies reading it.'}` };
  }

  /** What read_file would meet on this path (a directory: by default on anything under it). */
  decideRead(p: ResolvedPath, switches: SwitchStates, dirScope: 'path' | 'tree' = 'tree'): PolicyDecision {
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
  filterWalk(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, startApproved: boolean | 'own', viewing: boolean, input: Record<string, unknown>): void {
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
  decideChange(realRel: string, op: 'write' | 'delete', switches: SwitchStates): PolicyDecision {
    const as = op === 'write' ? WRITE : DELETE;
    return evaluate(this.policy, { tool: as.name, risk: as.risk, realRel, switches });
  }

  /** Whether any rule denies or asks about a command's changes (decided as write_file, delete_file would be). */
  changesRuled(switches: SwitchStates): boolean {
    return [WRITE, DELETE].some((t) => {
      const v = toolPolicyView(this.policy, t, switches);
      return v.askPaths.length > 0 || v.denyPaths.length > 0;
    });
  }

  /** Whether an approved viewing call would see paths whose reading asks (see askedReads). */
  async seesAskedReads(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): Promise<boolean> {
    if (toolPolicyView(this.policy, READ, switches).askPaths.length === 0) return false;
    const seen = await this.askedReads(tool, p, switches, input);
    return seen !== undefined && (seen.asks.length > 0 || seen.more);
  }

  /**
   * The paths whose reading asks that an approved viewing call (run_command) will see: its walk shows what asks
   * once the call is approved (filterWalk), so the person deciding is told which (docs/approvals.md). The whole
   * project, at any depth: a command sees all of it.
   */
  askedReads(tool: ToolDefinition, p: ResolvedPath, switches: SwitchStates, input: Record<string, unknown>): Promise<{ asks: string[]; more: boolean } | undefined> {
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
    const policy = this.policy;
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
}

/** GET /v1/tools for this caller: tools its token or the policy rule out are left out; the others say where they ask. */
export function toolsFor(policy: Policy | null, config: Config, principal: Principal | null, switchesHeader: string | readonly string[] | undefined): ToolDefinition[] {
  const switches = policy ? resolveSwitches(policy, switchesHeader) : {};
  const out: ToolDefinition[] = [];
  for (const tool of TOOLS) {
    if (tool.offered && !tool.offered(config)) continue;
    if (!allowsRisk(principal, tool.risk)) continue;
    const view = toolPolicyView(policy, tool, switches);
    if (view.hidden) continue;
    out.push(view.note ? { ...tool, description: `${tool.description} ${view.note}` } : tool);
  }
  return out;
}
