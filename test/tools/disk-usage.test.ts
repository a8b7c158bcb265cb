import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, sha256OfFile, type TestApp } from '../helpers.js';

interface UsageData {
  path: string;
  bytes: number;
  disk_bytes: number;
  files: number;
  directories: number;
  truncated: boolean;
  volume: { free_bytes: number; total_bytes: number };
}

describe('disk_usage', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeApp();
    await fs.mkdir(t.file('a/b'), { recursive: true });
    await fs.mkdir(t.file('node_modules'));
    await fs.writeFile(t.file('one.txt'), 'x'.repeat(100));
    await fs.writeFile(t.file('a/two.txt'), 'x'.repeat(200));
    await fs.writeFile(t.file('a/b/three.txt'), 'x'.repeat(300));
    await fs.writeFile(t.file('node_modules/m.js'), 'x'.repeat(400));
  });
  afterEach(async () => {
    await t.close();
  });

  it('sums the files under the workspace, not counting the state directory', async () => {
    await t.call('write_file', { path: 'one.txt', content: 'y'.repeat(100), expected_sha256: await sha256OfFile(t.file('one.txt')) }); // a backup in the state dir
    const r = await t.call('disk_usage', {});
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    const d = r.body.data as UsageData;
    expect(d).toMatchObject({ path: '.', bytes: 1000, files: 4, directories: 3, truncated: false });
    expect(d.disk_bytes).toBeGreaterThanOrEqual(0);
    expect(d.volume.total_bytes).toBeGreaterThan(0);
    expect(d.volume.free_bytes).toBeGreaterThan(0);
    expect(d.volume.free_bytes).toBeLessThanOrEqual(d.volume.total_bytes);
  });

  it('a subdirectory and a single file', async () => {
    expect((await t.call('disk_usage', { path: 'a' })).body.data).toMatchObject({ bytes: 500, files: 2, directories: 1 });
    expect((await t.call('disk_usage', { path: 'a/two.txt' })).body.data).toMatchObject({ bytes: 200, files: 1, directories: 0 });
  });

  it('does not follow symlinks out of the workspace', async () => {
    const outside = await makeTempDir('toolgate-outside-');
    await fs.writeFile(path.join(outside, 'big'), Buffer.alloc(10_000));
    await fs.symlink(outside, t.file('esc'));
    const d = (await t.call('disk_usage', {})).body.data as UsageData;
    expect(d.bytes).toBe(1000);
    expect((await t.call('disk_usage', { path: 'esc' })).body.error?.code).toBe('ACCESS_DENIED');
    await fs.rm(outside, { recursive: true, force: true });
  });

  it('bounded by TOOLGATE_SEARCH_MAX_FILES: truncated, partial', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_SEARCH_MAX_FILES: '2' });
    for (let i = 0; i < 5; i++) await fs.writeFile(t.file(`f${i}`), 'x');
    const r = await t.call('disk_usage', {});
    expect(r.body.status).toBe('partial');
    expect((r.body.data as UsageData).truncated).toBe(true);
    expect((r.body.data as UsageData).files).toBe(2);
  });

  it('NOT_FOUND, ACCESS_DENIED and INVALID_PARAM', async () => {
    const r = await t.call('disk_usage', { path: 'missing' });
    expect(r.status).toBe(404);
    expect(r.body.error?.message).toBe('File not found: missing');
    expect((await t.call('disk_usage', { path: '.toolgate' })).status).toBe(403);
    expect((await t.call('disk_usage', { path: '/abs' })).status).toBe(400);
    expect((await t.call('disk_usage', { depth: 1 })).status).toBe(400);
  });
});
