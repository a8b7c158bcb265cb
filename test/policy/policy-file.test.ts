// The policy file is validated at start-up: every refusal names the file, the line, the column and the problem.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { globProblem, loadPolicy, parsePolicy, PolicyError } from '../../src/policy/policy-file.js';
import { makeTempDir } from '../helpers.js';

const examples = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../examples/policies');

function refusal(text: string, opts?: Parameters<typeof parsePolicy>[2]): PolicyError {
  try {
    parsePolicy(text, 'policy.yaml', opts);
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyError);
    return err as PolicyError;
  }
  throw new Error('the policy was accepted');
}

describe('policy file: accepted shapes', () => {
  it('reads rules, switches (long and short form) and the approval ttl', () => {
    const p = parsePolicy(
      ['switches:', '  memory: { default: off, description: memory files }', '  verbose: on', 'approvals:', '  ttl: 2m', 'rules:', '  - paths: [SOUL.md]', '    action: ask', ''].join('\n'),
      'p.yaml',
    );
    expect(p.switches.get('memory')).toEqual({ name: 'memory', default: false, description: 'memory files' });
    expect(p.switches.get('verbose')).toEqual({ name: 'verbose', default: true });
    expect(p.approvalTtlMs).toBe(120_000);
    expect(p.rules).toHaveLength(1);
    expect(p.rules[0]).toMatchObject({ index: 0, line: 7, action: 'ask', paths: ['SOUL.md'], tools: null, risks: null, when: null, executable: false });
  });

  it('defaults the approval ttl to 15 minutes and accepts seconds as a number', () => {
    expect(parsePolicy('rules: []\n', 'p.yaml').approvalTtlMs).toBe(15 * 60 * 1000);
    expect(parsePolicy('approvals: { ttl: 90 }\n', 'p.yaml').approvalTtlMs).toBe(90_000);
  });

  it.each(['assistant.yaml', 'ide.yaml', 'system-tools.yaml'])('the shipped example %s loads', async (name) => {
    const p = await loadPolicy(path.join(examples, name), { knownTools: ['read_file', 'write_file', 'run_command'] });
    expect(p.rules.length).toBeGreaterThan(0);
  });
});

