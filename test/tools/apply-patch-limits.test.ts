// apply_patch's bounds (issue 33, point 7; docs/api.md, "Tools"): a patch names at most
// TOOLGATE_PATCH_MAX_FILES files (a move names two), counted before anything is parsed, resolved or read; a dry
// run takes no lock; two names of one file are found however many files the patch names.
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Workspace } from '../../src/workspace/workspace.js';
import { holdFileLock, makeApp, pathExists, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A patch that adds `n` files, `f0.txt` … (under `dir/` when given). */
function addingPatch(n: number, dir = ''): string {
  const lines = ['*** Begin Patch'];
  for (let i = 0; i < n; i++) lines.push(`*** Add File: ${dir}f${i}.txt`, `+line ${i}`);
  return `${lines.join('\n')}\n*** End Patch\n`;
}

describe('apply_patch: TOOLGATE_PATCH_MAX_FILES', () => {
  it('applies a patch of exactly the limit, and refuses one file more before writing anything', async () => {
    t = await makeApp({ TOOLGATE_PATCH_MAX_FILES: '5' });
    const at = await t.call('apply_patch', { patch: addingPatch(5, 'at/') });
    expect(at.body.status, JSON.stringify(at.body.error)).toBe('success');
    expect((at.body.data as { files: unknown[] }).files).toHaveLength(5);
    expect(await fs.readdir(t.file('at'))).toHaveLength(5);

    const over = await t.call('apply_patch', { patch: addingPatch(6, 'over/') });
    expect(over.status).toBe(400);
    expect(over.body.error?.code).toBe('INVALID_PARAM');
    expect(over.body.error?.message).toContain('TOOLGATE_PATCH_MAX_FILES (5)');
    expect(over.body.error?.message).toContain('names 6 files');
    expect(over.body.error?.details).toMatchObject({ files: 6, limit_files: 5 });
    expect(await pathExists(t.file('over'))).toBe(false);
  });

  it('counts a move as two files: its source and its destination', async () => {
    t = await makeApp({ TOOLGATE_PATCH_MAX_FILES: '3' });
    await fs.writeFile(t.file('old.txt'), 'x\n');
    const move = '*** Update File: old.txt\n*** Move to: new.txt\n@@\n-x\n+y\n';
    const three = await t.call('apply_patch', { patch: `*** Begin Patch\n*** Add File: a.txt\n+a\n${move}*** End Patch\n` });
    expect(three.body.status, JSON.stringify(three.body.error)).toBe('success');
    expect(await fs.readFile(t.file('new.txt'), 'utf8')).toBe('y\n');

    await fs.writeFile(t.file('old.txt'), 'x\n');
    await fs.rm(t.file('new.txt'));
    const four = await t.call('apply_patch', { patch: `*** Begin Patch\n*** Add File: b.txt\n+b\n*** Add File: c.txt\n+c\n${move}*** End Patch\n` });
    expect(four.body.error?.code).toBe('INVALID_PARAM');
    expect(four.body.error?.details).toMatchObject({ files: 4, limit_files: 3 });
    expect(await pathExists(t.file('b.txt'))).toBe(false);
    expect(await fs.readFile(t.file('old.txt'), 'utf8')).toBe('x\n');
  });

  it('counts headers padded with whitespace as the parser reads them, and not text inside added lines', async () => {
    t = await makeApp({ TOOLGATE_PATCH_MAX_FILES: '2' });
    // An added line that reads like a header is content ('+' first); a padded header is a header.
    const two = await t.call('apply_patch', { patch: '*** Begin Patch\n  *** Add File: a.txt\n+*** Add File: not-a-file.txt\n\t*** Add File: b.txt\n+b\n*** End Patch\n' });
    expect(two.body.status, JSON.stringify(two.body.error)).toBe('success');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('*** Add File: not-a-file.txt\n');
    const three = await t.call('apply_patch', { patch: '*** Begin Patch\n*** Add File: c.txt\n+c\n \t*** Add File: d.txt\n+d\n\r*** Delete File: a.txt\n*** End Patch\n' });
    expect(three.body.error?.details).toMatchObject({ files: 3, limit_files: 2 });
  });

  it('the default limit is 1000: a dry run of 1000 files answers every diff, 1001 are refused', async () => {
    t = await makeApp();
    const at = await t.call('apply_patch', { patch: addingPatch(1000, 'd/'), dry_run: true });
    expect(at.body.status).toBe('partial');
    expect((at.body.data as { files: unknown[] }).files).toHaveLength(1000);
    const over = await t.call('apply_patch', { patch: addingPatch(1001, 'd/'), dry_run: true });
    expect(over.body.error?.details).toMatchObject({ files: 1001, limit_files: 1000 });
    expect(await pathExists(t.file('d'))).toBe(false);
  });

  it('a Responses API operation whose diff holds a patch of many files is refused as one', async () => {
    t = await makeApp();
    const res = await t.call('apply_patch', { operation: { type: 'create_file', path: 'f0.txt', diff: addingPatch(5000) } });
    expect(res.body.error?.code).toBe('INVALID_PARAM');
    expect(res.body.error?.message).toContain('holds a whole patch for other files');
    expect(await pathExists(t.file('f0.txt'))).toBe(false);
  });
});

describe('apply_patch: locks and targets', () => {
  it('a dry run takes no lock: it answers while another writer holds the file, the real run answers LOCKED', async () => {
    t = await makeApp({ TOOLGATE_LOCK_TIMEOUT_MS: '200' });
    await fs.writeFile(t.file('held.txt'), 'x\n');
    const ws = t.app.toolgate.workspace as Workspace;
    const real = await fs.realpath(t.file('held.txt'));
    const patch = '*** Begin Patch\n*** Update File: held.txt\n@@\n-x\n+y\n*** End Patch\n';
    const holder = await holdFileLock(ws, real, 'held.txt');
    try {
      const dry = await t.call('apply_patch', { patch, dry_run: true });
      expect(dry.body.status, JSON.stringify(dry.body.error)).toBe('partial');
      expect((dry.body.data as { files: { diff_preview: string }[] }).files[0]?.diff_preview).toContain('+y');
      const real2 = await t.call('apply_patch', { patch });
      expect(real2.body.error?.code).toBe('LOCKED');
    } finally {
      await holder.release();
    }
    expect(await fs.readFile(t.file('held.txt'), 'utf8')).toBe('x\n');
  });

  it('refuses two names of one file (through a symlinked directory) among many files', async () => {
    t = await makeApp();
    await fs.mkdir(t.file('real'));
    await fs.writeFile(t.file('real/f.txt'), 'x\n');
    await fs.symlink('real', t.file('alias'));
    const lines = ['*** Begin Patch', '*** Update File: real/f.txt', '@@', '-x', '+y'];
    for (let i = 0; i < 900; i++) lines.push(`*** Add File: n/f${i}.txt`, '+n');
    lines.push('*** Update File: alias/f.txt', '@@', '-x', '+z', '*** End Patch');
    const res = await t.call('apply_patch', { patch: `${lines.join('\n')}\n`, dry_run: true });
    expect(res.body.error?.code).toBe('INVALID_PARAM');
    expect(res.body.error?.message).toContain("names one file twice ('real/f.txt' and 'alias/f.txt'");
  });
});
