// The policy decides on what a call does, not on how it is spelled (docs/policy.md), each attack tried over
// the real HTTP door with a real policy file, counting what got through: a rule naming a tool alias, a
// directory moved onto a protected path, a dry run or a walk that shows content a read would have to ask
// for, backups listed for a denied file, and an approval recorded in the project the call came from rather
// than the one whose file changes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, sha256OfFile } from '../helpers.js';
import { agent, makePolicyApp, type PolicyApp } from '../approvals/approval-helpers.js';

let t: PolicyApp | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});


describe('a rule naming a tool alias', () => {
  const POLICY = `
rules:
  - name: soul
    paths: [SOUL.md]
    tools: [text_editor, write, edit, Write, file-write]
    action: deny
`;

  it('matches every call of that tool, whatever name the call uses: nothing gets through', async () => {
    t = await makePolicyApp(POLICY);
    await fs.writeFile(t.file('SOUL.md'), 'I am kind.\n');
    const sha = await sha256OfFile(t.file('SOUL.md'));
    const tries = [
      await t.as(agent, 'str_replace_based_edit_tool', { command: 'str_replace', path: 'SOUL.md', old_str: 'kind', new_str: 'cruel' }),
      await t.as(agent, 'text_editor', { command: 'str_replace', path: 'SOUL.md', old_str: 'kind', new_str: 'cruel' }),
      await t.as(agent, 'write_file', { path: 'SOUL.md', content: 'I am cruel.\n', expected_sha256: sha }),
      await t.as(agent, 'write', { path: 'SOUL.md', content: 'I am cruel.\n', expected_sha256: sha }),
      await t.as(agent, 'Write', { path: 'SOUL.md', content: 'I am cruel.\n', expected_sha256: sha }),
      await t.as(agent, 'edit_file', { path: 'SOUL.md', old_text: 'kind', new_text: 'cruel' }),
      await t.as(agent, 'edit', { path: 'SOUL.md', old_text: 'kind', new_text: 'cruel' }),
    ];
    expect(tries.filter((r) => r.status !== 403 || r.body.error?.code !== 'ACCESS_DENIED')).toEqual([]);
    expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\n');
    // Other tools are not covered: the rule names these three.
    expect((await t.as(agent, 'read_file', { path: 'SOUL.md' })).status).toBe(200);
  });

  it('an unknown tool name stops start-up, naming it; an alias does not', async () => {
    const dir = await makeTempDir('toolgate-policy-');
    const file = path.join(dir, 'policy.yaml');
    await fs.writeFile(file, 'rules:\n  - tools: [edit, rm_rf]\n    action: deny\n');
    await expect(makeApp({ TOOLGATE_POLICY: file, TOOLGATE_STATE_DIR: path.join(dir, 'state') })).rejects.toThrow(/policy\.yaml:2:\d+: unknown tool 'rm_rf'/);
    await fs.rm(dir, { recursive: true, force: true });
  });
});
