// The gate's shortcut (src/policy/decisions.ts, unruled): a call no rule can decide runs as without a policy. For
// every tool, under policies with rules on some tools, risks, switches, commands and executables: wherever the
// shortcut is taken, walking the rules decides `allow` for every path, kind of entry and switch state the call
// could meet, as the call itself, as a dry run or view decided like a read, and on a whole tree.
import type { Stats } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PolicyDecisions } from '../../src/policy/decisions.js';
import { evaluate, type SwitchStates } from '../../src/policy/evaluate.js';
import { parsePolicy, type Policy } from '../../src/policy/policy-file.js';
import type { ToolDefinition } from '../../src/tools/define.js';
import { TOOLS } from '../../src/tools/registry.js';
import type { ResolvedPath } from '../../src/workspace/sandbox.js';

const toolNames = new Map(TOOLS.flatMap((t) => [t.name, ...(t.aliases ?? [])].map((n) => [n, t.name] as const)));
const policy = (yaml: string): Policy => parsePolicy(yaml, 'test.yaml', { toolNames });

const POLICIES: Record<string, Policy> = {
  'no rules': policy('rules: []\n'),
  'writes and removals': policy(`
rules:
  - { name: soul, paths: [SOUL.md], risks: [write, destructive], action: ask }
  - { tools: [delete_file], paths: ['keep/**'], action: deny }
`),
  'one tool, by alias': policy(`
rules:
  - { tools: [write], paths: ['**/*.lock'], action: deny }
`),
  'reading asks': policy(`
rules:
  - { tools: [read_file], paths: ['.env', 'secrets/**'], action: ask }
`),
  'a switch': policy(`
switches:
  memory: off
rules:
  - { paths: [MEMORY.md], risks: [read], when: { memory: off }, action: deny }
`),
  'commands and executables': policy(`
rules:
  - { commands: ['git push *'], action: ask }
  - { paths: ['bin/**'], executable: true, risks: [write], action: deny }
`),
  'everything': policy(`
rules:
  - { paths: [secrets], action: deny }
`),
};

function stats(kind: 'file' | 'exec' | 'dir'): Stats {
  return { isFile: () => kind !== 'dir', isDirectory: () => kind === 'dir', mode: kind === 'exec' ? 0o755 : 0o644 } as unknown as Stats;
}

/** Paths a call may resolve, each as a file, an executable file, a directory and a path not there yet. */
const PATHS = ['.', 'SOUL.md', 'keep/a.txt', 'keep', 'x.lock', 'a/b.lock', '.env', 'secrets', 'secrets/k.pem', 'MEMORY.md', 'bin/run', 'bin', 'notes.txt'];
const resolved: ResolvedPath[] = PATHS.flatMap((realRel) => (['file', 'exec', 'dir', null] as const).map((kind) => ({ realRel, rel: realRel, stat: kind && stats(kind) }) as unknown as ResolvedPath));

function switchStates(p: Policy): SwitchStates[] {
  let states: Record<string, boolean>[] = [{}];
  for (const name of p.switches.keys()) states = states.flatMap((s) => [{ ...s, [name]: true }, { ...s, [name]: false }]);
  return states;
}

/** The inputs a call of the tool is decided by: as it is, as a dry run, and (the text editor) as a view. */
function inputsOf(tool: ToolDefinition): Record<string, unknown>[] {
  const inputs: Record<string, unknown>[] = [{}, { dry_run: true }];
  if (tool.name === 'str_replace_based_edit_tool') inputs.push({ command: 'view' }, { command: 'str_replace' });
  return inputs;
}

describe('the gate decides a call no rule can match without walking the rules', () => {
  for (const [name, p] of Object.entries(POLICIES)) {
    it(`gives walking the rules' answer for every tool: ${name}`, () => {
      const d = new PolicyDecisions(p);
      let taken = 0;
      let walked = 0;
      for (const tool of TOOLS) {
        for (const input of inputsOf(tool)) {
          if (!d.unruled(tool, input)) {
            if (tool.risk !== 'execute') walked++;
            continue;
          }
          taken++;
          for (const switches of switchStates(p)) {
            for (const r of resolved) {
              const what = `${tool.name} ${JSON.stringify(input)} ${r.realRel} ${JSON.stringify(switches)}`;
              const dryRun = input.dry_run === true;
              const decision = dryRun ? d.decideDryRun(tool, r, switches, input) : tool.viewing?.(input) ? d.decideViewing(tool, r, switches, input) : d.decide(tool, r, switches, input);
              expect(decision, what).toEqual({ decision: 'allow' });
              expect(evaluate(p, { tool: tool.name, risk: tool.risk, realRel: r.realRel, scope: 'tree', switches }), what).toEqual({ decision: 'allow' });
              if (dryRun || tool.viewing?.(input)) expect(d.decideRead(r, switches), what).toEqual({ decision: 'allow' });
            }
          }
        }
      }
      // Every policy but the one ruling everything lets some calls skip the walk; a policy without rules, all but commands.
      if (name === 'no rules') expect(walked).toBe(0);
      else if (name === 'everything') expect(taken).toBe(0);
      else expect(taken).toBeGreaterThan(0);
      if (name !== 'no rules') expect(walked).toBeGreaterThan(0);
    });
  }

  it('never skips a command, whose changes are decided as writes and removals', () => {
    const d = new PolicyDecisions(POLICIES['no rules'] as Policy);
    for (const tool of TOOLS.filter((t) => t.risk === 'execute')) expect(d.unruled(tool, {})).toBe(false);
  });
});
