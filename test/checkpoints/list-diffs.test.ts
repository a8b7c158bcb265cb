// list_checkpoints {diffs: true} through the real HTTP door (docs/api.md, "Turns, checkpoints and rewind"): each
// file's diff over its turn, from before its first change there to after its last, and none for a file the
// caller may not read (a diff shows its content).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePolicyApp, type PolicyApp } from '../approvals/approval-helpers.js';

interface Listed {
  checkpoints: Array<{ turn: string | null; files: Array<{ path: string; op: string; diff?: string }> }>;
}

describe('list_checkpoints with diffs', () => {
  let t: PolicyApp;
  beforeAll(async () => {
    t = await makePolicyApp(['rules:', '  - name: secret', '    risks: [read]', '    paths: [secret.md]', '    action: deny', ''].join('\n'), {}, false);
  });
  afterAll(async () => t.close());

  it('shows each file over its turn, and nothing of a file the caller may not read', async () => {
    const turn = { 'toolgate-turn': 'turn-a' };
    expect((await t.as(null, 'write_file', { path: 'notes.md', content: 'a\nb\n' }, { 'toolgate-turn': 'turn-0' })).status).toBe(200);
    expect((await t.as(null, 'edit_file', { path: 'notes.md', old_text: 'a', new_text: 'A' }, turn)).status).toBe(200);
    expect((await t.as(null, 'edit_file', { path: 'notes.md', old_text: 'b', new_text: 'B' }, turn)).status).toBe(200);
    expect((await t.as(null, 'write_file', { path: 'secret.md', content: 'the secret\n' }, turn)).status).toBe(200);
    const plain = await t.as(null, 'list_checkpoints', {});
    const without = (plain.body.data as Listed).checkpoints.find((c) => c.turn === 'turn-a');
    expect(without?.files.every((f) => f.diff === undefined)).toBe(true);
    const r = await t.as(null, 'list_checkpoints', { diffs: true });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const cp = (r.body.data as Listed).checkpoints.find((c) => c.turn === 'turn-a');
    const notes = cp?.files.find((f) => f.path === 'notes.md');
    // Both edits of the turn in one diff: from 'a b' before it to 'A B' after it.
    expect(notes?.diff).toContain('-a\n-b\n+A\n+B');
    const secret = cp?.files.find((f) => f.path === 'secret.md');
    expect(secret?.op).toBe('create');
    expect(secret?.diff).toBeUndefined();
    expect(JSON.stringify(r.body)).not.toContain('the secret');
  });
});
