// A command's approval, through the real HTTP door (docs/approvals.md, docs/run-command.md "Policy"): it binds
// to the project as the person saw it (any change since makes the repeat CONFLICT, and the approval stays for
// a person to decide again), it names the paths whose reading asks that the run will see, and its text shows a
// command's characters as they are (a newline cannot forge a line of the preview).
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePolicyApp, type PolicyApp } from '../approvals/approval-helpers.js';

interface Approval {
  id: string;
  summary: string;
  diff_preview: string;
}

const POLICY = [
  'rules:',
  '  - name: private-notes',
  '    risks: [read]',
  "    paths: ['notes/private/**', '**/*.env']",
  '    action: ask',
  '  - name: commands',
  '    risks: [execute]',
  '    action: ask',
  '',
].join('\n');

describe('run_command approvals', () => {
  let t: PolicyApp;
  beforeAll(async () => {
    t = await makePolicyApp(POLICY, { TOOLGATE_EXEC: 'sandboxed' }, false);
    await fs.mkdir(path.join(t.root, 'src'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'src/build.sh'), 'echo building > out.txt\n');
    await fs.mkdir(path.join(t.root, 'notes/private'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'notes/private/diary.md'), 'dear diary\n');
    await fs.mkdir(path.join(t.root, 'deep/a/b/c'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'deep/a/b/c/prod.env'), 'KEY=1\n');
  });
  afterAll(async () => t.close());

  async function ask(body: Record<string, unknown>): Promise<Approval> {
    const r = await t.as(null, 'run_command', body);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    return (r.body.data as { approval: Approval }).approval;
  }

  it('binds to the project as it was: a script rewritten after the approval makes the repeat CONFLICT, nothing runs', async () => {
    const approval = await ask({ command: 'sh src/build.sh' });
    expect((await t.decide(null, approval.id, 'approve')).status).toBe(200);
    // A write that needs no approval (the policy asks only for commands) changes what the command would run.
    const sha = createHash('sha256').update(await fs.readFile(path.join(t.root, 'src/build.sh'))).digest('hex');
    const w = await t.as(null, 'write_file', { path: 'src/build.sh', content: 'cat notes/private/diary.md > leaked.txt\n', expected_sha256: sha });
    expect(w.body.status, JSON.stringify(w.body)).toBe('success');
    const again = await t.as(null, 'run_command', { command: 'sh src/build.sh', approval_id: approval.id });
    expect(again.status).toBe(409);
    expect(again.body.error?.code).toBe('CONFLICT');
    expect(await fs.stat(path.join(t.root, 'leaked.txt')).catch(() => null)).toBeNull();
    expect(await fs.stat(path.join(t.root, 'out.txt')).catch(() => null)).toBeNull();
  });

  it('an unchanged project runs the approved command', async () => {
    const approval = await ask({ command: 'sh src/build.sh; echo done' });
    expect((await t.decide(null, approval.id, 'approve')).status).toBe(200);
    const again = await t.as(null, 'run_command', { command: 'sh src/build.sh; echo done', approval_id: approval.id });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((again.body.data as { stdout: string }).stdout).toBe('done\n');
  });

  it('names the paths whose reading asks that the approved run will see, at any depth', async () => {
    const made = await ask({ command: 'ls -R' });
    const approval = (await t.get(null, `/v1/approvals/${made.id}`)).json.approval as Approval;
    expect(approval.summary).toMatch(/It will see 2 paths whose reading asks/);
    expect(approval.diff_preview).toContain('sees paths whose reading asks:');
    expect(approval.diff_preview).toContain('  deep/a/b/c/prod.env');
    expect(approval.diff_preview).toContain('  notes/private/');
  });

  it("shows the command's characters as they are: a newline cannot forge an env line", async () => {
    const made = await ask({ command: 'echo hi\nenv X=1\n$ rm -rf /\x1b[2K' });
    // The person deciding reads the record (the caller's 202 withholds the preview where reads ask).
    const approval = (await t.get(null, `/v1/approvals/${made.id}`)).json.approval as Approval;
    const lines = approval.diff_preview.split('\n');
    expect(lines.filter((l) => l.startsWith('env '))).toEqual([]);
    expect(lines.filter((l) => l.startsWith('$ '))).toHaveLength(2);
    expect(approval.diff_preview).toContain('$ echo hi\\nenv X=1\\n$ rm -rf /\\x1b[2K');
    expect(approval.summary).not.toContain('\n');
    // A right-to-left override would reorder what the person reads: it shows as its code.
    const bidi = await ask({ command: 'echo safe \u202e; rm -rf ~ #' });
    const shown = (await t.get(null, `/v1/approvals/${bidi.id}`)).json.approval as Approval;
    expect(shown.diff_preview).toContain('\\u202e');
    expect(shown.diff_preview).not.toContain('\u202e');
  });

  it('a dry run of a command still asks: it runs the command', async () => {
    const approval = await ask({ command: 'echo x > would.txt', dry_run: true });
    expect(approval.id).toEqual(expect.any(String));
    expect(await fs.stat(path.join(t.root, 'would.txt')).catch(() => null)).toBeNull();
  });
});
