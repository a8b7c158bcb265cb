// The policy file (docs/approvals.md, TOOLGATE_POLICY): YAML read and validated once at start-up. Every problem is a
// PolicyError naming the file, the line and the column, because a policy that is half understood must stop
// the service rather than be ignored.
//
// Shape (all keys optional except each rule's `action`; unknown keys are refused):
//
//   switches:                      # named per-call switches (X-Toolgate-Switches: memory=on)
//     memory: { default: off, description: Long-term memory files }
//     verbose: on                  # shorthand for { default: on }
//   approvals:
//     ttl: 15m                     # how long a request stays open: 90s, 15m, 2h or a number of seconds
//   rules:                         # in order; the first rule that matches decides; none matching: allow
//     - name: soul                 # optional, named in denials
//       description: …             # optional
//       paths: [SOUL.md, 'notes/**'] # globs relative to the project root; absent: every call, pathless ones too
//       tools: [write_file]        # optional: only these tools (an alias such as `write` means its tool)
//       risks: [write, destructive] # optional: only these risk classes
//       when: { memory: off }      # optional: only while every named switch is in that state
//       commands: ['npm test', 'pytest -q *'] # optional: only run_command calls running one of these
//                                  # (words; a last word * stands for any further words; docs/run-command.md)
//       executable: true           # optional: only files with an execute bit
//       action: ask                # allow | ask | deny
//
// A glob that matches a directory covers everything inside it (as in .gitignore), so `secrets` protects
// `secrets/key.pem`; globs match dotfiles too, so `**` cannot be dodged with a leading dot.
import fs from 'node:fs/promises';
import picomatch from 'picomatch';
import { isMap, LineCounter, parseDocument, type Document, type Node as YamlNode } from 'yaml';
import { z } from 'zod';
import { RISKS, type Risk } from '../envelope.js';
import { GLOB_OPTIONS, PolicyError } from './policy-error.js';

export type PolicyAction = 'allow' | 'ask' | 'deny';
export const POLICY_ACTIONS = ['allow', 'ask', 'deny'] as const;

/** Default time an approval request stays open (docs/approvals.md). */
export const DEFAULT_APPROVAL_TTL_MS = 15 * 60 * 1000;

export { GLOB_OPTIONS, PolicyError } from './policy-error.js';

/** Why a glob is refused, or null when it is usable. */
export function globProblem(glob: string): string | null {
  if (glob.length === 0) return 'an empty glob matches nothing';
  if (glob.includes('\0')) return 'a glob must not contain a NUL byte';
  if (glob.startsWith('/')) return `glob '${glob}' is absolute; globs are relative to the project root`;
  if (/^[A-Za-z]:/.test(glob)) return `glob '${glob}' is absolute; globs are relative to the project root`;
  // Paths never hold backslashes in toolgate (the sandbox refuses them), so one here is a mistake or an escape
  // that would read differently to the operator than to picomatch.
  if (glob.includes('\\')) return `glob '${glob}' contains a backslash; use '/' between segments and [*] for a literal *`;
  if (glob.startsWith('!') && !glob.startsWith('!(')) return `glob '${glob}' is negated; negation is not supported, order the rules instead`;
  const segments = glob.split('/');
  if (segments.includes('..')) return `glob '${glob}' contains '..'; a rule cannot reach outside the project root`;
  if (segments.includes('.')) return `glob '${glob}' contains a '.' segment; write the path without it`;
  if (segments.some((s) => s === '')) return `glob '${glob}' has an empty segment (a doubled or trailing '/')`;
  let source: string;
  try {
    source = picomatch.makeRe(glob, GLOB_OPTIONS).source;
  } catch (err) {
    return `glob '${glob}' is malformed: ${(err as Error).message}`;
  }
  // picomatch compiles an impossible pattern (a reversed range like [z-a]) to a regex that matches nothing.
  if (source === '$^') return `glob '${glob}' can never match (a reversed range?)`;
  return null;
}

