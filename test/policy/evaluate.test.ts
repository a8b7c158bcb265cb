// Deciding calls against a policy: rule order, filters, switches, real paths, whole trees and tool listings.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError } from '../../src/envelope.js';
import { denialError, evaluate, mayMatchInside, normalizeRealRel, resolveSwitches, strictest, toolPolicyView, type EvaluateInput } from '../../src/policy/evaluate.js';
import { parsePolicy, type Policy } from '../../src/policy/policy-file.js';
import { HandleScope, resolveInWorkspace } from '../../src/workspace/sandbox.js';
import { closeWorkspace, type Workspace } from '../../src/workspace/workspace.js';
import { makeTempDir, openTestWorkspace } from '../helpers.js';

const policy = (yaml: string): Policy => parsePolicy(yaml, 'test.yaml');

const ASSISTANT = policy(`
switches:
  memory: off
rules:
  - name: memory-off
    paths: [USER.md, MEMORY.md, memory]
    when: { memory: off }
    action: deny
  - name: soul
    paths: [SOUL.md]
    risks: [write, destructive]
    action: ask
  - name: secrets
    description: keys stay private
    paths: [secrets, '**/*.pem']
    action: deny
`);

const call = (over: Partial<EvaluateInput> & { realRel: string | null }): EvaluateInput => ({ tool: 'read_file', risk: 'read', switches: { memory: false }, ...over });

describe('evaluate: order and defaults', () => {
  it('no policy allows everything', () => {
    expect(evaluate(null, call({ realRel: 'SOUL.md', tool: 'delete_file', risk: 'destructive' }))).toEqual({ decision: 'allow' });
  });

  it('no matching rule allows', () => {
    expect(evaluate(ASSISTANT, call({ realRel: 'notes.md', tool: 'write_file', risk: 'write' }))).toEqual({ decision: 'allow' });
  });

  it('the first matching rule decides, later ones are not consulted', () => {
    const p = policy(`
rules:
  - { name: docs, paths: ['docs/**'], action: allow }
  - { name: all-md, paths: ['**/*.md'], action: deny }
  - { paths: ['**'], action: ask }
`);
    expect(evaluate(p, call({ realRel: 'docs/a.md' }))).toMatchObject({ decision: 'allow', rule: { index: 0, name: 'docs' } });
    expect(evaluate(p, call({ realRel: 'x/a.md' }))).toMatchObject({ decision: 'deny', rule: { index: 1, name: 'all-md' } });
    expect(evaluate(p, call({ realRel: 'x/a.txt' }))).toMatchObject({ decision: 'ask', rule: { index: 2 } });
  });

  it('tools and risks limit a rule', () => {
    expect(evaluate(ASSISTANT, call({ realRel: 'SOUL.md' }))).toEqual({ decision: 'allow' });
    expect(evaluate(ASSISTANT, call({ realRel: 'SOUL.md', tool: 'edit_file', risk: 'write' }))).toMatchObject({ decision: 'ask', rule: { name: 'soul' } });
    const p = policy(`rules:\n  - { tools: [search_files], action: deny }\n`);
    expect(evaluate(p, call({ realRel: 'a', tool: 'search_files' })).decision).toBe('deny');
    expect(evaluate(p, call({ realRel: 'a', tool: 'read_file' })).decision).toBe('allow');
  });

  it('a rule without paths covers pathless calls too; a rule with paths does not', () => {
    const p = policy(`rules:\n  - { paths: ['**'], action: deny }\n  - { risks: [read], action: ask }\n`);
    expect(evaluate(p, call({ realRel: null, tool: 'list_backups' })).decision).toBe('ask');
    expect(evaluate(p, call({ realRel: 'a.txt' })).decision).toBe('deny');
  });

  it('a denial names the rule (and its description)', () => {
    const d = evaluate(ASSISTANT, call({ realRel: 'keys/server.pem' }));
    expect(d).toMatchObject({ decision: 'deny', rule: { index: 2, name: 'secrets', description: 'keys stay private' } });
    expect(d.message).toBe("Policy rule 'secrets' (keys stay private) denies read_file on 'keys/server.pem'.");
    const unnamed = policy(`rules:\n  - { paths: [x], action: allow }\n  - { paths: [y], action: deny }\n`);
    expect(evaluate(unnamed, call({ realRel: 'y' })).message).toBe("Policy rule #2 denies read_file on 'y'.");
    const err = denialError(d);
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ code: 'ACCESS_DENIED', message: d.message, details: { rule: 'secrets' } });
    expect(denialError({ decision: 'ask' })).toBeNull();
  });

  it('a glob naming a directory covers what is inside; globs match dotfiles', () => {
    expect(evaluate(ASSISTANT, call({ realRel: 'secrets/deep/key.txt' })).decision).toBe('deny');
    expect(evaluate(ASSISTANT, call({ realRel: 'secrets' })).decision).toBe('deny');
    expect(evaluate(ASSISTANT, call({ realRel: 'secrets-public/x' })).decision).toBe('allow');
    const p = policy(`rules:\n  - { paths: ['**'], action: ask }\n`);
    expect(evaluate(p, call({ realRel: '.env' })).decision).toBe('ask');
    expect(evaluate(p, call({ realRel: 'a/.git/config' })).decision).toBe('ask');
    expect(evaluate(p, call({ realRel: '.' })).decision).toBe('ask');
  });

  it('executable: true applies only to files with an execute bit', () => {
    const p = policy(`rules:\n  - { paths: ['**'], executable: true, risks: [write], action: ask }\n`);
    expect(evaluate(p, call({ realRel: 'run.sh', tool: 'write_file', risk: 'write', isExecutable: true })).decision).toBe('ask');
    expect(evaluate(p, call({ realRel: 'run.sh', tool: 'write_file', risk: 'write', isExecutable: false })).decision).toBe('allow');
    expect(evaluate(p, call({ realRel: 'new.sh', tool: 'write_file', risk: 'write' })).decision).toBe('allow');
  });

  it('strictest: deny over ask over allow (a move checks both ends)', () => {
    const src = evaluate(ASSISTANT, call({ realRel: 'notes.md', tool: 'move_file', risk: 'write' }));
    const dst = evaluate(ASSISTANT, call({ realRel: 'SOUL.md', tool: 'move_file', risk: 'write' }));
    expect(strictest([src, dst])).toBe(dst);
    expect(strictest([])).toEqual({ decision: 'allow' });
  });
});