describe('policy file: refusals name file, line and column', () => {
  it('bad YAML', () => {
    const e = refusal('rules:\n  - paths: [a\n    action: allow\n');
    expect(e.file).toBe('policy.yaml');
    expect(e.line).toBe(3);
    expect(e.message).toMatch(/^policy\.yaml:3:\d+: invalid YAML: /);
  });

  it('a duplicate key', () => {
    const e = refusal('rules: []\nrules: []\n');
    expect([e.line, e.column]).toEqual([2, 1]);
    expect(e.problem).toMatch(/invalid YAML: .*unique/i);
  });

  it('an unknown top-level key points at the key', () => {
    const e = refusal('rules: []\n\npolicies:\n  - x\n');
    expect([e.line, e.column]).toEqual([3, 1]);
    expect(e.problem).toMatch(/^unknown key 'policies' \(allowed: switches, approvals, rules\)$/);
  });

  it('an unknown key inside a rule points at that key', () => {
    const e = refusal(['rules:', '  - paths: [SOUL.md]', '    action: ask', '    decision: deny', ''].join('\n'));
    expect([e.line, e.column]).toEqual([4, 5]);
    expect(e.problem).toMatch(/^unknown key 'decision' at rules\.0 \(allowed: name, description, paths, tools, risks, when, commands, executable, action\)$/);
    expect(e.message).toBe(`policy.yaml:4:5: ${e.problem}`);
  });

  it('a bad action points at the value', () => {
    const e = refusal(['rules:', '  - paths: [SOUL.md]', '    action: maybe', ''].join('\n'));
    expect([e.line, e.column]).toEqual([3, 13]);
    expect(e.problem).toBe('action must be allow, ask or deny at rules.0.action');
  });

  it('a missing action points at the rule', () => {
    const e = refusal(['rules:', '  - paths: [SOUL.md]', '  - paths: [x]', ''].join('\n'));
    expect(e.line).toBe(2);
    expect(e.problem).toMatch(/at rules\.0\.action$/);
  });

  it.each([
    ['/etc/passwd', /is absolute/],
    ['C:/x', /is absolute/],
    ['notes/../SOUL.md', /contains '\.\.'/],
    ['../outside', /contains '\.\.'/],
    ['./SOUL.md', /'\.' segment/],
    ['a//b', /empty segment/],
    ['dir/', /empty segment/],
    ['src/[abc', /malformed/],
    ['src/{a,b', /malformed/],
    ['x/[z-a]', /can never match/],
    ['!secret', /negated/],
    ['a\\*', /backslash/],
  ])('a bad glob %s is refused at its line', (glob, problem) => {
    const e = refusal(['rules:', '  - action: deny', '    paths:', '      - ok/**', `      - ${JSON.stringify(glob)}`, ''].join('\n'));
    expect([e.line, e.column]).toEqual([5, 9]);
    expect(e.problem).toMatch(problem);
    expect(e.problem).toMatch(/at rules\.0\.paths\.1$/);
  });

  it('good globs pass', () => {
    for (const g of ['**', 'SOUL.md', 'src/**/*.ts', '**/.git', '*.{md,txt}', 'memory/[0-9]*.md', '!(x)']) expect(globProblem(g)).toBeNull();
  });

  it('a bad risk, a bad switch state, a bad ttl', () => {
    expect(refusal('rules:\n  - risks: [run]\n    action: ask\n')).toMatchObject({ line: 2, column: 13 });
    expect(refusal('switches:\n  memory: maybe\n')).toMatchObject({ line: 2, column: 11 });
    expect(refusal('approvals:\n  ttl: soon\n')).toMatchObject({ line: 2, column: 8 });
  });

  it('a `when` naming an undeclared switch', () => {
    const e = refusal(['switches: { memory: off }', 'rules:', '  - paths: [USER.md]', '    when: { memroy: off }', '    action: deny', ''].join('\n'));
    expect([e.line, e.column]).toEqual([4, 13]);
    expect(e.problem).toBe("rule uses switch 'memroy', which is not declared under switches");
  });

  it('an unknown tool when the known tools are given', () => {
    const e = refusal(['rules:', '  - tools: [read_file, rm_rf]', '    action: deny', ''].join('\n'), { knownTools: ['read_file'] });
    expect([e.line, e.column]).toEqual([2, 24]);
    expect(e.problem).toBe("unknown tool 'rm_rf'");
  });

  it('an alias in tools is stored as its tool; an unknown name is refused where it stands', () => {
    const toolNames = new Map([
      ['write_file', 'write_file'],
      ['write', 'write_file'],
      ['Write', 'write_file'],
      ['file-write', 'write_file'],
      ['edit_file', 'edit_file'],
      ['edit', 'edit_file'],
    ]);
    const p = parsePolicy('rules:\n  - tools: [write, Write, file-write, edit]\n    action: deny\n', 'p.yaml', { toolNames });
    expect(p.rules[0]?.tools).toEqual(['write_file', 'edit_file']);
    const e = refusal('rules:\n  - tools: [edit, Edit]\n    action: deny\n', { toolNames });
    expect([e.line, e.column, e.problem]).toEqual([2, 19, "unknown tool 'Edit'"]);
  });

  it('a rule name used twice', () => {
    const e = refusal(['rules:', '  - name: a', '    action: allow', '  - name: a', '    action: deny', ''].join('\n'));
    expect([e.line, e.column]).toEqual([4, 11]);
  });

  it('an empty file is refused, not read as "no policy"', () => {
    expect(refusal('# nothing\n')).toMatchObject({ line: 1, problem: expect.stringMatching(/empty/) });
  });

  it('a file that is not a mapping', () => {
    expect(refusal('- a\n- b\n')).toMatchObject({ line: 1, column: 1 });
  });

  it('an unreadable file names the file', async () => {
    const dir = await makeTempDir();
    const file = path.join(dir, 'missing.yaml');
    await expect(loadPolicy(file)).rejects.toMatchObject({ file, line: 0, message: `${file}: cannot read the policy file (ENOENT)` });
    await fs.writeFile(file, 'rules:\n  - action: nope\n');
    await expect(loadPolicy(file)).rejects.toMatchObject({ message: `${file}:2:13: action must be allow, ask or deny at rules.0.action` });
    await fs.rm(dir, { recursive: true, force: true });
  });
});
