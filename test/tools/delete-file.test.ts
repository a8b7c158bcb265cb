import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';

interface DeleteData {
  deleted: boolean;
  backup_id: string | null;
  version: { sha256: string; size_bytes: number; mtime_ms: number };
}

describe('delete_file', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'content\n');
  });
  afterEach(async () => {
    await t.close();
  });

  it('deletes a file into the backups, where restore can find it', async () => {
    const r = await t.call('delete_file', { path: 'a.txt' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    const d = r.body.data as DeleteData;
    expect(d.deleted).toBe(true);
    expect(d.backup_id).toMatch(/^[0-9a-f]{16}-/);
    expect(d.version.size_bytes).toBe(8);
    expect(r.body.context.risk).toBe('destructive');
    expect(r.body.context.risk_level).toBe('high');
    await expect(fs.stat(t.file('a.txt'))).rejects.toThrow();
    const restored = await t.call('restore_backup', { backup_id: d.backup_id });
    expect(restored.status).toBe(200);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('content\n');
  });

  it('deletes without a backup when backups are disabled', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_BACKUP_KEEP: '0' });
    await fs.writeFile(t.file('a.txt'), 'x');
    const r = await t.call('delete_file', { path: 'a.txt' });
    expect(r.status).toBe(200);
    expect((r.body.data as DeleteData).backup_id).toBeNull();
    await expect(fs.stat(t.file('a.txt'))).rejects.toThrow();
  });

  it('dry run deletes nothing and answers partial', async () => {
    const r = await t.call('delete_file', { path: 'a.txt', dry_run: true });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('partial');
    expect(r.body.text).toBe("[Dry Run] Would delete 'a.txt' (8 bytes).");
    expect((r.body.data as DeleteData).deleted).toBe(false);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('content\n');
  });

  it('answers to the file-delete alias', async () => {
    const r = await t.call('file-delete', { path: 'a.txt' });
    expect(r.status).toBe(200);
    await expect(fs.stat(t.file('a.txt'))).rejects.toThrow();
  });

  it('NOT_FOUND for a missing file (fixed message)', async () => {
    const r = await t.call('delete_file', { path: 'gone.txt' });
    expect(r.status).toBe(404);
    expect(r.body.error?.message).toBe('File not found: gone.txt');
  });

  it('IS_DIRECTORY for a directory, which stays', async () => {
    await fs.mkdir(t.file('d'));
    const r = await t.call('delete_file', { path: 'd' });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('IS_DIRECTORY');
    expect((await fs.stat(t.file('d'))).isDirectory()).toBe(true);
  });

  it('NOT_REGULAR_FILE for a symlink name; neither the link nor its target is touched', async () => {
    await fs.symlink('a.txt', t.file('link'));
    const r = await t.call('delete_file', { path: 'link' });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('NOT_REGULAR_FILE');
    expect((await fs.lstat(t.file('link'))).isSymbolicLink()).toBe(true);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('content\n');
  });

  it('ACCESS_DENIED outside the workspace and in the state directory', async () => {
    expect((await t.call('delete_file', { path: '../a.txt' })).status).toBe(403);
    const s = await t.call('delete_file', { path: '.toolgate/locks' });
    expect(s.status).toBe(403);
    expect(s.body.error?.code).toBe('ACCESS_DENIED');
  });

  it('CONFLICT for a stale version; the file stays', async () => {
    const r = await t.call('delete_file', { path: 'a.txt', expected_size_bytes: 3 });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('CONFLICT');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('content\n');
    const v = (r.body.error?.details as { current: { sha256: string } }).current;
    const ok = await t.call('delete_file', { path: 'a.txt' }, { 'if-match': `"${v.sha256}"` });
    expect(ok.status).toBe(200);
  });

  it('VERSION_REQUIRED under TOOLGATE_REQUIRE_VERSION=always', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'always' });
    await fs.writeFile(t.file('a.txt'), 'x');
    const r = await t.call('delete_file', { path: 'a.txt' });
    expect(r.status).toBe(428);
    expect(r.body.error?.code).toBe('VERSION_REQUIRED');
    const info = await t.call('file_info', { path: 'a.txt' });
    const sha = (info.body.data as { version: { sha256: string } }).version.sha256;
    expect((await t.call('delete_file', { path: 'a.txt', expected_sha256: sha })).status).toBe(200);
  });

  it("deletes a file of another project ([id]/path) into that project's backups", async () => {
    await t.close();
    const base = await makeTempDir('toolgate-projects-');
    await fs.mkdir(path.join(base, 'p1'));
    await fs.mkdir(path.join(base, 'p2'));
    await fs.writeFile(path.join(base, 'p2/x.txt'), 'p2 content');
    t = await makeApp({ TOOLGATE_PROJECTS_ROOT: base });
    const r = await t.call('delete_file', { path: '[p2]/x.txt' }, { 'x-project-id': 'p1' });
    expect(r.status).toBe(200);
    await expect(fs.stat(path.join(base, 'p2/x.txt'))).rejects.toThrow();
    await expect(fs.stat(path.join(base, 'p1/.toolgate/backups'))).rejects.toThrow();
    const id = (r.body.data as DeleteData).backup_id;
    const restored = await t.call('restore_backup', { backup_id: id }, { 'x-project-id': 'p2' });
    expect(restored.status).toBe(200);
    expect(await fs.readFile(path.join(base, 'p2/x.txt'), 'utf8')).toBe('p2 content');
    await fs.rm(base, { recursive: true, force: true });
  });

  it('INVALID_PARAM for the root and unknown parameters', async () => {
    expect((await t.call('delete_file', { path: '.' })).body.error?.code).toBe('INVALID_PARAM');
    expect((await t.call('delete_file', { path: 'a.txt', recursive: true })).body.error?.code).toBe('INVALID_PARAM');
  });
});
