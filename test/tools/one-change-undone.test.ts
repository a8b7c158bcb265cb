// Every change goes through one commit path that records who made it, its backup and its version
// (docs/api.md, "Durable writes and backups"): after any mutating tool, undo_edit takes back exactly that one
// change — not the text editor's change before it — and never a change someone else made since.
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, sha256OfFile, type CallResult, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const F = 'f.txt';
const sha = () => sha256OfFile((t as TestApp).file(F));
const call = (tool: string, args: Record<string, unknown>, headers?: Record<string, string>) => (t as TestApp).call(tool, args, headers);

/** Each mutating tool, changing f.txt from "v2" to something else. */
const CHANGES: [string, () => Promise<CallResult>][] = [
  ['write_file', async () => call('write_file', { path: F, content: 'v3\n', expected_sha256: await sha() })],
  ['edit_file (bytes path)', () => call('edit_file', { path: F, old_text: 'v2', new_text: 'v3' })],
  ['edit_file (engine path)', () => call('edit_file', { path: F, edits: [{ old_text: 'v2', new_text: 'v3' }, { old_text: 'v3', new_text: 'v4' }] })],
  ['replace_in_file', () => call('replace_in_file', { path: F, old: 'v2', new: 'v3' })],
  ['append_to_file', () => call('append_to_file', { path: F, content: 'v3\n' })],
  ['apply_patch', () => call('apply_patch', { patch: `*** Begin Patch\n*** Update File: ${F}\n@@\n-v2\n+v3\n*** End Patch\n` })],
  ['str_replace', () => call('str_replace_based_edit_tool', { command: 'str_replace', path: F, old_str: 'v2', new_str: 'v3' })],
  ['insert', () => call('str_replace_based_edit_tool', { command: 'insert', path: F, insert_line: 1, new_str: 'v3' })],
  [
    'move_file onto the file',
    async () => {
      await fs.writeFile((t as TestApp).file('other.txt'), 'v3\n');
      return call('move_file', { path: 'other.txt', destination: F, overwrite: true, expected_sha256: await sha256OfFile((t as TestApp).file('other.txt')) });
    },
  ],
  ['restore_backup (of v1)', () => call('restore_backup', { path: F })],
];

async function atV2(env: Record<string, string> = {}, headers?: Record<string, string>): Promise<void> {
  t = await makeApp(env);
  await fs.writeFile(t.file(F), 'v1\n');
  const first = await call('str_replace_based_edit_tool', { command: 'str_replace', path: F, old_str: 'v1', new_str: 'v2' }, headers);
  expect(first.status).toBe(200);
}

