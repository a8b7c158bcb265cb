// Regression tests of the sandbox review (issue 12) that need no swapper: the start-up check for /proc,
// URL-looking paths, and directories swapped between the check and the operation, arranged by hand.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';

describe('a machine without /proc/self/fd', () => {
  it('refuses to start, naming the setting that accepts the weaker check', async () => {
    const base = await makeTempDir();
    try {
      const config = loadConfig({ TOOLGATE_ROOT: path.join(base, 'ws'), TOOLGATE_AUDIT_STDOUT: 'false' });
      const started = buildApp(config, { fdDir: path.join(base, 'no-proc') });
      await expect(started).rejects.toBeInstanceOf(ConfigError);
      await expect(started).rejects.toThrow(/TOOLGATE_ALLOW_WEAK_SANDBOX=true/);
    } finally {
      await fs.rm(base, { recursive: true, force: true });
    }
  });

  it('starts with TOOLGATE_ALLOW_WEAK_SANDBOX=true, says so, and still refuses a symlink leading out', async () => {
    const base = await makeTempDir();
    const warnings: string[] = [];
    const logStream = { write: (line: string) => void warnings.push(line) };
    try {
      await fs.mkdir(path.join(base, 'outside'));
      await fs.writeFile(path.join(base, 'outside', 'secret.txt'), 'secret\n');
      const config = loadConfig({ TOOLGATE_ROOT: path.join(base, 'ws'), TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_ALLOW_WEAK_SANDBOX: 'true', TOOLGATE_RATE_LIMIT: '0' });
      const app = await buildApp(config, { fdDir: path.join(base, 'no-proc'), logger: { level: 'warn', stream: logStream } });
      try {
        expect(warnings.join('')).toContain('TOOLGATE_ALLOW_WEAK_SANDBOX');
        await fs.symlink(path.join(base, 'outside'), path.join(base, 'ws', 'out'));
        const call = async (tool: string, body: object) => (await app.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body })).json();
        expect((await call('write_file', { path: 'd/a.txt', content: 'hello\n' })).status).toBe('success');
        expect((await call('read_file', { path: 'd/a.txt' })).data.content).toBe('hello\n');
        expect((await call('list_directory', { path: 'd' })).data.entries.map((e: { name: string }) => e.name)).toEqual(['a.txt']);
        expect((await call('read_file', { path: 'out/secret.txt' })).error.code).toBe('ACCESS_DENIED');
      } finally {
        await app.close();
      }
    } finally {
      await fs.rm(base, { recursive: true, force: true });
    }
  });
});

describe('a machine with /proc', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(async () => t?.close());

  it('names descriptors through its own pid, not the /proc/self link, and acts through them', async () => {
    expect(t.app.toolgate.workspace?.runtime.fdDir).toBe(`/proc/${process.pid}/fd`);
    expect((await t.call('write_file', { path: 'a/b/c.txt', content: 'deep\n' })).body.status).toBe('success');
    expect((await t.call('read_file', { path: 'a/b/c.txt' })).body.data).toMatchObject({ content: 'deep\n' });
    const listed = (await t.call('list_directory', { path: 'a/b' })).body.data as { entries: { name: string }[] };
    expect(listed.entries.map((e) => e.name)).toEqual(['c.txt']);
  });
});

describe('paths that look like URLs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(async () => t?.close());

  it('file:///etc/passwd is INVALID_PARAM saying paths are relative, and creates nothing', async () => {
    for (const p of ['file:///etc/passwd', 'https://example.com/x', 'file:/etc/passwd']) {
      for (const tool of ['write_file', 'read_file']) {
        const r = await t.call(tool, { path: p, ...(tool === 'write_file' && { content: 'x' }) });
        expect([r.status, r.body.error?.code]).toEqual([400, 'INVALID_PARAM']);
        expect(r.body.error?.message).toMatch(/relative to the workspace/);
      }
    }
    expect(await fs.readdir(t.root)).toEqual(['.toolgate']);
  });

  it('a file named with a colon is still a path', async () => {
    const r = await t.call('write_file', { path: 'notes:2026.txt', content: 'x\n' });
    expect(r.body.status).toBe('success');
  });
});

describe('a directory swapped after the check', () => {
  let t: TestApp;
  let outside = '';
  beforeAll(async () => {
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'never' });
    outside = await makeTempDir('toolgate-outside-');
    await fs.writeFile(path.join(outside, 'f.txt'), 'OUTSIDE\n');
  });
  afterAll(async () => {
    await t?.close();
    await fs.rm(outside, { recursive: true, force: true });
  });

  it('a write acts inside the directory it checked, wherever that directory has been renamed to', async () => {
    await fs.mkdir(t.file('d'));
    await fs.writeFile(t.file('d/f.txt'), 'inside\n');
    // Swap `d` for a symlink to outside while the call waits for the file lock (held here from outside).
    const { lockPathFor } = await import('../../src/workspace/locks.js');
    const lockfile = (await import('proper-lockfile')).default;
    const ws = t.app.toolgate.workspace!;
    await fs.mkdir(path.dirname(lockPathFor(ws, path.join(ws.root, 'd/f.txt'))), { recursive: true });
    const release = lockfile.lockSync(path.join(ws.root, 'd/f.txt'), { lockfilePath: lockPathFor(ws, path.join(ws.root, 'd/f.txt')), realpath: false });
    const pending = t.call('write_file', { path: 'd/f.txt', content: 'written\n' });
    await new Promise((r) => setTimeout(r, 200));
    await fs.rename(t.file('d'), t.file('d_real'));
    await fs.symlink(outside, t.file('d'));
    release();
    const r = await pending;
    expect(await fs.readFile(path.join(outside, 'f.txt'), 'utf8')).toBe('OUTSIDE\n');
    // Resolved before the swap (the usual case): written into the directory it checked. A loaded machine may
    // reach the resolution only after the swap: then the symlink leading out is refused.
    if (r.body.status === 'success') expect(await fs.readFile(t.file('d_real/f.txt'), 'utf8')).toBe('written\n');
    else expect(r.body.error?.code).toBe('ACCESS_DENIED');
  });
});
