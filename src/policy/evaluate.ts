// Deciding one call against the policy (docs/approvals.md): the rules in order, the first that matches decides, and
// none matching allows (without a policy nothing needs approval). Paths are the real paths after sandbox
// resolution, so a symlink or `a/../SOUL.md` meets the same rule as `SOUL.md`; whatever still looks like a
// way out of the root is denied here too, in case a caller passes an unresolved path by mistake.
import path from 'node:path';
import picomatch from 'picomatch';
import { ToolError, type Risk } from '../envelope.js';
import { E } from '../errors.js';
import { GLOB_OPTIONS } from './policy-error.js';
import type { Policy, PolicyAction, PolicyRule } from './policy-file.js';

/** Switch name -> on. */
export type SwitchStates = Readonly<Record<string, boolean>>;

export interface EvaluateInput {
  tool: string;
  risk: Risk;
  /** Real path relative to the project root after sandbox resolution ('.' for the root); null: the call names no path. */
  realRel: string | null;
  /** The file exists and has an execute bit (rules with `executable: true`). */
  isExecutable?: boolean;
  /**
   * `tree`: the call acts on everything under realRel (deleting or moving a directory), so a rule about any
   * file inside counts. Default `path`: only realRel itself (and the directories above it) count.
   */
  scope?: 'path' | 'tree';
  /** From resolveSwitches (defaults included). */
  switches: SwitchStates;
  /**
   * The words of the command the call runs (run_command), for rules with `commands:`; null when it is not
   * plain words (shell syntax: it matches no such rule); absent for tools that run no command.
   */
  command?: readonly string[] | null;
}

export interface RuleRef {
  index: number;
  name?: string;
  description?: string;
}

export interface PolicyDecision {
  decision: PolicyAction;
  /** The rule that decided (absent when none matched). */
  rule?: RuleRef;
  /** When the rule applied because of a switch: its name and current state. */
  switch?: { name: string; on: boolean };
  /** For `deny`: the ACCESS_DENIED message, naming the rule or the switch. */
  message?: string;
}

const ALLOW: PolicyDecision = { decision: 'allow' };
const WEIGHT: Record<PolicyAction, number> = { allow: 0, ask: 1, deny: 2 };

/** Decides one call. `policy` null: no policy file, everything is allowed here (token risks still apply elsewhere). */
export function evaluate(policy: Policy | null, input: EvaluateInput): PolicyDecision {
  if (!policy) return ALLOW;
  const rel = input.realRel === null ? null : normalizeRealRel(input.realRel);
  if (rel === undefined) {
    return { decision: 'deny', message: `The path '${input.realRel}' is not inside the project root, so no policy rule can allow it.` };
  }
  if (input.scope === 'tree' && rel !== null) return evaluateTree(policy, input, rel);
  for (const rule of policy.rules) {
    if (!appliesTo(rule, input)) continue;
    if (rule.executable && input.isExecutable !== true) continue;
    if (rel === null ? rule.paths !== null : !rule.matchPath(rel)) continue;
    return decided(rule, input, rel);
  }
  return ALLOW;
}

/** The most restrictive of several decisions (a move checks its source and its destination): deny > ask > allow. */
export function strictest(decisions: readonly PolicyDecision[]): PolicyDecision {
  let worst = ALLOW;
  for (const d of decisions) if (WEIGHT[d.decision] > WEIGHT[worst.decision]) worst = d;
  return worst;
}

/** The ToolError for a denial (ACCESS_DENIED, message naming the rule or switch); null when not denied. */
export function denialError(d: PolicyDecision): ToolError | null {
  if (d.decision !== 'deny') return null;
  return E.policyDenied(d.message, d.rule ? (d.rule.name ?? d.rule.index) : undefined, d.switch?.name);
}

/**
 * `a/../b` -> `b`, `./x` -> `x`; undefined when it is absolute or climbs out (never the case for a path the
 * sandbox resolved, so such input is refused rather than guessed at).
 */
export function normalizeRealRel(realRel: string): string | undefined {
  if (realRel.includes('\\') || realRel.includes('\0')) return undefined;
  if (realRel.startsWith('/')) return undefined;
  const n = path.posix.normalize(realRel === '' ? '.' : realRel).replace(/\/+$/, '');
  if (n === '..' || n.startsWith('../')) return undefined;
  return n === '' ? '.' : n;
}

