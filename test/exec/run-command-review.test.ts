// A command's changes under an `ask` rule wait for a person, through the real HTTP door (docs/run-command.md,
// "Changes that ask"; docs/approvals.md): the run is held, the request shows the command, how it ended, its
// output and every change with its diff; approving lands exactly those changes without running it again; a
// refusal or expiry discards them; a project changed meanwhile is CONFLICT. With the network off a command the
// policy asks about runs first, and the person decides on what it did.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePolicyApp, type PolicyApp } from '../approvals/approval-helpers.js';
import { makeTempDir } from '../helpers.js';
import { MAX_HELD_RUNS } from '../../src/exec/held.js';

interface Approval {
  id: string;
  summary: string;
  diff_preview: string;
  changes: Array<{ op: string; path: string; diff: string }>;
}

interface RunData {
  stdout: string;
  exit_code: number | null;
  applied: boolean;
  files_changed: Array<{ path: string; change: string; backup_id: string | null }>;
}

const POLICY = [
  'approvals:',
  '  ttl: 30m',
  'rules:',
  '  - name: generated-denied',
  '    risks: [write, destructive]',
  "    paths: ['locked/**']",
  '    action: deny',
  '  - name: sources-ask',
  '    risks: [write, destructive]',
  "    paths: ['src/**']",
  '    action: ask',
  '  - name: known',
  '    tools: [run_command]',
  "    commands: ['sh gen.sh', 'sh gen.sh *']",
  '    action: allow',
  '  - name: other-commands',
  '    risks: [execute]',
  '    action: ask',
  '',
].join('\n');

// The script writes a random token, so a second run would change what lands and what it prints.
const GEN = ['set -e', 'tok=$(od -An -N8 -tx1 /dev/urandom | tr -d " \\n")', 'echo "token $tok"', 'echo "gen $tok" > ${1:-src}/gen.txt', 'rm -f src/old.txt', 'echo done >&2', ''].join('\n');

function sha(s: string | Buffer): string {
  return createHash('sha256').update(s).digest('hex');
}

async function exists(p: string): Promise<boolean> {
  return (await fs.lstat(p).catch(() => null)) !== null;
}

