import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, withVersion, makeTempDir, type TestApp } from '../helpers.js';

interface MoveData {
  moved: boolean;
  type: string;
  source: string;
  destination: string;
  overwritten: boolean;
  backup_id: string | null;
  created_directory: string | null;
  version: { sha256: string; size_bytes: number; mtime_ms: number } | null;
}

describe('move_file', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'A\n');
    await fs.chmod(t.file('a.txt'), 0o600);
  });
  afterEach(async () => {
    await t.close();
  });

  it('renames a file, keeping its content, mode and version', async () => {
    const r = await t.call('move_file', { path: 'a.txt', destination: 'b.txt' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    const d = r.body.data as MoveData;
    expect(d).toMatchObject({ moved: true, type: 'file', source: 'a.txt', destination: 'b.txt', overwritten: false, backup_id: null, created_directory: null });
    expect(d.version?.size_bytes).toBe(2);
    expect(r.headers.etag).toBe(`"${d.version?.sha256}"`);
    expect(r.body.text).toBe(withVersion("Moved file 'a.txt' to 'b.txt'.", r.body));
    await expect(fs.stat(t.file('a.txt'))).rejects.toThrow();
    expect(await fs.readFile(t.file('b.txt'), 'utf8')).toBe('A\n');
    expect((await fs.stat(t.file('b.txt'))).mode & 0o777).toBe(0o600);
  });

  it("creates the destination's parent directories", async () => {
    const r = await t.call('move_file', { path: 'a.txt', destination: 'x/y/a.txt' });
    expect(r.status).toBe(200);
    expect((r.body.data as MoveData).created_directory).toBe('x/');
    expect(r.body.text).toContain('(Created directory: x/)');
    expect(await fs.readFile(t.file('x/y/a.txt'), 'utf8')).toBe('A\n');
  });

  it('ALREADY_EXISTS without overwrite; both files stay', async () => {
    await fs.writeFile(t.file('b.txt'), 'B\n');
    const r = await t.call('move_file', { path: 'a.txt', destination: 'b.txt' });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('ALREADY_EXISTS');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('A\n');
    expect(await fs.readFile(t.file('b.txt'), 'utf8')).toBe('B\n');
  });

  it('overwrite replaces the destination and backs it up', async () => {
    await fs.writeFile(t.file('b.txt'), 'B\n');
    const r = await t.call('move_file', { path: 'a.txt', destination: 'b.txt', overwrite: true });
    expect(r.status).toBe(200);
    const d = r.body.data as MoveData;
    expect(d.overwritten).toBe(true);
    expect(d.backup_id).toMatch(/^[0-9a-f]{16}-/);
    expect(await fs.readFile(t.file('b.txt'), 'utf8')).toBe('A\n');
    const restored = await t.call('restore_backup', { backup_id: d.backup_id, expected_sha256: d.version?.sha256 });
    expect(restored.status).toBe(200);
    expect(await fs.readFile(t.file('b.txt'), 'utf8')).toBe('B\n');
  });

  it('moves a directory, but never into itself or over an existing directory', async () => {
    await fs.mkdir(t.file('d/sub'), { recursive: true });
    await fs.writeFile(t.file('d/sub/f.txt'), 'f');
    const into = await t.call('move_file', { path: 'd', destination: 'd/sub/d2' });
    expect(into.status).toBe(400);
    expect(into.body.error?.code).toBe('INVALID_PARAM');
    await fs.mkdir(t.file('e'));
    const over = await t.call('move_file', { path: 'd', destination: 'e', overwrite: true });
    expect(over.status).toBe(409);
    expect(over.body.error?.code).toBe('ALREADY_EXISTS');
    await fs.writeFile(t.file('file'), 'x');
    const overFile = await t.call('move_file', { path: 'd', destination: 'file', overwrite: true });
    expect(overFile.body.error?.code).toBe('ALREADY_EXISTS');
    const ok = await t.call('move_file', { path: 'd', destination: 'moved/d' });
    expect(ok.status).toBe(200);
    expect((ok.body.data as MoveData).type).toBe('directory');
    expect((ok.body.data as MoveData).version).toBeNull();
    expect(await fs.readFile(t.file('moved/d/sub/f.txt'), 'utf8')).toBe('f');
  });

  it('a file onto an existing directory is ALREADY_EXISTS', async () => {
    await fs.mkdir(t.file('dir'));
    const r = await t.call('move_file', { path: 'a.txt', destination: 'dir', overwrite: true });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('ALREADY_EXISTS');
  });

  it('NOT_FOUND for a missing source (fixed message)', async () => {
    const r = await t.call('move_file', { path: 'nope.txt', destination: 'b.txt' });
    expect(r.status).toBe(404);
    expect(r.body.error?.message).toBe('File not found: nope.txt');
  });

  it('INVALID_PARAM for the same path, the root, and missing destination', async () => {
    expect((await t.call('move_file', { path: 'a.txt', destination: './a.txt' })).body.error?.code).toBe('INVALID_PARAM');
    expect((await t.call('move_file', { path: '.', destination: 'x' })).body.error?.code).toBe('INVALID_PARAM');
    expect((await t.call('move_file', { path: 'a.txt' })).status).toBe(400);
  });

  it('ACCESS_DENIED for either path outside the workspace or in the state directory', async () => {
    const outside = await makeTempDir('toolgate-outside-');
    await fs.symlink(outside, t.file('esc'));
    for (const body of [
      { path: 'a.txt', destination: '../a.txt' },
      { path: '../x', destination: 'b.txt' },
      { path: 'a.txt', destination: 'esc/a.txt' },
      { path: 'a.txt', destination: '.toolgate/a.txt' },
      { path: '.toolgate', destination: 'state' },
    ]) {
      const r = await t.call('move_file', body);
      expect(r.status, JSON.stringify(body)).toBe(403);
      expect(r.body.error?.code).toBe('ACCESS_DENIED');
    }
    expect(await fs.readdir(outside)).toEqual([]);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('A\n');
    await fs.rm(outside, { recursive: true, force: true });
  });

  it('NOT_REGULAR_FILE for a symlink source; the link stays', async () => {
    await fs.symlink('a.txt', t.file('link'));
    const r = await t.call('move_file', { path: 'link', destination: 'l2' });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('NOT_REGULAR_FILE');
    expect((await fs.lstat(t.file('link'))).isSymbolicLink()).toBe(true);
  });

  it('CONFLICT for a stale source version; nothing moves', async () => {
    const r = await t.call('move_file', { path: 'a.txt', destination: 'b.txt', expected_sha256: '1'.repeat(64) });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('CONFLICT');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('A\n');
    await expect(fs.stat(t.file('b.txt'))).rejects.toThrow();
    const sha = (r.body.error?.details as { current: { sha256: string } }).current.sha256;
    expect((await t.call('move_file', { path: 'a.txt', destination: 'b.txt', expected_sha256: sha })).status).toBe(200);
  });

  it('VERSION_REQUIRED under TOOLGATE_REQUIRE_VERSION=always', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'always' });
    await fs.writeFile(t.file('a.txt'), 'x');
    const r = await t.call('move_file', { path: 'a.txt', destination: 'b.txt' });
    expect(r.status).toBe(428);
    expect(r.body.error?.code).toBe('VERSION_REQUIRED');
  });

  it('two opposite moves at once do not deadlock', async () => {
    await fs.writeFile(t.file('b.txt'), 'B\n');
    const [x, y] = await Promise.all([
      t.call('move_file', { path: 'a.txt', destination: 'b.txt', overwrite: true }),
      t.call('move_file', { path: 'b.txt', destination: 'a.txt', overwrite: true }),
    ]);
    // Whichever runs second finds its source moved away or moves it back; neither waits for a lock forever.
    for (const r of [x, y]) expect([200, 404]).toContain(r.status);
    expect(x.status === 200 || y.status === 200).toBe(true);
    const left = (await fs.readdir(t.root)).filter((n) => !n.startsWith('.'));
    expect(left).toHaveLength(1);
  });

  it('source/dest aliases are accepted', async () => {
    const r = await t.call('move_file', { source: 'a.txt', dest: path.posix.join('z', 'a.txt') });
    expect(r.status).toBe(200);
  });
});