function appliesTo(rule: PolicyRule, input: Pick<EvaluateInput, 'tool' | 'risk' | 'switches' | 'command'>): boolean {
  if (rule.tools && !rule.tools.includes(input.tool)) return false;
  if (rule.commands) {
    const words = input.command;
    if (!words || !rule.commands.some((p) => commandMatches(p, words))) return false;
  }
  if (rule.risks && !rule.risks.includes(input.risk)) return false;
  if (rule.when) {
    for (const [name, on] of Object.entries(rule.when)) if ((input.switches[name] ?? false) !== on) return false;
  }
  return true;
}

/** A `commands:` pattern against a command's words: equal word by word; a last `*` stands for any further words. */
export function commandMatches(pattern: readonly string[], words: readonly string[]): boolean {
  if (pattern[pattern.length - 1] === '*') {
    const prefix = pattern.slice(0, -1);
    return words.length >= prefix.length && prefix.every((w, i) => w === words[i]);
  }
  return pattern.length === words.length && pattern.every((w, i) => w === words[i]);
}

function ruleRef(rule: PolicyRule): RuleRef {
  return { index: rule.index, ...(rule.name !== undefined && { name: rule.name }), ...(rule.description !== undefined && { description: rule.description }) };
}

function decided(rule: PolicyRule, input: EvaluateInput, rel: string | null): PolicyDecision {
  const base: PolicyDecision = { decision: rule.action, rule: ruleRef(rule) };
  const sw = rule.when ? Object.keys(rule.when)[0] : undefined;
  if (sw !== undefined) base.switch = { name: sw, on: input.switches[sw] ?? false };
  if (rule.action !== 'deny') return base;
  if (base.switch) {
    // The wording docs/approvals.md gives: "USER.md is available only while the memory switch is on."
    const what = rel === null ? input.tool : rel === '.' ? 'The project root' : rel;
    const needed = base.switch.on ? 'off' : 'on';
    base.message = `${what} is available only while the ${base.switch.name} switch is ${needed}.`;
  } else {
    const which = rule.name !== undefined ? `'${rule.name}'` : `#${rule.index + 1}`;
    const why = rule.description ? ` (${rule.description})` : '';
    const target = rel === null ? 'this call' : rel === '.' ? 'the project root' : `'${rel}'`;
    base.message = `Policy rule ${which}${why} denies ${input.tool} on ${target}.`;
  }
  return base;
}

/**
 * A call on a whole directory: every rule that may match something inside counts, the strictest wins, and a
 * rule that covers the whole directory shadows the rules after it (as it would for each file inside).
 */
function evaluateTree(policy: Policy, input: EvaluateInput, dir: string): PolicyDecision {
  let worst: PolicyDecision = ALLOW;
  for (const rule of policy.rules) {
    if (!appliesTo(rule, input)) continue;
    const coverage = treeCoverage(rule, dir);
    if (coverage === 'none') continue;
    const d = decided(rule, input, dir);
    if (WEIGHT[d.decision] > WEIGHT[worst.decision]) worst = d;
    // An executable-only rule covers only some files, however broad its paths.
    if (coverage === 'all' && !rule.executable) return worst === ALLOW ? d : worst;
  }
  return worst;
}

type Coverage = 'none' | 'some' | 'all';

function treeCoverage(rule: PolicyRule, dir: string): Coverage {
  if (rule.paths === null) return 'all';
  if (rule.matchPath(dir)) return 'all';
  return rule.paths.some((g) => mayMatchInside(g, dir)) ? 'some' : 'none';
}

/**
 * Whether a glob can match something inside `dir`: its segments are compared with dir's one by one; a `**`
 * or running out of dir's segments first means yes. Braces or extglobs spanning a '/' are answered yes (on
 * the safe side) since they cannot be split into segments.
 */
export function mayMatchInside(glob: string, dir: string): boolean {
  if (dir === '.' || dir === '') return true;
  if (/[{(][^})]*\/[^})]*[})]/.test(glob)) return true;
  const gs = glob.split('/');
  const ds = dir.split('/');
  for (let i = 0; i < ds.length; i++) {
    const g = gs[i];
    if (g === undefined) return false;
    if (g === '**') return true;
    if (!picomatch.isMatch(ds[i]!, g, GLOB_OPTIONS)) return false;
  }
  return true;
}