describe('evaluate: switches', () => {
  it('USER.md is denied while memory is off, with the documented wording, and allowed while on', () => {
    const off = evaluate(ASSISTANT, call({ realRel: 'USER.md', switches: resolveSwitches(ASSISTANT, undefined) }));
    expect(off).toMatchObject({ decision: 'deny', rule: { name: 'memory-off' }, switch: { name: 'memory', on: false } });
    expect(off.message).toBe('USER.md is available only while the memory switch is on.');
    expect(denialError(off)?.details).toEqual({ rule: 'memory-off', switch: 'memory' });
    const on = evaluate(ASSISTANT, call({ realRel: 'USER.md', tool: 'write_file', risk: 'write', switches: resolveSwitches(ASSISTANT, 'memory=on') }));
    expect(on).toEqual({ decision: 'allow' });
    expect(evaluate(ASSISTANT, call({ realRel: 'memory/today.md' })).message).toBe('memory/today.md is available only while the memory switch is on.');
  });

  it('SOUL.md is unaffected by the memory switch', () => {
    for (const sw of ['memory=on', 'memory=off']) {
      expect(evaluate(ASSISTANT, call({ realRel: 'SOUL.md', tool: 'write_file', risk: 'write', switches: resolveSwitches(ASSISTANT, sw) })).decision).toBe('ask');
    }
  });

  it('parses the header: defaults, spaces, case, arrays of headers', () => {
    const p = policy(`switches:\n  memory: off\n  verbose: on\n`);
    expect(resolveSwitches(p, undefined)).toEqual({ memory: false, verbose: true });
    expect(resolveSwitches(p, ' memory = ON , verbose=off ')).toEqual({ memory: true, verbose: false });
    expect(resolveSwitches(p, ['memory=on', 'verbose=0'])).toEqual({ memory: true, verbose: false });
    expect(resolveSwitches(p, ',,')).toEqual({ memory: false, verbose: true });
  });

  it.each([
    ['x=on', /^Unknown switch 'x' in X-Toolgate-Switches; this policy declares: memory, verbose\.$/],
    ['memory=on, x=off', /Unknown switch 'x'/],
    ['memory', /Switch 'memory' needs a value: memory=on or memory=off\./],
    ['memory=maybe', /needs a value/],
    ['memory=on,memory=off', /given twice/],
  ])('refuses %j with INVALID_PARAM naming the switch', (header, message) => {
    const p = policy(`switches:\n  memory: off\n  verbose: on\n`);
    let err: unknown;
    try {
      resolveSwitches(p, header);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).code).toBe('INVALID_PARAM');
    expect((err as ToolError).message).toMatch(message);
  });

  it('without a policy any switch is unknown', () => {
    expect(() => resolveSwitches(null, 'memory=on')).toThrow(/no switches are declared/);
    expect(resolveSwitches(null, undefined)).toEqual({});
  });
});

