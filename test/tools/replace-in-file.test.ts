import fs from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, withVersion, type TestApp } from '../helpers.js';

interface ReplaceData {
  replacements: number;
  applied: boolean;
  diff_preview: string;
  diff_truncated: boolean;
  lines_added: number;
  lines_removed: number;
  backup_id: string | null;
  version: { sha256: string; size_bytes: number; mtime_ms: number };
}

// Regexes that must finish get a limit no busy machine reaches; the cases where the limit must fire use a
// regex that never ends under a small one (limited()), so neither outcome depends on the machine's speed.
const GENEROUS = { TOOLGATE_REGEX_TIMEOUT_MS: '600000' };

describe('replace_in_file', () => {
  let t: TestApp;
  let small: TestApp | undefined;
  /** An app over the same workspace whose regex limit is small, for a regex that never ends (the regex worker is shared). */
  const limited = async () => (small = await makeApp({ TOOLGATE_ROOT: t.root, TOOLGATE_REGEX_TIMEOUT_MS: '300' }));
  beforeEach(async () => {
    t = await makeApp(GENEROUS);
  });
  afterEach(async () => {
    await t.close();
    await small?.close();
    small = undefined;
  });

  it('replaces every exact match, keeps the mode and backs up', async () => {
    await fs.writeFile(t.file('c.yaml'), 'a: TOKEN=old\nb: TOKEN=old\nc: other\n');
    await fs.chmod(t.file('c.yaml'), 0o640);
    const r = await t.call('replace_in_file', { path: 'c.yaml', old: 'TOKEN=old', new: 'TOKEN=new' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    const d = r.body.data as ReplaceData;
    expect(d.replacements).toBe(2);
    expect(d.applied).toBe(true);
    expect(d.lines_added).toBe(2);
    expect(d.lines_removed).toBe(2);
    expect(d.diff_preview).toContain('-a: TOKEN=old');
    expect(d.diff_preview).toContain('+b: TOKEN=new');
    expect(d.backup_id).toMatch(/^[0-9a-f]{16}-/);
    expect(r.body.text).toBe(withVersion("Replaced 2 matches in 'c.yaml' (+2/-2 lines, 35 bytes).", r.body));
    expect(r.body.context.risk_level).toBe('high');
    expect(r.body.stats.replacements).toBe(2);
    expect(await fs.readFile(t.file('c.yaml'), 'utf8')).toBe('a: TOKEN=new\nb: TOKEN=new\nc: other\n');
    expect((await fs.stat(t.file('c.yaml'))).mode & 0o777).toBe(0o640);
    expect(r.headers.etag).toBe(`"${d.version.sha256}"`);
  });

  it('count limits the replacements', async () => {
    await fs.writeFile(t.file('a.txt'), 'x x x x\n');
    const r = await t.call('replace_in_file', { path: 'a.txt', old: 'x', new: 'y', count: 2 });
    expect((r.body.data as ReplaceData).replacements).toBe(2);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('y y x x\n');
  });

  it('exact mode takes $ in new literally', async () => {
    await fs.writeFile(t.file('a.txt'), 'price\n');
    await t.call('replace_in_file', { path: 'a.txt', old: 'price', new: '$& $1 $$' });
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('$& $1 $$\n');
  });

  it('exact mode takes regex characters in old literally', async () => {
    await fs.writeFile(t.file('a.txt'), 'a.b a+b\n');
    const r = await t.call('replace_in_file', { path: 'a.txt', old: 'a.b', new: 'X' });
    expect((r.body.data as ReplaceData).replacements).toBe(1);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('X a+b\n');
  });

  it('regex mode expands groups and anchors at line boundaries', async () => {
    await fs.writeFile(t.file('.env'), 'TOKEN=abc\nOTHER=1\nTOKEN=def\n');
    const r = await t.call('replace_in_file', { path: '.env', old: '^TOKEN=(\\w+)$', new: 'TOKEN=<$1>', regex: true });
    expect(r.status).toBe(200);
    expect((r.body.data as ReplaceData).replacements).toBe(2);
    expect(await fs.readFile(t.file('.env'), 'utf8')).toBe('TOKEN=<abc>\nOTHER=1\nTOKEN=<def>\n');
  });

  it('regex mode supports named groups, $& and $$ and count', async () => {
    await fs.writeFile(t.file('a.txt'), 'k1=v1 k2=v2 k3=v3\n');
    await t.call('replace_in_file', { path: 'a.txt', old: '(?<k>k\\d)=(?<v>v\\d)', new: '$<v>=$<k>[$&]$$', regex: true, count: 2 });
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('v1=k1[k1=v1]$ v2=k2[k2=v2]$ k3=v3\n');
  });

  it('regex replacements match String.prototype.replace', async () => {
    const text = 'aXbXc\nline two X\n';
    await fs.writeFile(t.file('a.txt'), text);
    await t.call('replace_in_file', { path: 'a.txt', old: '(X)', new: "[$`|$'|$1|$2|$0]", regex: true });
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe(text.replace(/(X)/gm, "[$`|$'|$1|$2|$0]"));
  });

  it('no match is success with replacements 0 and writes nothing (fixed message)', async () => {
    await fs.writeFile(t.file('a.txt'), 'hello\n');
    const before = await fs.stat(t.file('a.txt'));
    const r = await t.call('replace_in_file', { path: 'a.txt', old: 'old_text', new: 'x' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    expect(r.body.text).toBe(withVersion("No matches found for 'old_text'", r.body));
    expect((r.body.data as ReplaceData).replacements).toBe(0);
    expect((r.body.data as ReplaceData).applied).toBe(false);
    const after = await fs.stat(t.file('a.txt'));
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.ino).toBe(before.ino);
  });

  it('dry run writes nothing and answers partial with the diff', async () => {
    await fs.writeFile(t.file('a.txt'), 'TOKEN=old\n');
    const r = await t.call('replace_in_file', { path: 'a.txt', old: 'old', new: 'new', dry_run: true });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('partial');
    expect(r.body.text).toBe(withVersion("[Dry Run] Would replace 1 match of 'old' in 'a.txt' (+1/-1 lines).", r.body));
    const d = r.body.data as ReplaceData;
    expect(d.applied).toBe(false);
    expect(d.replacements).toBe(1);
    expect(d.backup_id).toBeNull();
    expect(d.diff_preview).toContain('+TOKEN=new');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('TOKEN=old\n');
  });

  it('INVALID_REGEX for a bad pattern (fixed message)', async () => {
    await fs.writeFile(t.file('a.txt'), 'x\n');
    const r = await t.call('replace_in_file', { path: 'a.txt', old: '(unclosed', new: 'x', regex: true });
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe('INVALID_REGEX');
    expect(r.body.error?.message).toMatch(/^Invalid regex pattern: /);
  });

  it('a catastrophic regex answers TIMEOUT quickly and the service keeps answering', async () => {
    await fs.writeFile(t.file('a.txt'), `${'a'.repeat(40)}b\n`);
    const r = await (await limited()).call('replace_in_file', { path: 'a.txt', old: '(a+)+$', new: 'x', regex: true });
    expect(r.status).toBe(504);
    expect(r.body.error?.code).toBe('TIMEOUT');
    expect(r.body.error?.message).toContain('TOOLGATE_REGEX_TIMEOUT_MS');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe(`${'a'.repeat(40)}b\n`);
    // The worker was replaced: regex replacements work again, and so does everything else.
    const again = await t.call('replace_in_file', { path: 'a.txt', old: 'b$', new: 'c', regex: true });
    expect(again.status).toBe(200);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe(`${'a'.repeat(40)}c\n`);
    const read = await t.call('read_file', { path: 'a.txt' });
    expect(read.status).toBe(200);
  });

  it('a stuck regex does not block other requests meanwhile', async () => {
    await fs.writeFile(t.file('a.txt'), `${'a'.repeat(40)}b\n`);
    await fs.writeFile(t.file('b.txt'), 'hi\n');
    const slow = (await limited()).call('replace_in_file', { path: 'a.txt', old: '(a+)+$', new: 'x', regex: true });
    const quick = await t.call('read_file', { path: 'b.txt' });
    expect(quick.status).toBe(200);
    expect((await slow).body.error?.code).toBe('TIMEOUT');
  });

  it('NOT_FOUND for a missing file (fixed message)', async () => {
    const r = await t.call('replace_in_file', { path: '.env', old: 'a', new: 'b' });
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe('NOT_FOUND');
    expect(r.body.error?.message).toBe('File not found: .env');
  });

  it('IS_DIRECTORY, BINARY_FILE, ENCODING_ERROR and NO_CHANGE', async () => {
    await fs.mkdir(t.file('d'));
    expect((await t.call('replace_in_file', { path: 'd', old: 'a', new: 'b' })).body.error?.code).toBe('IS_DIRECTORY');
    await fs.writeFile(t.file('b.bin'), Buffer.from([0x61, 0, 0x62]));
    const bin = await t.call('replace_in_file', { path: 'b.bin', old: 'a', new: 'b' });
    expect(bin.status).toBe(422);
    expect(bin.body.error?.code).toBe('BINARY_FILE');
    await fs.writeFile(t.file('l.txt'), Buffer.from([0x61, 0xe9, 0x0a]));
    const enc = await t.call('replace_in_file', { path: 'l.txt', old: 'a', new: 'b' });
    expect(enc.status).toBe(422);
    expect(enc.body.error?.code).toBe('ENCODING_ERROR');
    await fs.writeFile(t.file('s.txt'), 'same\n');
    const same = await t.call('replace_in_file', { path: 's.txt', old: 'same', new: 'same' });
    expect(same.status).toBe(422);
    expect(same.body.error?.code).toBe('NO_CHANGE');
  });

  it('INVALID_PARAM for an empty old, a bad count and unknown keys; old_text/new_text are accepted', async () => {
    await fs.writeFile(t.file('a.txt'), 'a\n');
    for (const body of [{ path: 'a.txt', old: '', new: 'x' }, { path: 'a.txt', old: 'a', new: 'x', count: 0 }, { path: 'a.txt', old: 'a', new: 'x', flags: 'i' }]) {
      const r = await t.call('replace_in_file', body);
      expect(r.status).toBe(400);
      expect(r.body.error?.code).toBe('INVALID_PARAM');
    }
    const aliased = await t.call('replace_in_file', { path: 'a.txt', old_text: 'a', new_text: 'b' });
    expect(aliased.status).toBe(200);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('b\n');
  });

  it('ACCESS_DENIED outside the workspace', async () => {
    const r = await t.call('replace_in_file', { path: '../../etc/passwd', old: 'root', new: 'x' });
    expect(r.status).toBe(403);
    expect(r.body.error?.code).toBe('ACCESS_DENIED');
  });

  it('CONFLICT on a stale version, and success with the current one', async () => {
    await fs.writeFile(t.file('a.txt'), 'one\n');
    const stale = await t.call('replace_in_file', { path: 'a.txt', old: 'one', new: 'two', expected_sha256: 'f'.repeat(64) });
    expect(stale.status).toBe(409);
    expect(stale.body.error?.code).toBe('CONFLICT');
    const current = (stale.body.error?.details as { current: { sha256: string; mtime_ms: number; size_bytes: number } }).current;
    const ok = await t.call('replace_in_file', { path: 'a.txt', old: 'one', new: 'two', expected_mtime_ms: current.mtime_ms, expected_size_bytes: current.size_bytes });
    expect(ok.status).toBe(200);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('two\n');
  });

  it('VERSION_REQUIRED under TOOLGATE_REQUIRE_VERSION=always', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'always' });
    await fs.writeFile(t.file('a.txt'), 'one\n');
    const r = await t.call('replace_in_file', { path: 'a.txt', old: 'one', new: 'two' });
    expect(r.status).toBe(428);
    expect(r.body.error?.code).toBe('VERSION_REQUIRED');
  });

  it('keeps a UTF-8 BOM and CRLF line endings', async () => {
    await fs.writeFile(t.file('w.txt'), '\uFEFFa=1\r\nb=2\r\n');
    await t.call('replace_in_file', { path: 'w.txt', old: 'b=2', new: 'b=3' });
    expect(await fs.readFile(t.file('w.txt'), 'utf8')).toBe('\uFEFFa=1\r\nb=3\r\n');
  });

  it('FILE_TOO_LARGE when the file is over TOOLGATE_MAX_EDIT_BYTES', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_MAX_EDIT_BYTES: '8' });
    await fs.writeFile(t.file('a.txt'), 'x'.repeat(20));
    const r = await t.call('replace_in_file', { path: 'a.txt', old: 'x', new: 'y' });
    expect(r.status).toBe(413);
    expect(r.body.error?.code).toBe('FILE_TOO_LARGE');
  });
});
