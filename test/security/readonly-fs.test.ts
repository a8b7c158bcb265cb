// Regression tests of the sandbox review (issue 12): a read-only file system, a directory the service
// cannot read and a file without write permission each answer PERMISSION_DENIED and change nothing.
// The read-only volume is a tmpfs mounted for this file, which needs root, as do the uid switches.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Envelope } from '../../src/envelope.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';

const NOBODY = 65534;

describe('read-only file system', () => {
  let base = '';
  let mountPoint = '';
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('this suite mounts a tmpfs and switches uids: run the tests as root (the CI container does)');
    base = await makeTempDir('toolgate-ro-');
    mountPoint = path.join(base, 'ws');
    await fs.mkdir(mountPoint);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint]);
    await fs.mkdir(path.join(mountPoint, 'docs'));
    await fs.writeFile(path.join(mountPoint, 'docs', 'a.txt'), 'kept\n');
    execFileSync('mount', ['-o', 'remount,ro', mountPoint]);
    // The state directory stays writable (it is another volume here), so only the workspace refuses.
    app = await buildApp(loadConfig({ TOOLGATE_ROOT: mountPoint, TOOLGATE_STATE_DIR: path.join(base, 'state'), TOOLGATE_REQUIRE_VERSION: 'never', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_AUDIT_STDOUT: 'false' }));
  });
  afterAll(async () => {
    await app?.close();
    if (mountPoint) execFileSync('umount', [mountPoint]);
    if (base) await fs.rm(base, { recursive: true, force: true });
  });

  async function call(tool: string, body: unknown): Promise<{ status: number; body: Envelope }> {
    const res = await app!.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body as object });
    return { status: res.statusCode, body: res.json() as Envelope };
  }

  it('create_directory on a read-only file system is PERMISSION_DENIED, not NOT_FOUND', async () => {
    for (const p of ['newdir', 'docs/new/deeper']) {
      const r = await call('create_directory', { path: p });
      expect([r.status, r.body.error?.code], JSON.stringify(r.body)).toEqual([403, 'PERMISSION_DENIED']);
    }
  });

  it('write_file on a read-only file system is PERMISSION_DENIED and the file is unchanged', async () => {
    const r = await call('write_file', { path: 'docs/a.txt', content: 'changed\n' });
    expect([r.status, r.body.error?.code]).toEqual([403, 'PERMISSION_DENIED']);
    expect(await fs.readFile(path.join(mountPoint, 'docs', 'a.txt'), 'utf8')).toBe('kept\n');
  });
});

describe('permissions the service lacks', () => {
  let t: TestApp;
  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('this suite switches uids: run the tests as root (the CI container does)');
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'never' });
    for (let dir = t.root; dir !== '/' && dir.startsWith('/tmp/'); dir = dir.slice(0, dir.lastIndexOf('/'))) await fs.chmod(dir, 0o755);
    await fs.mkdir(t.file('closed'), { mode: 0o711 });
    await fs.chmod(t.file('closed'), 0o711); // enterable, not listable
    await fs.writeFile(t.file('closed/inside.txt'), 'x\n', { mode: 0o644 });
    await fs.writeFile(t.file('frozen.txt'), 'frozen\n');
    await fs.chmod(t.file('frozen.txt'), 0o444);
  });
  afterAll(async () => t?.close());

  async function asNobody<T>(fn: () => Promise<T>): Promise<T> {
    process.seteuid?.(NOBODY);
    try {
      return await fn();
    } finally {
      process.seteuid?.(0);
    }
  }

  it('a directory the service cannot read lists as PERMISSION_DENIED, not as 0 entries', async () => {
    const r = await asNobody(() => t.call('list_directory', { path: 'closed' }));
    expect([r.status, r.body.error?.code], JSON.stringify(r.body)).toEqual([403, 'PERMISSION_DENIED']);
    // Still enterable: a file inside reads (the walk through it needs no read permission).
    const inside = await asNobody(() => t.call('read_file', { path: 'closed/inside.txt' }));
    expect(inside.body.status).toBe('success');
  });

  it('a file with mode 0444 is not replaced by the rename: PERMISSION_DENIED, content and mode kept', async () => {
    for (const [tool, args] of [
      ['write_file', { content: 'thawed\n' }],
      ['append_to_file', { content: 'more\n' }],
      ['edit_file', { old_text: 'frozen', new_text: 'thawed' }],
      ['replace_in_file', { old: 'frozen', new: 'thawed' }],
    ] as const) {
      const r = await t.call(tool, { path: 'frozen.txt', ...args });
      expect([tool, r.status, r.body.error?.code]).toEqual([tool, 403, 'PERMISSION_DENIED']);
    }
    expect(await fs.readFile(t.file('frozen.txt'), 'utf8')).toBe('frozen\n');
    expect((await fs.stat(t.file('frozen.txt'))).mode & 0o777).toBe(0o444);
  });

  it('a file of another owner without write permission for the service is PERMISSION_DENIED', async () => {
    await fs.writeFile(t.file('theirs.txt'), 'theirs\n', { mode: 0o644 });
    const r = await asNobody(() => t.call('write_file', { path: 'theirs.txt', content: 'mine\n' }));
    expect([r.status, r.body.error?.code]).toEqual([403, 'PERMISSION_DENIED']);
    expect(await fs.readFile(t.file('theirs.txt'), 'utf8')).toBe('theirs\n');
  });
});