describe('evaluate: the real path decides, not the name the caller used', () => {
  let base: string;
  let ws: Workspace;
  const scope = new HandleScope();

  beforeAll(async () => {
    base = await makeTempDir();
    const root = path.join(base, 'ws');
    await fs.mkdir(path.join(root, 'notes'), { recursive: true });
    await fs.mkdir(path.join(root, 'secrets'));
    await fs.writeFile(path.join(root, 'SOUL.md'), 'persona\n');
    await fs.writeFile(path.join(root, 'USER.md'), 'user\n');
    await fs.writeFile(path.join(root, 'secrets', 'key.txt'), 'k\n');
    await fs.symlink('SOUL.md', path.join(root, 'persona.md'));
    await fs.symlink('../USER.md', path.join(root, 'notes', 'me.md'));
    await fs.symlink('secrets', path.join(root, 'vault'));
    ws = await openTestWorkspace(root, 'policy-test');
  });

  afterAll(async () => {
    scope.close();
    closeWorkspace(ws);
    await fs.rm(base, { recursive: true, force: true });
  });

  const realRelOf = async (input: string) => (await resolveInWorkspace(ws, input, {}, scope)).realRel;

  it.each([
    ['persona.md', 'SOUL.md', 'ask'],
    ['notes/../SOUL.md', 'SOUL.md', 'ask'],
    ['./notes/../persona.md', 'SOUL.md', 'ask'],
    ['notes/me.md', 'USER.md', 'deny'],
    ['vault/key.txt', 'secrets/key.txt', 'deny'],
  ])('%s resolves to %s and meets its rule (%s)', async (input, real, decision) => {
    const realRel = await realRelOf(input);
    expect(realRel).toBe(real);
    expect(evaluate(ASSISTANT, call({ realRel, tool: 'write_file', risk: 'write' })).decision).toBe(decision);
  });

  it('read rules cover every tool that reads, whatever its name', () => {
    for (const tool of ['read_file', 'search_files', 'list_directory', 'file_info', 'find_large_files', 'disk_usage']) {
      expect(evaluate(ASSISTANT, call({ realRel: 'USER.md', tool })).decision).toBe('deny');
    }
  });

  it('an unresolved path is normalized, and one leaving the root is denied', () => {
    expect(normalizeRealRel('a/../SOUL.md')).toBe('SOUL.md');
    expect(normalizeRealRel('./x/')).toBe('x');
    expect(normalizeRealRel('')).toBe('.');
    expect(evaluate(ASSISTANT, call({ realRel: 'notes/../SOUL.md', tool: 'write_file', risk: 'write' })).decision).toBe('ask');
    for (const bad of ['../SOUL.md', 'a/../../SOUL.md', '/etc/passwd', 'a\\b', 'a\0b']) {
      expect(normalizeRealRel(bad)).toBeUndefined();
      expect(evaluate(ASSISTANT, call({ realRel: bad })).decision).toBe('deny');
    }
  });
});

describe('evaluate: calls on a whole tree', () => {
  const tree = (realRel: string, p: Policy = ASSISTANT) => evaluate(p, call({ realRel, tool: 'delete_file', risk: 'destructive', scope: 'tree' }));

  it('deleting a directory that holds a denied file is denied', () => {
    expect(tree('.')).toMatchObject({ decision: 'deny' });
    expect(tree('keys')).toMatchObject({ decision: 'deny', rule: { name: 'secrets' } }); // '**/*.pem' may lie inside
    expect(evaluate(ASSISTANT, call({ realRel: 'keys', tool: 'delete_file', risk: 'destructive' })).decision).toBe('allow');
  });

  it('a rule covering the whole directory shadows the later ones', () => {
    const p = policy(`rules:\n  - { paths: ['build/**'], action: allow }\n  - { paths: ['**/*.key'], action: deny }\n  - { paths: ['docs/a.md'], action: ask }\n`);
    expect(tree('build', p).decision).toBe('allow');
    expect(tree('docs', p).decision).toBe('deny');
    const q = policy(`rules:\n  - { paths: ['docs/a.md'], action: ask }\n  - { paths: ['**'], action: allow }\n  - { paths: ['**/*.key'], action: deny }\n`);
    expect(tree('docs', q)).toMatchObject({ decision: 'ask', rule: { index: 0 } });
    expect(tree('src', q)).toMatchObject({ decision: 'allow', rule: { index: 1 } });
  });

  it('mayMatchInside compares segment by segment', () => {
    expect(mayMatchInside('src/**/*.ts', 'src/a/b')).toBe(true);
    expect(mayMatchInside('src/*.ts', 'src')).toBe(true);
    expect(mayMatchInside('src/*.ts', 'lib')).toBe(false);
    expect(mayMatchInside('src/*.ts', 'src/a')).toBe(false);
    expect(mayMatchInside('{a,b/c}/x', 'b')).toBe(true);
    expect(mayMatchInside('SOUL.md', 'notes')).toBe(false);
  });
});