describe('run_command: changes that ask', () => {
  let t: PolicyApp;
  let stateDir: string;
  const state = () => stateDir;
  const held = async () => (await fs.readdir(path.join(stateDir, 'exec-held')).catch(() => [] as string[])).sort();

  beforeAll(async () => {
    stateDir = await makeTempDir('toolgate-review-state-');
    t = await makePolicyApp(POLICY, { TOOLGATE_EXEC: 'sandboxed', TOOLGATE_STATE_DIR: stateDir }, false);
    await fs.mkdir(path.join(t.root, 'src'), { recursive: true });
    await fs.mkdir(path.join(t.root, 'out'), { recursive: true });
    await fs.mkdir(path.join(t.root, 'locked'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'gen.sh'), GEN);
  });
  afterAll(async () => {
    await t.close();
    await fs.rm(stateDir, { recursive: true, force: true });
  });

  async function reset(): Promise<void> {
    await fs.writeFile(path.join(t.root, 'src/old.txt'), 'old\n');
    await fs.rm(path.join(t.root, 'src/gen.txt'), { force: true });
  }

  async function asks(body: Record<string, unknown>): Promise<{ approval: Approval; data: Record<string, unknown> }> {
    const r = await t.as(null, 'run_command', body);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const data = r.body.data as Record<string, unknown>;
    return { approval: data.approval as Approval, data };
  }

  it('holds a change under an ask rule: the person sees the command, its exit, output and every diff; nothing lands', async () => {
    await reset();
    const { approval } = await asks({ command: 'sh gen.sh' });
    expect(approval.summary).toContain("Land what 'sh gen.sh'");
    expect(approval.summary).toContain("its change to 'src/gen.txt' asks");
    expect(approval.diff_preview).toContain('$ sh gen.sh');
    expect(approval.diff_preview).toContain('exit: exited 0');
    expect(approval.diff_preview).toMatch(/stdout \(\d+ bytes\):\n\| token [0-9a-f]{16}/);
    expect(approval.diff_preview).toContain('| done');
    const ops = approval.changes.map((c) => `${c.op} ${c.path}`).sort();
    expect(ops).toEqual(['create src/gen.txt', 'delete src/old.txt']);
    expect(approval.changes.find((c) => c.path === 'src/gen.txt')?.diff).toMatch(/\+gen [0-9a-f]{16}/);
    expect(await exists(path.join(t.root, 'src/gen.txt'))).toBe(false);
    expect(await fs.readFile(path.join(t.root, 'src/old.txt'), 'utf8')).toBe('old\n');
    expect(await held()).toEqual([approval.id]);
  });

  it('approving lands exactly what the person saw, without running the command again; each change undoable', async () => {
    await reset();
    const { approval } = await asks({ command: 'sh gen.sh' });
    const token = /token ([0-9a-f]{16})/.exec(approval.diff_preview)?.[1];
    expect(token).toBeTruthy();
    expect((await t.decide(null, approval.id, 'approve')).status).toBe(200);
    const r = await t.as(null, 'run_command', { command: 'sh gen.sh', approval_id: approval.id });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const data = r.body.data as RunData;
    expect(data.applied).toBe(true);
    expect(data.stdout).toContain(`token ${token}`);
    expect(await fs.readFile(path.join(t.root, 'src/gen.txt'), 'utf8')).toBe(`gen ${token}\n`);
    expect(await exists(path.join(t.root, 'src/old.txt'))).toBe(false);
    expect(await held()).not.toContain(approval.id);
    const removed = data.files_changed.find((c) => c.path === 'src/old.txt');
    expect(removed?.backup_id).toBeTruthy();
    // Undo is a change too: approved first (src/** asks), then it brings the removed file back.
    const undo = await t.as(null, 'str_replace_based_edit_tool', { command: 'undo_edit', path: 'src/old.txt' });
    expect(undo.status, JSON.stringify(undo.body)).toBe(202);
    const undoId = (undo.body.data as { approval: Approval }).approval.id;
    expect((await t.decide(null, undoId, 'approve')).status).toBe(200);
    const undone = await t.as(null, 'str_replace_based_edit_tool', { command: 'undo_edit', path: 'src/old.txt', approval_id: undoId });
    expect(undone.status, JSON.stringify(undone.body)).toBe(200);
    expect(await fs.readFile(path.join(t.root, 'src/old.txt'), 'utf8')).toBe('old\n');
    // The approval is spent: a second repeat lands nothing and runs nothing.
    const again = await t.as(null, 'run_command', { command: 'sh gen.sh', approval_id: approval.id });
    expect(again.status).not.toBe(200);
    expect(await fs.readFile(path.join(t.root, 'src/gen.txt'), 'utf8')).toBe(`gen ${token}\n`);
  });

  it('a refusal discards the held run; the repeat is refused and nothing lands', async () => {
    await reset();
    const { approval } = await asks({ command: 'sh gen.sh' });
    expect(await held()).toContain(approval.id);
    expect((await t.decide(null, approval.id, 'reject', 'not now')).status).toBe(200);
    await expect.poll(held).not.toContain(approval.id);
    const r = await t.as(null, 'run_command', { command: 'sh gen.sh', approval_id: approval.id });
    expect(r.body.error?.code).toBe('USER_REJECTED');
    expect(await exists(path.join(t.root, 'src/gen.txt'))).toBe(false);
    expect(await fs.readFile(path.join(t.root, 'src/old.txt'), 'utf8')).toBe('old\n');
  });

  it('an expiry discards the held run', async () => {
    await reset();
    const { approval } = await asks({ command: 'sh gen.sh' });
    const expired = await t.app.toolgate.policy.sweep(Date.now() + 31 * 60_000);
    expect(expired.map((r) => r.id)).toContain(approval.id);
    // Every request was pending or approved but never repeated: all expired, every held run discarded.
    await expect.poll(held).toEqual([]);
    expect(await exists(path.join(t.root, 'src/gen.txt'))).toBe(false);
  });

  it('a project changed after the request makes the repeat CONFLICT; nothing lands, nothing runs', async () => {
    await reset();
    const { approval } = await asks({ command: 'sh gen.sh' });
    expect((await t.decide(null, approval.id, 'approve')).status).toBe(200);
    // A change nobody needs to approve (out/ has no rule) moves the project on.
    const w = await t.as(null, 'write_file', { path: 'out/note.txt', content: 'meanwhile\n' });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    const r = await t.as(null, 'run_command', { command: 'sh gen.sh', approval_id: approval.id });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('CONFLICT');
    expect(await exists(path.join(t.root, 'src/gen.txt'))).toBe(false);
    expect(await fs.readFile(path.join(t.root, 'src/old.txt'), 'utf8')).toBe('old\n');
  });

  it('a change the rules allow lands at once; one they deny lands nothing and names the path', async () => {
    const ok = await t.as(null, 'run_command', { command: 'echo hi > out/a.txt' });
    // `echo hi > …` is not a known command: with the network off it runs first and asks (next test).
    expect(ok.status).toBe(202);
    const allowed = await t.as(null, 'run_command', { command: 'sh gen.sh out' });
    // gen.sh also removes src/old.txt, which asks.
    expect(allowed.status).toBe(202);
    await fs.rm(path.join(t.root, 'src/old.txt'), { force: true });
    const clean = await t.as(null, 'run_command', { command: 'sh gen.sh out' });
    expect(clean.status, JSON.stringify(clean.body)).toBe(200);
    expect((clean.body.data as RunData).applied).toBe(true);
    expect(await fs.readFile(path.join(t.root, 'out/gen.txt'), 'utf8')).toMatch(/^gen [0-9a-f]{16}\n$/);
    const denied = await t.as(null, 'run_command', { command: 'sh gen.sh locked' });
    expect(denied.status).toBe(403);
    expect(denied.body.error?.code).toBe('ACCESS_DENIED');
    expect(denied.body.error?.message).toContain('locked/gen.txt');
    expect(await exists(path.join(t.root, 'locked/gen.txt'))).toBe(false);
  });

  it('with the network off, a command the policy asks about runs first: the person decides on what it did', async () => {
    await fs.rm(path.join(t.root, 'out/first.txt'), { force: true });
    const { approval } = await asks({ command: 'echo first > out/first.txt; echo printed' });
    expect(approval.summary, JSON.stringify(approval)).toContain('running it asks');
    expect(approval.diff_preview).toContain('| printed');
    expect(approval.changes.map((c) => `${c.op} ${c.path}`)).toEqual(['create out/first.txt']);
    expect(await exists(path.join(t.root, 'out/first.txt'))).toBe(false);
    expect((await t.decide(null, approval.id, 'approve')).status).toBe(200);
    const r = await t.as(null, 'run_command', { command: 'echo first > out/first.txt; echo printed', approval_id: approval.id });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((r.body.data as RunData).stdout).toBe('printed\n');
    expect(await fs.readFile(path.join(t.root, 'out/first.txt'), 'utf8')).toBe('first\n');
  });

  it('a held run whose files were tampered with on the volume is refused as not the approved changes', async () => {
    await reset();
    const { approval } = await asks({ command: 'sh gen.sh' });
    expect((await t.decide(null, approval.id, 'approve')).status).toBe(200);
    await fs.writeFile(path.join(state(), 'exec-held', approval.id, 'upper', 'src', 'gen.txt'), 'swapped\n');
    const r = await t.as(null, 'run_command', { command: 'sh gen.sh', approval_id: approval.id });
    expect(r.status).toBe(409);
    expect(await exists(path.join(t.root, 'src/gen.txt'))).toBe(false);
    expect(sha(await fs.readFile(path.join(t.root, 'src/old.txt')))).toBe(sha('old\n'));
  });

  it('a held plan altered on the volume to name a path outside the project lands nothing', async () => {
    await reset();
    const { approval } = await asks({ command: 'sh gen.sh' });
    expect((await t.decide(null, approval.id, 'approve')).status).toBe(200);
    const planFile = path.join(state(), 'exec-held', approval.id, 'held.json');
    const plan = JSON.parse(await fs.readFile(planFile, 'utf8')) as { steps: Array<{ dirRel?: string }> };
    for (const step of plan.steps) if (step.dirRel !== undefined) step.dirRel = '../..';
    await fs.writeFile(planFile, JSON.stringify(plan));
    const r = await t.as(null, 'run_command', { command: 'sh gen.sh', approval_id: approval.id });
    expect(r.body.error?.code, JSON.stringify(r.body)).toBe('CONFLICT');
    expect(r.body.error?.message).toContain('outside the project');
    expect(await exists(path.join(t.root, '..', '..', 'gen.txt'))).toBe(false);
    expect(await exists(path.join(t.root, 'src/gen.txt'))).toBe(false);
    expect(await fs.readFile(path.join(t.root, 'src/old.txt'), 'utf8')).toBe('old\n');
  });
});