// --- Switches -------------------------------------------------------------------------------------------

const ON = new Set(['on', 'true', '1', 'yes']);
const OFF = new Set(['off', 'false', '0', 'no']);

/**
 * The switch states of one call: the policy's defaults, overridden by the caller's header value
 * (`memory=on, verbose=off`; repeated headers arrive as an array). An unknown switch, a bad value or a
 * switch given twice is INVALID_PARAM naming it.
 */
export function resolveSwitches(policy: Policy | null, header: string | readonly string[] | undefined): Record<string, boolean> {
  const states: Record<string, boolean> = {};
  for (const sw of policy?.switches.values() ?? []) states[sw.name] = sw.default;
  const raw = Array.isArray(header) ? header.join(',') : ((header as string | undefined) ?? '');
  const seen = new Set<string>();
  for (const part of raw.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    const name = (eq < 0 ? item : item.slice(0, eq)).trim().toLowerCase();
    const value = eq < 0 ? '' : item.slice(eq + 1).trim().toLowerCase();
    const declared = policy ? [...policy.switches.keys()] : [];
    if (!policy?.switches.has(name)) {
      const shown = name.length > 40 ? `${name.slice(0, 40)}…` : name;
      throw E.switchUnknown(shown, declared);
    }
    if (seen.has(name)) throw E.switchTwice(name);
    seen.add(name);
    if (ON.has(value)) states[name] = true;
    else if (OFF.has(value)) states[name] = false;
    else throw E.switchNoValue(name);
  }
  return states;
}

// --- Tool listing ---------------------------------------------------------------------------------------

export interface ToolPolicyView {
  /** The caller may not use this tool at all with these switches: GET /v1/tools leaves it out. */
  hidden: boolean;
  /** The rule that hides it. */
  hiddenBy?: RuleRef;
  /** Path globs for which a call of this tool asks for approval (in rule order); ['**'] style for pathless rules. */
  askPaths: string[];
  /** Path globs this tool is denied on. */
  denyPaths: string[];
  /** One sentence for the tool's description, or null when the policy says nothing about this tool. */
  note: string | null;
}

/**
 * What the policy means for one tool in a listing for this caller. A tool is hidden only when every call
 * would be denied: an applicable rule without paths (or with `**`) that denies, before any applicable rule
 * that could allow or ask for some path.
 */
export function toolPolicyView(policy: Policy | null, tool: { name: string; risk: Risk }, switches: SwitchStates): ToolPolicyView {
  const view: ToolPolicyView = { hidden: false, askPaths: [], denyPaths: [], note: null };
  if (!policy) return view;
  let everyPathSoFarDenied = true;
  for (const rule of policy.rules) {
    // A rule about named commands decides some calls only: it neither hides the tool nor ends the listing.
    if (rule.commands) {
      if (rule.action !== 'deny' && appliesTo({ ...rule, commands: null }, { tool: tool.name, risk: tool.risk, switches })) everyPathSoFarDenied = false;
      continue;
    }
    if (!appliesTo(rule, { tool: tool.name, risk: tool.risk, switches })) continue;
    const coversAll = !rule.executable && (rule.paths === null || rule.paths.includes('**'));
    const globs = rule.paths ?? ['**'];
    if (rule.action === 'ask') view.askPaths.push(...globs.map((g) => (rule.executable ? `${g} (executable files)` : g)));
    if (rule.action === 'deny') view.denyPaths.push(...globs.map((g) => (rule.executable ? `${g} (executable files)` : g)));
    if (rule.action !== 'deny') everyPathSoFarDenied = false;
    if (coversAll) {
      if (rule.action === 'deny' && everyPathSoFarDenied) {
        view.hidden = true;
        view.hiddenBy = ruleRef(rule);
      }
      break; // later rules never decide anything for this tool
    }
  }
  view.askPaths = [...new Set(view.askPaths)];
  view.denyPaths = [...new Set(view.denyPaths)];
  const parts: string[] = [];
  if (view.askPaths.length > 0) parts.push(`Asks for approval on: ${view.askPaths.join(', ')}.`);
  if (view.denyPaths.length > 0 && !view.hidden) parts.push(`Not allowed on: ${view.denyPaths.join(', ')}.`);
  view.note = parts.length > 0 ? parts.join(' ') : null;
  return view;
}