describe('toolPolicyView: GET /v1/tools for this caller', () => {
  const tool = (name: string, risk: 'read' | 'write' | 'destructive') => ({ name, risk });

  it('hides a tool denied outright, and only then', () => {
    const p = policy(`
switches: { memory: off }
rules:
  - { name: no-delete, tools: [delete_file], action: deny }
  - { name: memory-tools, tools: [remember], when: { memory: off }, action: deny }
  - { paths: [SOUL.md], risks: [write], action: ask }
`);
    expect(toolPolicyView(p, tool('delete_file', 'destructive'), {})).toMatchObject({ hidden: true, hiddenBy: { name: 'no-delete' } });
    expect(toolPolicyView(p, tool('remember', 'write'), { memory: false }).hidden).toBe(true);
    expect(toolPolicyView(p, tool('remember', 'write'), { memory: true })).toMatchObject({ hidden: false, askPaths: ['SOUL.md'] });
    expect(toolPolicyView(p, tool('read_file', 'read'), {})).toEqual({ hidden: false, askPaths: [], denyPaths: [], note: null });
  });

  it('an earlier rule that allows some paths keeps the tool listed', () => {
    const p = policy(`rules:\n  - { paths: ['public/**'], action: allow }\n  - { paths: ['**'], risks: [write], action: deny }\n`);
    expect(toolPolicyView(p, tool('write_file', 'write'), {})).toMatchObject({ hidden: false, denyPaths: ['**'] });
  });

  it('says which paths ask, and stops at a rule covering every path', () => {
    const p = policy(`rules:\n  - { paths: [SOUL.md, 'cfg/**'], risks: [write], action: ask }\n  - { paths: ['**'], executable: true, action: ask }\n  - { risks: [write], action: allow }\n  - { paths: [late.md], action: ask }\n`);
    const v = toolPolicyView(p, tool('write_file', 'write'), {});
    expect(v.askPaths).toEqual(['SOUL.md', 'cfg/**', '** (executable files)']);
    expect(v.note).toBe('Asks for approval on: SOUL.md, cfg/**, ** (executable files).');
    expect(toolPolicyView(null, tool('write_file', 'write'), {}).note).toBeNull();
  });

  it('the assistant example: memory files are named as denied while memory is off', () => {
    expect(toolPolicyView(ASSISTANT, tool('read_file', 'read'), { memory: false })).toMatchObject({ hidden: false, askPaths: [], denyPaths: ['USER.md', 'MEMORY.md', 'memory', 'secrets', '**/*.pem'] });
    expect(toolPolicyView(ASSISTANT, tool('write_file', 'write'), { memory: true })).toMatchObject({ askPaths: ['SOUL.md'], denyPaths: ['secrets', '**/*.pem'] });
  });
});

describe('commands: rules (run_command)', () => {
  const policy = parsePolicy(
    [
      'rules:',
      '  - tools: [run_command]',
      "    commands: ['npm test', 'pytest -q *']",
      '    action: allow',
      '  - risks: [execute]',
      '    action: ask',
      '',
    ].join('\n'),
    'p.yaml',
  );
  const decide = (command: readonly string[] | null) => evaluate(policy, { tool: 'run_command', risk: 'execute', realRel: '.', switches: {}, command }).decision;

  it('allows the named commands word by word; a last * stands for any further words', () => {
    expect(decide(['npm', 'test'])).toBe('allow');
    expect(decide(['pytest', '-q'])).toBe('allow');
    expect(decide(['pytest', '-q', 'tests/test_a.py'])).toBe('allow');
  });

  it('asks for anything else, and for a line that is not plain words', () => {
    expect(decide(['npm', 'test', '--', 'x'])).toBe('ask');
    expect(decide(['npm'])).toBe('ask');
    expect(decide(null)).toBe('ask');
  });

  it('a commands: rule with a tool list without run_command is refused at load', () => {
    expect(() => parsePolicy("rules:\n  - tools: [read_file]\n    commands: ['npm test']\n    action: allow\n", 'p.yaml')).toThrow(/only matches run_command/);
  });
});