describe('run_command under the IDE policy (examples/policies/ide.yaml): every change waits for the user', () => {
  let t: PolicyApp;
  beforeAll(async () => {
    t = await makePolicyApp('ide.yaml', { TOOLGATE_EXEC: 'sandboxed' }, false);
    await fs.writeFile(path.join(t.root, 'app.js'), 'v1\n');
    await fs.writeFile(path.join(t.root, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'node -e "require(\'fs\').writeFileSync(\'app.js\', \'v2\\\\n\')"' } }));
  });
  afterAll(async () => t.close());

  it('`npm test` runs without asking, and the file its script writes waits for confirmation', async () => {
    const r = await t.as(null, 'run_command', { command: 'npm test' });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const approval = (r.body.data as { approval: Approval }).approval;
    expect(approval.summary).toContain("its change to 'app.js' asks");
    expect(approval.changes.map((c) => `${c.op} ${c.path}`)).toEqual(['update app.js']);
    expect(approval.changes[0]?.diff).toContain('-v1');
    expect(approval.changes[0]?.diff).toContain('+v2');
    expect(await fs.readFile(path.join(t.root, 'app.js'), 'utf8')).toBe('v1\n');
    expect((await t.decide(null, approval.id, 'approve')).status).toBe(200);
    const landed = await t.as(null, 'run_command', { command: 'npm test', approval_id: approval.id });
    expect(landed.status, JSON.stringify(landed.body)).toBe(200);
    expect(await fs.readFile(path.join(t.root, 'app.js'), 'utf8')).toBe('v2\n');
  });
});

