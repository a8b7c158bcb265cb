// restore_backup by backup_id or by path (the newest backup of that file: the content before its last change).
import fs from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, sha256OfFile, type TestApp } from '../helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeApp();
});
afterEach(() => t.close());

describe('restore_backup', () => {
  it('path restores the newest backup of the file; a dry run changes nothing', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\n');
    expect((await t.call('write_file', { path: 'a.txt', content: 'two\n', expected_sha256: await sha256OfFile(t.file('a.txt')) })).status).toBe(200);
    expect((await t.call('write_file', { path: 'a.txt', content: 'three\n', expected_sha256: await sha256OfFile(t.file('a.txt')) })).status).toBe(200);

    const dry = await t.call('restore_backup', { path: 'a.txt', dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body.data).toMatchObject({ applied: false, path: 'a.txt' });
    expect(dry.body.data).toMatchObject({ diff_preview: expect.stringContaining('+two') });
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('three\n');

    const done = await t.call('restore_backup', { path: 'a.txt' });
    expect(done.status).toBe(200);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('two\n');
  });

  it('a deleted file comes back by its path', async () => {
    await fs.writeFile(t.file('gone.txt'), 'kept\n');
    expect((await t.call('delete_file', { path: 'gone.txt' })).status).toBe(200);
    expect((await t.call('restore_backup', { path: 'gone.txt' })).status).toBe(200);
    expect(await fs.readFile(t.file('gone.txt'), 'utf8')).toBe('kept\n');
  });

  it('NOT_FOUND for a file without backups; INVALID_PARAM for neither or both of backup_id and path', async () => {
    await fs.writeFile(t.file('new.txt'), 'x\n');
    const none = await t.call('restore_backup', { path: 'new.txt' });
    expect(none.status).toBe(404);
    expect(none.body.error?.message).toContain("No backup of 'new.txt'");
    expect((await t.call('restore_backup', {})).body.error?.code).toBe('INVALID_PARAM');
    expect((await t.call('restore_backup', { path: 'new.txt', backup_id: 'x' })).body.error?.code).toBe('INVALID_PARAM');
    expect((await t.call('restore_backup', { path: '../outside.txt' })).body.error?.code).toBe('ACCESS_DENIED');
  });
});