const Glob = z.string().superRefine((glob, ctx) => {
  const problem = globProblem(glob);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const SWITCH_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const SwitchName = z.string().regex(SWITCH_NAME, 'a switch name is lower case letters, digits, _ and - (at most 32)');
/** on/off; YAML 1.2 reads `on` as a string, `true` as a boolean: both are accepted. */
const SwitchState = z.union([z.boolean(), z.enum(['on', 'off'])], { error: 'a switch state is on or off' }).transform((v) => v === true || v === 'on');

const SwitchDecl = z.union([
  SwitchState.transform((d) => ({ default: d, description: undefined as string | undefined })),
  z.strictObject({ default: SwitchState, description: z.string().optional() }),
]);

// Tool names are snake_case; aliases may also carry capitals and '-' (`Write`, `file-write`).
const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

const RuleSchema = z.strictObject({
  name: z.string().min(1).max(100).optional(),
  description: z.string().max(1000).optional(),
  paths: z.array(Glob).min(1, 'paths needs at least one glob (leave it out to match every path)').optional(),
  tools: z.array(z.string().regex(TOOL_NAME, 'a tool name is letters, digits, _ and - (e.g. write_file)')).min(1).optional(),
  risks: z.array(z.enum(RISKS)).min(1).optional(),
  when: z.record(SwitchName, SwitchState).optional(),
  commands: z.array(z.string().trim().min(1, 'a command pattern is words, like npm test').max(1000)).min(1).optional(),
  executable: z.literal(true, { error: 'executable can only be true (leave it out otherwise)' }).optional(),
  action: z.enum(POLICY_ACTIONS, { error: 'action must be allow, ask or deny' }),
});

const DURATION = /^(\d+)\s*(ms|s|m|h)?$/;
const Duration = z
  .union([z.number().int().positive(), z.string().regex(DURATION, 'a duration is like 90s, 15m or 2h')])
  .transform((v) => {
    if (typeof v === 'number') return v * 1000;
    const [, n, unit] = DURATION.exec(v)!;
    const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit ?? 's']!;
    return Number(n) * factor;
  })
  .refine((ms) => ms >= 1000 && ms <= 7 * 24 * 3_600_000, 'the approval ttl must be between 1 second and 7 days');

const PolicySchema = z.strictObject({
  switches: z.record(SwitchName, SwitchDecl).optional(),
  approvals: z.strictObject({ ttl: Duration.optional() }).optional(),
  rules: z.array(RuleSchema).optional(),
});

export interface SwitchDefinition {
  name: string;
  default: boolean;
  description?: string;
}

export interface PolicyRule {
  /** Position in `rules` (0-based). */
  index: number;
  /** Line of the rule in the file, for messages. */
  line: number;
  name?: string;
  description?: string;
  /** null: the rule matches every call, including calls that name no path. */
  paths: readonly string[] | null;
  tools: readonly string[] | null;
  risks: readonly Risk[] | null;
  /** run_command lines this rule is about (`commands:`), each a list of words; null: any call. */
  commands: readonly (readonly string[])[] | null;
  /** Switch name -> state (true = on) that must hold for the rule to apply. */
  when: Readonly<Record<string, boolean>> | null;
  executable: boolean;
  action: PolicyAction;
  /** Compiled `paths`: does this glob list match the path (or a directory above it)? */
  matchPath: (realRel: string) => boolean;
}

export interface Policy {
  file: string;
  rules: readonly PolicyRule[];
  switches: ReadonlyMap<string, SwitchDefinition>;
  approvalTtlMs: number;
}

export interface LoadPolicyOptions {
  /** Tool names the service knows (aliases included): a rule naming another one is an error. */
  knownTools?: readonly string[];
  /**
   * Every name a call may use (tool names and their aliases) -> the tool's own name. Rules are matched
   * against the tool a call runs, so an alias in `tools` is stored as its tool; a name not here is an error.
   */
  toolNames?: ReadonlyMap<string, string>;
}

/** Reads and validates the policy file; throws PolicyError. */
export async function loadPolicy(file: string, opts: LoadPolicyOptions = {}): Promise<Policy> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new PolicyError(file, 0, 0, `cannot read the policy file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return parsePolicy(text, file, opts);
}

/** Validates policy text; `file` is only used in messages. */
export function parsePolicy(text: string, file: string, opts: LoadPolicyOptions = {}): Policy {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const at = (offset: number): [number, number] => {
    const pos = lineCounter.linePos(offset);
    return [pos.line, pos.col];
  };
  const firstError = doc.errors[0];
  if (firstError) {
    const [line, col] = at(firstError.pos[0]);
    throw new PolicyError(file, line, col, `invalid YAML: ${firstLine(firstError.message)}`);
  }
  const raw: unknown = doc.toJS({ maxAliasCount: 100 });
  if (raw === null || raw === undefined) throw new PolicyError(file, 1, 1, 'the policy file is empty; give at least `rules: []`');
  const parsed = PolicySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [line, col, problem] = locateIssue(doc, at, issue);
    throw new PolicyError(file, line, col, problem);
  }
  const data = parsed.data;

  const switches = new Map<string, SwitchDefinition>();
  for (const [name, decl] of Object.entries(data.switches ?? {})) {
    switches.set(name, { name, default: decl.default, ...(decl.description !== undefined && { description: decl.description }) });
  }
  const known = opts.toolNames ?? (opts.knownTools ? new Map(opts.knownTools.map((t) => [t, t])) : null);
  const names = new Set<string>();
  const rules = (data.rules ?? []).map((r, index): PolicyRule => {
    const where = (key: string[], problem: string): PolicyError => {
      const [line, col] = at(nodeOffset(doc, ['rules', index, ...key]));
      return new PolicyError(file, line, col, problem);
    };
    const whereKey = (mapPath: string[], key: string, problem: string): PolicyError => {
      const [line, col] = at(keyOffset(doc, ['rules', index, ...mapPath], key));
      return new PolicyError(file, line, col, problem);
    };
    for (const sw of Object.keys(r.when ?? {})) {
      if (!switches.has(sw)) throw whereKey(['when'], sw, `rule uses switch '${sw}', which is not declared under switches`);
    }
    const tools = r.tools?.map((t, i) => {
      if (!known) return t;
      const canonical = known.get(t);
      if (canonical === undefined) throw where(['tools', String(i)], `unknown tool '${t}'`);
      return canonical;
    });
    // `commands:` is about run_command calls only: with a tool list that leaves it out the rule could never match.
    if (r.commands && tools && !tools.includes('run_command')) throw where(['commands'], "commands: only matches run_command calls; add run_command to tools or leave tools out");
    if (r.name !== undefined) {
      if (names.has(r.name)) throw where(['name'], `rule name '${r.name}' is used twice; names must be unique`);
      names.add(r.name);
    }
    const [line] = at(nodeOffset(doc, ['rules', index]));
    return {
      index,
      line,
      ...(r.name !== undefined && { name: r.name }),
      ...(r.description !== undefined && { description: r.description }),
      paths: r.paths ?? null,
      tools: tools ? [...new Set(tools)] : null,
      risks: r.risks ?? null,
      commands: r.commands ? r.commands.map((c) => c.split(/\s+/)) : null,
      when: r.when ?? null,
      executable: r.executable === true,
      action: r.action,
      matchPath: r.paths ? compilePaths(r.paths) : () => true,
    };
  });
  return { file: file, rules, switches, approvalTtlMs: data.approvals?.ttl ?? DEFAULT_APPROVAL_TTL_MS };
}

/** A matcher for a glob list: the path itself or one of its parent directories matches one of the globs. */
export function compilePaths(globs: readonly string[]): (realRel: string) => boolean {
  const isMatch = picomatch([...globs], GLOB_OPTIONS);
  const wholeTree = globs.includes('**');
  return (realRel) => {
    if (realRel === '.' || realRel === '') return wholeTree;
    if (isMatch(realRel)) return true;
    for (let i = realRel.lastIndexOf('/'); i > 0; i = realRel.lastIndexOf('/', i - 1)) {
      if (isMatch(realRel.slice(0, i))) return true;
    }
    return false;
  };
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}

type IssueLike = z.core.$ZodIssue;

/** Line, column and wording of a schema issue, pointing at the offending key or value. */
function locateIssue(doc: Document, at: (offset: number) => [number, number], issue: IssueLike): [number, number, string] {
  const p = issue.path.map((k) => (typeof k === 'number' ? k : String(k)));
  const where = p.length > 0 ? ` at ${p.join('.')}` : '';
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    const [line, col] = at(keyOffset(doc, p, key));
    const allowed = allowedKeysAt(p);
    return [line, col, `unknown key '${key}'${where}${allowed ? ` (allowed: ${allowed})` : ''}`];
  }
  const [line, col] = at(nodeOffset(doc, p));
  return [line, col, `${issue.message}${where}`];
}

function allowedKeysAt(p: (string | number)[]): string | null {
  if (p.length === 0) return 'switches, approvals, rules';
  if (p[0] === 'rules' && p.length === 2) return Object.keys(RuleSchema.shape).join(', ');
  if (p[0] === 'approvals' && p.length === 1) return 'ttl';
  if (p[0] === 'switches' && p.length === 2) return 'default, description';
  return null;
}

/** Start offset of the node at `p`, or of its nearest existing ancestor (a missing key points at its map). */
function nodeOffset(doc: Document, p: (string | number)[]): number {
  for (let n = p.length; n >= 0; n--) {
    const node = (n === 0 ? doc.contents : doc.getIn(p.slice(0, n).map(asKey), true)) as YamlNode | null | undefined;
    if (node && typeof node === 'object' && 'range' in node && node.range) return node.range[0];
  }
  return 0;
}

/** Offset of `key` in the map at `p` (the key itself, so the message points at the word to fix). */
function keyOffset(doc: Document, p: (string | number)[], key: string): number {
  const map = p.length === 0 ? doc.contents : doc.getIn(p.map(asKey), true);
  if (isMap(map)) {
    for (const pair of map.items) {
      const k = pair.key as YamlNode | null;
      if (k && 'value' in k && String((k as { value: unknown }).value) === key && k.range) return k.range[0];
    }
  }
  return nodeOffset(doc, p);
}

/** Sequence indexes arrive as strings from zod's record/array paths; the yaml API wants numbers for sequences. */
function asKey(k: string | number): string | number {
  return typeof k === 'string' && /^\d+$/.test(k) ? Number(k) : k;
}
