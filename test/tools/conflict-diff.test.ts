// A CONFLICT over a version the backups still hold carries the diff from that version to the current one.
import fs from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, sha256OfFile, type TestApp } from '../helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeApp();
});
afterEach(async () => {
  await t.close();
});

describe('CONFLICT with the diff since your version', () => {
  it('edit_file and write_file with an old sha256 see what changed since', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\ntwo\nthree\n');
    const mine = await sha256OfFile(t.file('a.txt'));
    const other = await t.call('edit_file', { path: 'a.txt', old_text: 'two', new_text: 'TWO' });
    expect(other.body.status).toBe('success');
    for (const [tool, args] of [
      ['edit_file', { path: 'a.txt', old_text: 'three', new_text: '3', expected_sha256: mine }],
      ['write_file', { path: 'a.txt', content: 'x\n', expected_sha256: mine }],
    ] as const) {
      const res = await t.call(tool, args);
      expect(res.body.error?.code).toBe('CONFLICT');
      const details = res.body.error?.details as { diff_since_your_version: string; current: { sha256: string } };
      expect(details.diff_since_your_version).toContain('-two');
      expect(details.diff_since_your_version).toContain('+TWO');
      expect(details.current.sha256).toBe(await sha256OfFile(t.file('a.txt')));
    }
  });

  it('If-Match with an old tag gets the diff too', async () => {
    await fs.writeFile(t.file('a.txt'), 'a\n');
    const mine = await sha256OfFile(t.file('a.txt'));
    await t.call('write_file', { path: 'a.txt', content: 'b\n', expected_sha256: mine });
    const res = await t.call('append_to_file', { path: 'a.txt', content: 'c\n' }, { 'if-match': `"${mine}"` });
    expect(res.body.error?.code).toBe('CONFLICT');
    expect((res.body.error?.details as { diff_since_your_version: string }).diff_since_your_version).toContain('+b');
  });

  it('a version the backups do not hold gives the plain CONFLICT', async () => {
    await fs.writeFile(t.file('a.txt'), 'a\n');
    const res = await t.call('write_file', { path: 'a.txt', content: 'x\n', expected_sha256: '0'.repeat(64) });
    expect(res.body.error?.code).toBe('CONFLICT');
    expect(res.body.error?.details).not.toHaveProperty('diff_since_your_version');
  });
});
