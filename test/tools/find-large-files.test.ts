import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, sha256OfFile, type TestApp } from '../helpers.js';

interface LargeData {
  files: { path: string; size: number; mtime_ms: number }[];
  files_scanned: number;
  truncated: boolean;
}

describe('find_large_files', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeApp();
    await fs.mkdir(t.file('logs/old'), { recursive: true });
    await fs.mkdir(t.file('node_modules/pkg'), { recursive: true });
    await fs.writeFile(t.file('small.txt'), 'x'.repeat(10));
    await fs.writeFile(t.file('logs/a.log'), 'x'.repeat(3000));
    await fs.writeFile(t.file('logs/old/b.log'), 'x'.repeat(5000));
    await fs.writeFile(t.file('node_modules/pkg/big.js'), 'x'.repeat(4000));
  });
  afterEach(async () => {
    await t.close();
  });

  it('lists files over the threshold, largest first, everywhere but the state directory', async () => {
    await t.call('write_file', { path: 'w.txt', content: 'y'.repeat(100) });
    await t.call('write_file', { path: 'w.txt', content: 'z'.repeat(9000), expected_sha256: await sha256OfFile(t.file('w.txt')) }); // leaves a 100-byte backup
    const r = await t.call('find_large_files', { min_size_bytes: 1000 });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    const d = r.body.data as LargeData;
    expect(d.files.map((f) => [f.path, f.size])).toEqual([
      ['w.txt', 9000],
      ['logs/old/b.log', 5000],
      ['node_modules/pkg/big.js', 4000],
      ['logs/a.log', 3000],
    ]);
    expect(d.truncated).toBe(false);
    expect(d.files_scanned).toBe(5);
    expect(r.body.text).toContain("Largest: 'w.txt'");
  });

  it('the default threshold is 10 MiB; limit and path narrow the answer', async () => {
    const none = await t.call('find_large_files', {});
    expect((none.body.data as LargeData).files).toEqual([]);
    expect(none.body.text).toContain('No files of at least 10.0 MiB');
    const one = await t.call('find_large_files', { path: 'logs', min_size_bytes: 1, limit: 1 });
    expect((one.body.data as LargeData).files.map((f) => f.path)).toEqual(['logs/old/b.log']);
  });

  it('never follows symlinks out of the workspace', async () => {
    const outside = await makeTempDir('toolgate-outside-');
    await fs.writeFile(path.join(outside, 'huge.bin'), Buffer.alloc(50_000));
    await fs.symlink(outside, t.file('esc'));
    await fs.symlink(path.join(outside, 'huge.bin'), t.file('huge-link'));
    const r = await t.call('find_large_files', { min_size_bytes: 10_000 });
    expect((r.body.data as LargeData).files).toEqual([]);
    await fs.rm(outside, { recursive: true, force: true });
  });

  it('stops at TOOLGATE_SEARCH_MAX_FILES with truncated and status partial', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_SEARCH_MAX_FILES: '2' });
    for (let i = 0; i < 5; i++) await fs.writeFile(t.file(`f${i}`), 'x'.repeat(100));
    const r = await t.call('find_large_files', { min_size_bytes: 1 });
    expect(r.body.status).toBe('partial');
    expect((r.body.data as LargeData).truncated).toBe(true);
  });

  it('NOT_FOUND, NOT_A_DIRECTORY, ACCESS_DENIED and INVALID_PARAM', async () => {
    expect((await t.call('find_large_files', { path: 'nope' })).status).toBe(404);
    const f = await t.call('find_large_files', { path: 'small.txt' });
    expect(f.status).toBe(409);
    expect(f.body.error?.code).toBe('NOT_A_DIRECTORY');
    expect((await t.call('find_large_files', { path: '.toolgate' })).body.error?.code).toBe('ACCESS_DENIED');
    expect((await t.call('find_large_files', { path: '..' })).body.error?.code).toBe('ACCESS_DENIED');
    for (const body of [{ min_size_bytes: -1 }, { limit: 0 }, { limit: 1001 }, { size: 1 }]) {
      expect((await t.call('find_large_files', body)).status).toBe(400);
    }
  });
});
