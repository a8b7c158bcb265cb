// PERMISSION_DENIED needs a caller the OS refuses; as root the test drops its effective uid to
// nobody around the calls (this file runs in its own worker process).
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers.js';

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;
let t: TestApp;

async function asNobody<T>(fn: () => Promise<T>): Promise<T> {
  process.seteuid?.(NOBODY);
  try {
    return await fn();
  } finally {
    process.seteuid?.(0);
  }
}

beforeAll(async () => {
  t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'never' });
  // nobody may enter the workspace and read world-readable files, nothing more.
  for (let dir = t.root; dir !== '/' && dir.startsWith('/tmp/'); dir = dir.slice(0, dir.lastIndexOf('/'))) await fs.chmod(dir, 0o755);
  await fs.writeFile(t.file('secret.txt'), 'top secret\n', { mode: 0o600 });
  await fs.writeFile(t.file('public.txt'), 'hello\n', { mode: 0o644 });
});
afterAll(async () => {
  await t.close();
});

describe.skipIf(!isRoot)('PERMISSION_DENIED ("Permission denied: <path>")', () => {
  it('reading a file the OS does not let the service read', async () => {
    const r = await asNobody(() => t.call('read_file', { path: 'secret.txt' }));
    expect([r.status, r.body.error?.code, r.body.error?.message]).toEqual([403, 'PERMISSION_DENIED', 'Permission denied: secret.txt']);
  });

  it('writing where the OS refuses leaves the file as it was', async () => {
    const r = await asNobody(() => t.call('write_file', { path: 'public.txt', content: 'changed\n' }));
    expect([r.status, r.body.error?.code, r.body.error?.message]).toEqual([403, 'PERMISSION_DENIED', 'Permission denied: public.txt']);
    expect(await fs.readFile(t.file('public.txt'), 'utf8')).toBe('hello\n');
  });

  it('creating a file in a directory the service may not write', async () => {
    const r = await asNobody(() => t.call('write_file', { path: 'new.env', content: 'TOKEN=x\n' }));
    expect([r.status, r.body.error?.code, r.body.error?.message]).toEqual([403, 'PERMISSION_DENIED', 'Permission denied: new.env']);
    await expect(fs.stat(t.file('new.env'))).rejects.toThrow();
  });
});