describe('run_command: held runs are bounded', () => {
  let t: PolicyApp;
  let stateDir: string;
  beforeAll(async () => {
    stateDir = await makeTempDir('toolgate-held-bound-');
    t = await makePolicyApp(POLICY, { TOOLGATE_EXEC: 'sandboxed', TOOLGATE_STATE_DIR: stateDir }, false);
    await fs.mkdir(path.join(t.root, 'src'), { recursive: true });
  });
  afterAll(async () => {
    await t.close();
    await fs.rm(stateDir, { recursive: true, force: true });
  });

  it(`holds ${MAX_HELD_RUNS} runs at once; one more lands nothing and says why until a person decides`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < MAX_HELD_RUNS; i++) {
      const r = await t.as(null, 'run_command', { command: `echo ${i} > src/f${i}.txt` });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      ids.push((r.body.data as { approval: Approval }).approval.id);
    }
    const over = await t.as(null, 'run_command', { command: 'echo over > src/over.txt' });
    expect(over.body.error?.code, JSON.stringify(over.body)).toBe('RATE_LIMITED');
    expect(over.body.error?.message).toContain(`${MAX_HELD_RUNS} runs waiting`);
    expect(await fs.readdir(path.join(stateDir, 'exec-held'))).toHaveLength(MAX_HELD_RUNS);
    expect(await exists(path.join(t.root, 'src/over.txt'))).toBe(false);
    // A refusal frees a place.
    expect((await t.decide(null, ids[0] as string, 'reject')).status).toBe(200);
    await expect.poll(async () => (await fs.readdir(path.join(stateDir, 'exec-held'))).length).toBe(MAX_HELD_RUNS - 1);
    const again = await t.as(null, 'run_command', { command: 'echo over > src/over.txt' });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
  }, 120_000);
});