describe('one commit path: undo_edit takes back exactly the last change', () => {
  it.each(CHANGES)('%s, then undo_edit: the file is back at the text editor\'s version', async (_name, change) => {
    await atV2();
    const res = await change();
    expect(res.status, JSON.stringify(res.body.error)).toBe(200);
    expect(await fs.readFile((t as TestApp).file(F), 'utf8')).not.toBe('v2\n');
    const undo = await call('str_replace_based_edit_tool', { command: 'undo_edit', path: F });
    expect(undo.status, JSON.stringify(undo.body.error)).toBe(200);
    expect(await fs.readFile((t as TestApp).file(F), 'utf8')).toBe('v2\n');
    // The undo used up that one change: the next one takes back the text editor's own.
    expect((await call('str_replace_based_edit_tool', { command: 'undo_edit', path: F })).status).toBe(200);
    expect(await fs.readFile((t as TestApp).file(F), 'utf8')).toBe('v1\n');
  });

  it('delete_file and shell_destructive keep the deleted content with who deleted it: restore_backup by path brings back v2', async () => {
    for (const remove of [() => call('delete_file', { path: F }), () => call('shell_destructive', { command: `rm ${F}` })]) {
      await atV2();
      expect((await remove()).status).toBe(200);
      const backups = await call('list_backups', { path: F });
      expect((backups.body.data as { backups: { operation: string }[] }).backups[0]?.operation).toMatch(/delete|rm|shell/);
      expect((await call('restore_backup', { path: F })).status).toBe(200);
      expect(await fs.readFile((t as TestApp).file(F), 'utf8')).toBe('v2\n');
      await t?.close();
      t = undefined;
    }
  });

  it.each([
    ['delete_file', () => call('delete_file', { path: F })],
    ['shell_destructive rm', () => call('shell_destructive', { command: `rm ${F}` })],
    ['apply_patch delete', () => call('apply_patch', { patch: `*** Begin Patch\n*** Delete File: ${F}\n*** End Patch\n` })],
  ])('%s, then undo_edit: the file is back with its version; the next undo takes back the change before', async (_name, remove) => {
    await atV2();
    await fs.chmod((t as TestApp).file(F), 0o640);
    const before = (await call('file_info', { path: F })).body.data as { version: { sha256: string; mtime_ms: number; size_bytes: number } };
    const removed = await remove();
    expect(removed.status, JSON.stringify(removed.body.error)).toBe(200);
    await expect(fs.stat((t as TestApp).file(F))).rejects.toThrow(/ENOENT/);

    const undo = await call('str_replace_based_edit_tool', { command: 'undo_edit', path: F });
    expect(undo.status, JSON.stringify(undo.body.error)).toBe(200);
    expect(undo.body.text).toMatch(/^Last edit to f\.txt undone successfully\./);
    expect(await fs.readFile((t as TestApp).file(F), 'utf8')).toBe('v2\n');
    expect((await fs.stat((t as TestApp).file(F))).mode & 0o777).toBe(0o640);
    expect((undo.body.data as { version: unknown }).version).toEqual(before.version);
    expect(((await call('file_info', { path: F })).body.data as { version: unknown }).version).toEqual(before.version);

    // The delete was taken back: the next undo takes back the text editor's own change, then there is none.
    expect((await call('str_replace_based_edit_tool', { command: 'undo_edit', path: F })).status).toBe(200);
    expect(await fs.readFile((t as TestApp).file(F), 'utf8')).toBe('v1\n');
    expect((await call('str_replace_based_edit_tool', { command: 'undo_edit', path: F })).body.error?.code).toBe('NOT_FOUND');
  });

  it('undo_edit of a delete never overwrites a file created there since: CONFLICT, the new file kept', async () => {
    await atV2();
    expect((await call('delete_file', { path: F })).status).toBe(200);
    await fs.writeFile((t as TestApp).file(F), 'someone else\n');
    const undo = await call('str_replace_based_edit_tool', { command: 'undo_edit', path: F });
    expect(undo.body.error?.code).toBe('CONFLICT');
    expect(await fs.readFile((t as TestApp).file(F), 'utf8')).toBe('someone else\n');
  });

  it("undo_edit never undoes another caller's change made since: CONFLICT, the file unchanged", async () => {
    const dir = await makeTempDir('toolgate-tokens-');
    const tokens = `${dir}/tokens.json`;
    const { createHash } = await import('node:crypto');
    const hash = (s: string) => createHash('sha256').update(s).digest('hex');
    await fs.writeFile(
      tokens,
      JSON.stringify([
        { id: 'alice', sha256: hash('alice-token-0123456789'), risks: ['read', 'write', 'destructive'] },
        { id: 'bob', sha256: hash('bob-token-0123456789ab'), risks: ['read', 'write', 'destructive'] },
      ]),
    );
    const alice = { authorization: 'Bearer alice-token-0123456789' };
    const bob = { authorization: 'Bearer bob-token-0123456789ab' };
    try {
      await atV2({ TOOLGATE_TOKENS_FILE: tokens }, alice);
      expect((await call('edit_file', { path: F, old_text: 'v2', new_text: 'bob' }, bob)).status).toBe(200);
      const undo = await call('str_replace_based_edit_tool', { command: 'undo_edit', path: F }, alice);
      expect(undo.body.error?.code).toBe('CONFLICT');
      expect(undo.body.error?.message).toContain('bob');
      expect(await fs.readFile((t as TestApp).file(F), 'utf8')).toBe('bob\n');
      // Bob's own undo takes back his edit only.
      expect((await call('str_replace_based_edit_tool', { command: 'undo_edit', path: F }, bob)).status).toBe(200);
      expect(await fs.readFile((t as TestApp).file(F), 'utf8')).toBe('v2\n');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
