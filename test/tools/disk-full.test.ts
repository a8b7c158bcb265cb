// DISK_FULL on a real full volume: the workspace lives on a small tmpfs mounted for this test (needs root).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Envelope } from '../../src/envelope.js';
import { makeTempDir } from '../helpers.js';

let mountPoint = '';
let mounted = false;
let app: Awaited<ReturnType<typeof buildApp>> | undefined;

beforeAll(async () => {
  mountPoint = await makeTempDir('toolgate-full-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mountPoint], { stdio: 'ignore' });
    mounted = true;
  } catch {
    return;
  }
  app = await buildApp(loadConfig({ TOOLGATE_ROOT: mountPoint, TOOLGATE_REQUIRE_VERSION: 'never', TOOLGATE_BACKUP_KEEP: '0', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_AUDIT: 'false' }));
});
afterAll(async () => {
  await app?.close();
  if (mounted) execFileSync('umount', [mountPoint]);
  await fs.rm(mountPoint, { recursive: true, force: true });
});

async function call(tool: string, body: unknown): Promise<{ status: number; body: Envelope }> {
  const res = await app!.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body as object });
  return { status: res.statusCode, body: res.json() as Envelope };
}

describe('a full volume', () => {
  it('answers DISK_FULL (507), keeps the old content and leaves no temp file', async (ctx) => {
    if (!mounted) ctx.skip();
    expect((await call('write_file', { path: 'keep.txt', content: 'old content\n' })).body.status).toBe('success');
    expect((await call('write_file', { path: 'big.bin', content: 'x'.repeat(300 * 1024) })).body.data).toMatchObject({ applied: true });
    const r = await call('write_file', { path: 'keep.txt', content: 'y'.repeat(300 * 1024) });
    expect([r.status, r.body.error?.code]).toEqual([507, 'DISK_FULL']);
    expect(await fs.readFile(path.join(mountPoint, 'keep.txt'), 'utf8')).toBe('old content\n');
    const tmp = path.join(mountPoint, '.toolgate', 'tmp');
    const leftovers = (await fs.readdir(tmp, { recursive: true, withFileTypes: true }).catch(() => [])).filter((e) => e.isFile() && e.name !== '.owner'); // the temp directory's owner record stays
    expect(leftovers).toEqual([]);
    const append = await call('append_to_file', { path: 'keep.txt', content: 'z'.repeat(300 * 1024) });
    expect(append.body.error?.code).toBe('DISK_FULL');
    expect(await fs.readFile(path.join(mountPoint, 'keep.txt'), 'utf8')).toBe('old content\n');
  });
});
