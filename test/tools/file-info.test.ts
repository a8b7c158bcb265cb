import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, withVersion, makeTempDir, type TestApp } from '../helpers.js';

interface Info {
  path: string;
  type: string;
  size: number;
  mode: string;
  mtime_ms: number;
  is_symlink: boolean;
  target: string | null;
  is_binary: boolean | null;
  line_count: number | null;
  version: { sha256: string | null; size_bytes: number; mtime_ms: number } | null;
}

describe('file_info', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('describes a text file with mode, line count and version', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\ntwo\nthree');
    await fs.chmod(t.file('a.txt'), 0o640);
    const r = await t.call('file_info', { path: 'a.txt' });
    expect(r.status).toBe(200);
    const d = r.body.data as Info;
    expect(d).toMatchObject({ path: 'a.txt', type: 'file', size: 13, mode: '0640', is_symlink: false, target: null, is_binary: false, line_count: 3 });
    expect(d.version?.sha256).toBe(createHash('sha256').update('one\ntwo\nthree').digest('hex'));
    expect(r.headers.etag).toBe(`"${d.version?.sha256}"`);
    expect(r.body.text).toBe(withVersion("'a.txt' is a text file of 13 bytes, 3 lines (mode 0640).", r.body));
  });

  it('binary files have no line count', async () => {
    await fs.writeFile(t.file('b.bin'), Buffer.from([0, 1, 2]));
    const d = (await t.call('file_info', { path: 'b.bin' })).body.data as Info;
    expect(d.is_binary).toBe(true);
    expect(d.line_count).toBeNull();
    expect(d.version?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('directories (and the root) have no version', async () => {
    await fs.mkdir(t.file('d'));
    const d = (await t.call('file_info', { path: 'd' })).body.data as Info;
    expect(d.type).toBe('directory');
    expect(d.version).toBeNull();
    const root = await t.call('file_info', { path: '.' });
    expect((root.body.data as Info).type).toBe('directory');
  });

  it('files over TOOLGATE_MAX_READ_BYTES get a version without sha256', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_MAX_READ_BYTES: '10' });
    await fs.writeFile(t.file('big.txt'), 'x'.repeat(100));
    const d = (await t.call('file_info', { path: 'big.txt' })).body.data as Info;
    expect(d.size).toBe(100);
    expect(d.line_count).toBeNull();
    expect(d.version).toMatchObject({ size_bytes: 100, sha256: null });
  });

  it('flags a symlink inside the workspace and shows where it leads', async () => {
    await fs.writeFile(t.file('real.txt'), 'x\n');
    await fs.symlink('real.txt', t.file('link.txt'));
    const d = (await t.call('file_info', { path: 'link.txt' })).body.data as Info;
    expect(d.is_symlink).toBe(true);
    expect(d.target).toBe('real.txt');
    expect(d.line_count).toBe(1);
  });

  it('ACCESS_DENIED for a symlink leading outside and for the state directory', async () => {
    const outside = await makeTempDir('toolgate-outside-');
    await fs.writeFile(path.join(outside, 's.txt'), 'secret');
    await fs.symlink(path.join(outside, 's.txt'), t.file('esc'));
    const r = await t.call('file_info', { path: 'esc' });
    expect(r.status).toBe(403);
    expect(r.body.error?.code).toBe('ACCESS_DENIED');
    expect(JSON.stringify(r.body)).not.toContain(outside);
    const s = await t.call('file_info', { path: '.toolgate' });
    expect(s.body.error?.code).toBe('ACCESS_DENIED');
    await fs.rm(outside, { recursive: true, force: true });
  });

  it('NOT_FOUND and INVALID_PARAM', async () => {
    const r = await t.call('file_info', { path: 'nope.txt' });
    expect(r.status).toBe(404);
    expect(r.body.error?.message).toBe('File not found: nope.txt');
    const bad = await t.call('file_info', { path: 'a', extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error?.code).toBe('INVALID_PARAM');
  });

  it('describes a FIFO without opening it', async () => {
    const { execFileSync } = await import('node:child_process');
    try {
      execFileSync('mkfifo', [t.file('fifo')]);
    } catch {
      return;
    }
    const r = await t.call('file_info', { path: 'fifo' });
    expect(r.status).toBe(200);
    expect((r.body.data as Info).type).toBe('other');
  });
});
