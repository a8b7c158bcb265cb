import fs from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, withVersion, type TestApp } from '../helpers.js';

describe('append_to_file', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('appends to an existing file, keeps its mode and backs up the old content', async () => {
    await fs.writeFile(t.file('.env'), 'TOKEN=x\n', { mode: 0o600 });
    await fs.chmod(t.file('.env'), 0o600);
    const r = await t.call('append_to_file', { path: '.env', content: 'API_KEY=z\n' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    expect(r.body.text).toBe(withVersion("Appended 10 chars (1 line) to '.env' (now 18 bytes).", r.body));
    expect(await fs.readFile(t.file('.env'), 'utf8')).toBe('TOKEN=x\nAPI_KEY=z\n');
    expect((await fs.stat(t.file('.env'))).mode & 0o777).toBe(0o600);
    const data = r.body.data as Record<string, unknown>;
    expect(data.applied).toBe(true);
    expect(data.lines_added).toBe(1);
    expect(data.lines_removed).toBe(0);
    expect(data.diff_preview).toContain('+API_KEY=z');
    expect(typeof data.backup_id).toBe('string');
    expect(r.body.context.risk_level).toBe('medium');
    expect(r.body.stats.bytes_written).toBe(18);
    const backups = await t.call('list_backups', { path: '.env' });
    expect(backups.status).toBe(200);
    expect(JSON.stringify(backups.body.data)).toContain(data.backup_id as string);
  });

  it('returns the new version and ETag', async () => {
    await fs.writeFile(t.file('a.txt'), 'a\n');
    const r = await t.call('append_to_file', { path: 'a.txt', content: 'b\n' });
    const v = (r.body.data as { version: { sha256: string; size_bytes: number } }).version;
    expect(v.size_bytes).toBe(4);
    expect(r.headers.etag).toBe(`"${v.sha256}"`);
  });

  it('dry run writes nothing and answers partial', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\n');
    const r = await t.call('append_to_file', { path: 'a.txt', content: 'two\n', dry_run: true });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('partial');
    expect(r.body.text).toBe(withVersion("[Dry Run] Would append 4 chars to 'a.txt' (+1/-0 lines).", r.body));
    expect((r.body.data as { applied: boolean }).applied).toBe(false);
    expect((r.body.data as { diff_preview: string }).diff_preview).toContain('+two');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('one\n');
  });

  it('keeps CRLF line endings of the file', async () => {
    await fs.writeFile(t.file('w.txt'), 'a\r\nb\r\n');
    await t.call('append_to_file', { path: 'w.txt', content: 'c\nd\n' });
    expect(await fs.readFile(t.file('w.txt'), 'utf8')).toBe('a\r\nb\r\nc\r\nd\r\n');
  });

  it('NOT_FOUND when the file does not exist (fixed message)', async () => {
    const r = await t.call('append_to_file', { path: 'missing/.env', content: 'x' });
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe('NOT_FOUND');
    expect(r.body.error?.message).toBe('File not found: missing/.env');
    await expect(fs.stat(t.file('missing'))).rejects.toThrow();
  });

  it('IS_DIRECTORY for a directory', async () => {
    await fs.mkdir(t.file('d'));
    const r = await t.call('append_to_file', { path: 'd', content: 'x' });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('IS_DIRECTORY');
  });

  it('FILE_TOO_LARGE over TOOLGATE_MAX_WRITE_BYTES', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_MAX_WRITE_BYTES: '10' });
    await fs.writeFile(t.file('a.txt'), 'a\n');
    const r = await t.call('append_to_file', { path: 'a.txt', content: 'x'.repeat(11) });
    expect(r.status).toBe(413);
    expect(r.body.error?.code).toBe('FILE_TOO_LARGE');
    expect(r.body.error?.message).toContain('TOOLGATE_MAX_WRITE_BYTES');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('a\n');
  });

  it('BINARY_FILE for a binary file', async () => {
    await fs.writeFile(t.file('b.bin'), Buffer.from([1, 0, 2]));
    const r = await t.call('append_to_file', { path: 'b.bin', content: 'x' });
    expect(r.status).toBe(422);
    expect(r.body.error?.code).toBe('BINARY_FILE');
  });

  it('INVALID_PARAM for empty content, unknown parameters and absolute paths', async () => {
    await fs.writeFile(t.file('a.txt'), 'a\n');
    for (const body of [{ path: 'a.txt', content: '' }, { path: 'a.txt', content: 'x', mode: 'w' }, { path: '/etc/passwd', content: 'x' }, { path: 'a.txt' }]) {
      const r = await t.call('append_to_file', body);
      expect(r.status).toBe(400);
      expect(r.body.error?.code).toBe('INVALID_PARAM');
    }
  });

  it('ACCESS_DENIED outside the workspace and for the state directory', async () => {
    const out = await t.call('append_to_file', { path: '../x', content: 'x' });
    expect(out.status).toBe(403);
    expect(out.body.error?.code).toBe('ACCESS_DENIED');
    const state = await t.call('append_to_file', { path: '.toolgate/x', content: 'x' });
    expect(state.status).toBe(403);
    expect(state.body.error?.code).toBe('ACCESS_DENIED');
  });

  it('CONFLICT when the expected version is stale; succeeds with the right one', async () => {
    await fs.writeFile(t.file('a.txt'), 'a\n');
    const read = await t.call('read_file', { path: 'a.txt' });
    const version = (read.body.data as { version: { sha256: string; size_bytes: number } }).version;
    const stale = await t.call('append_to_file', { path: 'a.txt', content: 'b\n', expected_sha256: '0'.repeat(64) });
    expect(stale.status).toBe(409);
    expect(stale.body.error?.code).toBe('CONFLICT');
    expect((stale.body.error?.details as { current: { sha256: string } }).current.sha256).toBe(version.sha256);
    const wrongSize = await t.call('append_to_file', { path: 'a.txt', content: 'b\n', expected_size_bytes: 99 });
    expect(wrongSize.body.error?.code).toBe('CONFLICT');
    const ifMatch = await t.call('append_to_file', { path: 'a.txt', content: 'b\n' }, { 'if-match': '"deadbeef"' });
    expect(ifMatch.body.error?.code).toBe('CONFLICT');
    const good = await t.call('append_to_file', { path: 'a.txt', content: 'b\n', expected_sha256: version.sha256 });
    expect(good.status).toBe(200);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('a\nb\n');
  });

  it('VERSION_REQUIRED under TOOLGATE_REQUIRE_VERSION=always', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'always' });
    await fs.writeFile(t.file('a.txt'), 'a\n');
    const r = await t.call('append_to_file', { path: 'a.txt', content: 'b\n' });
    expect(r.status).toBe(428);
    expect(r.body.error?.code).toBe('VERSION_REQUIRED');
  });

  it('NOT_REGULAR_FILE for a FIFO', async () => {
    const { execFileSync } = await import('node:child_process');
    try {
      execFileSync('mkfifo', [t.file('fifo')]);
    } catch {
      return; // no mkfifo on this system
    }
    const r = await t.call('append_to_file', { path: 'fifo', content: 'x' });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('NOT_REGULAR_FILE');
  });
});
