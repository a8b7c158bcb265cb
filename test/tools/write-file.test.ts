import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupFile, makeApp, pathExists, withVersion, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(async () => {
  await t.close();
});

interface WriteData {
  applied: boolean;
  operation: 'create' | 'update';
  diff_preview: string;
  diff_truncated: boolean;
  backup_id: string | null;
  created_directory: string | null;
  version: { sha256: string; mtime_ms: number; size_bytes: number } | null;
}

const write = async (body: Record<string, unknown>, headers?: Record<string, string>) => {
  const r = await t.call('write_file', body, headers);
  return { ...r, data: r.body.data as WriteData };
};
/** Temp files left in the state directory's temp folders (one per instance). */
const tempFiles = async (tmp: string) => (await fs.readdir(tmp, { recursive: true }).catch(() => [] as string[])).filter((n) => n.includes('.toolgate-tmp-')).sort();
const sha = async (rel: string) => ((await t.call('read_file', { path: rel })).body.data as { version: { sha256: string } }).version.sha256;

describe('write_file', () => {
  it('creates a file with parent directories and the fixed texts', async () => {
    const r = await write({ path: 'src/utils/helper.py', content: 'def hello():\n    print("world")\n' });
    expect(r.status).toBe(200);
    expect(r.data).toMatchObject({ applied: true, operation: 'create', created_directory: 'src/', backup_id: null, diff_truncated: false });
    expect(r.body.text).toBe(withVersion("Created 'src/utils/helper.py' (2 lines, 32 bytes).\n(Created directory: src/)", r.body));
    expect(r.data.diff_preview).toBe('--- /dev/null\n+++ b/src/utils/helper.py\n@@ -0,0 +1,2 @@\n+def hello():\n+    print("world")\n');
    expect(r.body.stats).toMatchObject({ bytes_written: 32, original_size: 0, new_size: 32, lines_added: 2, lines_removed: 0 });
    expect(r.body.context.risk_level).toBe('medium');
    expect(await fs.readFile(t.file('src/utils/helper.py'), 'utf8')).toBe('def hello():\n    print("world")\n');
  });

  it('updates with a version, keeps a backup and the file mode, and says Updated (+a/-b)', async () => {
    await fs.writeFile(t.file('main.py'), 'a\nb\nc\n');
    await fs.chmod(t.file('main.py'), 0o640);
    const r = await write({ path: 'main.py', content: 'a\nB\nc\nd\n', expected_sha256: await sha('main.py') });
    expect(r.data).toMatchObject({ applied: true, operation: 'update' });
    expect(r.body.text).toBe(withVersion("Updated 'main.py' (+2/-1 lines, 8 bytes).", r.body));
    expect(r.body.context.risk_level).toBe('high');
    expect((await fs.stat(t.file('main.py'))).mode & 0o777).toBe(0o640);
    expect(r.data.backup_id).toMatch(/^[0-9a-f]{16}-/);
    const backups = await t.call('list_backups', { path: 'main.py' });
    expect((backups.body.data as { backups: { backup_id: string; size_bytes: number }[] }).backups[0]).toMatchObject({ backup_id: r.data.backup_id, size_bytes: 6 });
  });

  it('needs a version to overwrite (VERSION_REQUIRED 428) and refuses a stale one (CONFLICT 409 with details.current)', async () => {
    await fs.writeFile(t.file('v.txt'), 'one\n');
    const none = await write({ path: 'v.txt', content: 'two\n' });
    expect([none.status, none.body.error?.code]).toEqual([428, 'VERSION_REQUIRED']);
    const stale = await write({ path: 'v.txt', content: 'two\n', expected_size_bytes: 99 });
    expect([stale.status, stale.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(stale.body.error?.details).toHaveProperty('current.sha256');
    const etag = (await t.call('read_file', { path: 'v.txt' })).headers.etag as string;
    const viaIfMatch = await write({ path: 'v.txt', content: 'two\n' }, { 'if-match': etag });
    expect(viaIfMatch.body.status).toBe('success');
    const wrongIfMatch = await write({ path: 'v.txt', content: 'three\n' }, { 'if-match': etag });
    expect(wrongIfMatch.body.error?.code).toBe('CONFLICT');
    const st = await fs.stat(t.file('v.txt'));
    const byMtime = await write({ path: 'v.txt', content: 'three\n', expected_mtime_ms: Math.trunc(st.mtimeMs), expected_size_bytes: st.size });
    expect(byMtime.body.status).toBe('success');
    expect(await fs.readFile(t.file('v.txt'), 'utf8')).toBe('three\n');
  });

  it("answers the written file's version: the one read_file and the file's stat give after it", async () => {
    await fs.writeFile(t.file('ver.txt'), 'one\n');
    const before = ((await t.call('read_file', { path: 'ver.txt' })).body.data as WriteData).version;
    const res = await write({ path: 'ver.txt', content: 'two, longer\n', expected_sha256: before?.sha256 });
    const answered = (res.body.data as WriteData).version;
    const st = await fs.stat(t.file('ver.txt'));
    expect(answered).toEqual({ sha256: createHash('sha256').update('two, longer\n').digest('hex'), mtime_ms: Math.trunc(st.mtimeMs), size_bytes: st.size });
    expect(((await t.call('read_file', { path: 'ver.txt' })).body.data as WriteData).version).toEqual(answered);
  });

  it('TOOLGATE_REQUIRE_VERSION=never overwrites without a version', async () => {
    const lax = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'never' });
    try {
      await fs.writeFile(lax.file('x.txt'), 'old\n');
      expect((await lax.call('write_file', { path: 'x.txt', content: 'new\n' })).body.status).toBe('success');
    } finally {
      await lax.close();
    }
  });

  it('dry run answers partial, writes nothing and creates no directory', async () => {
    const r = await write({ path: 'dry/new.py', content: 'x\ny\n', dry_run: true });
    expect(r.body.status).toBe('partial');
    expect(r.data).toMatchObject({ applied: false, operation: 'create' });
    expect(r.body.text).toBe("[Dry Run] Would create 'dry/new.py' (+2 lines).");
    expect(r.body.stats.bytes_written).toBe(0);
    await expect(fs.stat(t.file('dry'))).rejects.toThrow();
  });

  it('create_dirs: false gives PARENT_NOT_FOUND with the seed message', async () => {
    const r = await write({ path: 'no/such/dir/f.txt', content: 'x', create_dirs: false });
    expect([r.status, r.body.error?.code, r.body.error?.message]).toEqual([404, 'PARENT_NOT_FOUND', 'Parent directory does not exist: no/such/dir']);
  });

  it('refuses a directory target (IS_DIRECTORY) and empty content over a non-empty file unless allow_empty', async () => {
    await fs.mkdir(t.file('adir'), { recursive: true });
    const dir = await write({ path: 'adir', content: 'x' });
    expect([dir.status, dir.body.error?.code]).toEqual([409, 'IS_DIRECTORY']);
    await fs.writeFile(t.file('full.txt'), 'data\n');
    const v = await sha('full.txt');
    const empty = await write({ path: 'full.txt', content: '', expected_sha256: v });
    expect([empty.status, empty.body.error?.code, empty.body.error?.message]).toEqual([400, 'INVALID_PARAM', 'Content cannot be empty. Pass allow_empty: true to empty the file.']);
    expect(await fs.readFile(t.file('full.txt'), 'utf8')).toBe('data\n');
    expect((await write({ path: 'full.txt', content: '', expected_sha256: v, allow_empty: true })).body.status).toBe('success');
    expect(await fs.readFile(t.file('full.txt'), 'utf8')).toBe('');
    expect((await write({ path: 'new-empty.txt', content: '' })).body.status).toBe('success');
  });

  it('backup: false keeps no backup', async () => {
    await fs.writeFile(t.file('nb.txt'), 'a\n');
    const r = await write({ path: 'nb.txt', content: 'b\n', backup: false, expected_sha256: await sha('nb.txt') });
    expect(r.data.backup_id).toBeNull();
    expect((await t.call('list_backups', { path: 'nb.txt' })).body.data).toMatchObject({ backups: [] });
  });

  it('a backup that cannot be written stops the change: the file and the temp directory stay as they were', async () => {
    await fs.writeFile(t.file('kept.txt'), 'old\n');
    // The file's backup directory (src/workspace/backups.ts: sha256 of the path) taken by a plain file.
    const key = createHash('sha256').update('kept.txt').digest('hex').slice(0, 16);
    await fs.mkdir(path.join(t.root, '.toolgate/backups'), { recursive: true });
    await fs.writeFile(path.join(t.root, '.toolgate/backups', key), 'in the way');
    const tmp = path.join(t.root, '.toolgate/tmp');
    const tempsBefore = await tempFiles(tmp);
    const r = await write({ path: 'kept.txt', content: 'new\n', expected_sha256: await sha('kept.txt') });
    expect(r.body.status).toBe('error');
    expect(await fs.readFile(t.file('kept.txt'), 'utf8')).toBe('old\n');
    expect(await tempFiles(tmp)).toEqual(tempsBefore);
    await fs.rm(path.join(t.root, '.toolgate/backups', key));
    expect((await write({ path: 'kept.txt', content: 'new\n', expected_sha256: await sha('kept.txt') })).data.backup_id).toMatch(new RegExp(`^${key}-`));
  });

  it('writes other encodings and base64', async () => {
    expect((await write({ path: 'cp.txt', content: 'Привет\n', encoding: 'windows-1251' })).body.status).toBe('success');
    expect((await fs.readFile(t.file('cp.txt'))).equals(iconv.encode('Привет\n', 'windows-1251'))).toBe(true);
    const bytes = Buffer.from([0, 1, 2, 250, 251]);
    expect((await write({ path: 'bin.dat', content: bytes.toString('base64'), encoding: 'base64' })).body.status).toBe('success');
    expect((await fs.readFile(t.file('bin.dat'))).equals(bytes)).toBe(true);
    expect((await write({ path: 'bad.dat', content: '***', encoding: 'base64' })).body.error?.code).toBe('INVALID_PARAM');
  });

  it('answers to the aliases write, Write and file-write', async () => {
    for (const name of ['write', 'Write', 'file-write']) {
      const r = await t.call(name, { path: `alias-${name}.txt`, content: name });
      expect(r.body.status, name).toBe('success');
    }
  });

  it('keeps bounded backups per file (TOOLGATE_BACKUP_KEEP)', async () => {
    // One checkpoint kept, its limit applied before each write (list_checkpoints does; a write prunes in the
    // background): the backups older checkpoints would hold go by TOOLGATE_BACKUP_KEEP alone (docs/api.md, "Turns, checkpoints and rewind").
    const small = await makeApp({ TOOLGATE_BACKUP_KEEP: '2', TOOLGATE_CHECKPOINT_MAX_TURNS: '1' });
    try {
      await fs.writeFile(small.file('k.txt'), 'v0\n');
      for (let i = 1; i <= 4; i++) {
        await small.call('list_checkpoints', {});
        const v = ((await small.call('read_file', { path: 'k.txt' })).body.data as { version: { sha256: string } }).version.sha256;
        expect((await small.call('write_file', { path: 'k.txt', content: `v${i}\n`, expected_sha256: v })).body.status).toBe('success');
      }
      const list = (await small.call('list_backups', { path: 'k.txt' })).body.data as { backups: { size_bytes: number }[] };
      expect(list.backups).toHaveLength(2);
    } finally {
      await small.close();
    }
  });

  it("counts another replica's backups of the file once its listing is a second old", async () => {
    // A prune lists a file's backups once a second and keeps the listing up to date with its own (src/workspace/backups.ts).
    const small = await makeApp({ TOOLGATE_BACKUP_KEEP: '2', TOOLGATE_CHECKPOINT_MAX_TURNS: '1', TOOLGATE_REQUIRE_VERSION: 'never' });
    try {
      await fs.writeFile(small.file('r.txt'), 'v0\n');
      const ids: string[] = [];
      for (let i = 1; i <= 3; i++) {
        const res = await small.call('write_file', { path: 'r.txt', content: `v${i}\n` });
        ids.push((res.body.data as { backup_id: string }).backup_id);
      }
      const stateDir = path.join(small.root, '.toolgate');
      const dir = path.dirname(backupFile(stateDir, ids[2] as string));
      // As another replica would have made it: older than every backup here, so the first to go.
      const theirs = path.join(dir, `${path.basename(dir)}-000000001-abcdef.write_file.644.-.-.k.kept`);
      await fs.writeFile(theirs, 'theirs\n');
      await new Promise((done) => setTimeout(done, 1100));
      // One checkpoint kept, applied now: the backups older checkpoints would hold go by TOOLGATE_BACKUP_KEEP alone.
      await small.call('list_checkpoints', {});
      expect((await small.call('write_file', { path: 'r.txt', content: 'v4\n' })).body.status).toBe('success');
      expect(await pathExists(theirs)).toBe(false);
      expect((await fs.readdir(dir)).filter((n) => n.endsWith('.kept'))).toHaveLength(2);
    } finally {
      await small.close();
    }
  });

  it('keeps total backup bytes under TOOLGATE_BACKUP_MAX_BYTES', async () => {
    const small = await makeApp({ TOOLGATE_BACKUP_MAX_BYTES: '1000', TOOLGATE_REQUIRE_VERSION: 'never' });
    try {
      for (let i = 0; i < 6; i++) {
        await fs.writeFile(small.file(`f${i}.txt`), 'x'.repeat(300));
        expect((await small.call('write_file', { path: `f${i}.txt`, content: 'y' })).body.status).toBe('success');
      }
      const list = (await small.call('list_backups', {})).body.data as { backups: { size_bytes: number; path: string }[] };
      const total = list.backups.reduce((s, b) => s + b.size_bytes, 0);
      expect(total).toBeLessThanOrEqual(1000);
      expect(list.backups.map((b) => b.path)).toContain('f5.txt');
    } finally {
      await small.close();
    }
  });

  it('keeps the backup total bounded when another process removes backups meanwhile (sizes it remembered are forgotten)', async () => {
    const small = await makeApp({ TOOLGATE_BACKUP_MAX_BYTES: '2000', TOOLGATE_REQUIRE_VERSION: 'never' });
    const total = async () => ((await small.call('list_backups', {})).body.data as { backups: { size_bytes: number }[] }).backups.reduce((s, b) => s + b.size_bytes, 0);
    try {
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 8; i++) {
          await fs.writeFile(small.file(`g${i}.txt`), String(round).repeat(300 + i));
          expect((await small.call('write_file', { path: `g${i}.txt`, content: 'y' })).body.status).toBe('success');
          expect(await total()).toBeLessThanOrEqual(2000);
        }
        // Another replica prunes some backups behind this one's back.
        const root = small.file('.toolgate/backups');
        for (const d of await fs.readdir(root)) {
          const names = (await fs.readdir(path.join(root, d))).filter((n) => n.endsWith('.kept'));
          for (const n of names.slice(0, 1)) await fs.rm(path.join(root, d, n));
        }
      }
      await fs.writeFile(small.file('last.txt'), 'z'.repeat(500));
      expect((await small.call('write_file', { path: 'last.txt', content: 'y' })).body.status).toBe('success');
      expect(await total()).toBeGreaterThanOrEqual(500);
      expect(await total()).toBeLessThanOrEqual(2000);
    } finally {
      await small.close();
    }
  });

  it('prunes backup halves a kill -9 left (data without meta, meta without data), not ones still being made (issue 12)', async () => {
    const fresh = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'never' });
    try {
      const dir = fresh.file('.toolgate/backups/00112233445566aa');
      await fs.mkdir(dir, { recursive: true });
      const old = new Date(Date.now() - 3600_000);
      // Halves of older versions' backups (data and meta apart), and this version's: a copy under its part name, an origin's part.
      const orphans = ['00112233445566aa-00000abcd-aaaaaa.bak', '00112233445566aa-00000abce-bbbbbb.json', '00112233445566aa-00000abcf-cccccc.bak.part', '00112233445566aa-00000abcf-eeeeee.part', 'origin.0a0b0c0d.part'];
      for (const n of orphans) {
        await fs.writeFile(path.join(dir, n), n.endsWith('.json') ? '{"backup_id":"00112233445566aa-00000abce-bbbbbb","path":"gone.txt"}' : 'half');
        await fs.utimes(path.join(dir, n), old, old);
      }
      const inFlight = '00112233445566aa-00000abd0-dddddd.part'; // a live writer's copy, not yet named
      await fs.writeFile(path.join(dir, inFlight), 'being written');
      // The first backup this process makes scans the backups (and later ones over the byte limit).
      await fs.writeFile(fresh.file('o.txt'), 'v0\n');
      expect((await fresh.call('write_file', { path: 'o.txt', content: 'v1\n' })).body.data).toMatchObject({ applied: true, backup_id: expect.any(String) });
      expect(await fs.readdir(dir)).toEqual([inFlight]);
      const list = (await fresh.call('list_backups', {})).body.data as { backups: { path: string }[] };
      expect(list.backups.map((b) => b.path)).toEqual(['o.txt']);
    } finally {
      await fresh.close();
    }
  });

  it('lists, restores and prunes backups older versions made (data and meta apart) beside this version\'s', async () => {
    const small = await makeApp({ TOOLGATE_BACKUP_KEEP: '2', TOOLGATE_CHECKPOINT_MAX_TURNS: '1', TOOLGATE_REQUIRE_VERSION: 'never' });
    try {
      const key = createHash('sha256').update('legacy.txt').digest('hex').slice(0, 16);
      const dir = small.file(`.toolgate/backups/${key}`);
      await fs.mkdir(dir, { recursive: true });
      const id = `${key}-00000abcd-aaaaaa`;
      await fs.writeFile(path.join(dir, `${id}.bak`), 'legacy v0\n');
      const meta = { backup_id: id, project: null, path: 'legacy.txt', operation: 'write_file', created_at: '2026-01-01T00:00:00.000Z', size_bytes: 10, sha256: createHash('sha256').update('legacy v0\n').digest('hex'), mode: 0o644, actor: null };
      await fs.writeFile(path.join(dir, `${id}.json`), JSON.stringify(meta));
      await fs.writeFile(small.file('legacy.txt'), 'legacy v1\n');
      const listed = (await small.call('list_backups', { path: 'legacy.txt' })).body.data as { backups: { backup_id: string; size_bytes: number }[] };
      expect(listed.backups).toEqual([expect.objectContaining({ backup_id: id, size_bytes: 10 })]);
      expect((await small.call('restore_backup', { backup_id: id })).body.status).toBe('success');
      expect(await fs.readFile(small.file('legacy.txt'), 'utf8')).toBe('legacy v0\n');
      // Past TOOLGATE_BACKUP_KEEP the oldest goes, data and meta, whatever its kind.
      // One checkpoint kept, its limit applied before each write (see the test of TOOLGATE_BACKUP_KEEP above).
      for (const v of ['a', 'b']) {
        await small.call('list_checkpoints', {});
        expect((await small.call('write_file', { path: 'legacy.txt', content: v })).body.status).toBe('success');
      }
      const names = await fs.readdir(dir);
      expect(names.filter((n) => n.startsWith(id))).toEqual([]);
      expect(names.filter((n) => n.endsWith('.kept'))).toHaveLength(2);
      const after = (await small.call('list_backups', { path: 'legacy.txt' })).body.data as { backups: { path: string; operation: string }[] };
      expect(after.backups).toEqual([expect.objectContaining({ path: 'legacy.txt', operation: 'write_file' }), expect.objectContaining({ path: 'legacy.txt', operation: 'write_file' })]);
    } finally {
      await small.close();
    }
  });

  it('keeps a copy, not a link, where the old inode has other names; a file alone under its name gives its inode', async () => {
    await fs.writeFile(t.file('twin.txt'), 'twin v0\n');
    await fs.link(t.file('twin.txt'), t.file('twin-alias.txt'));
    const ino = (await fs.stat(t.file('twin.txt'))).ino;
    const r = await write({ path: 'twin.txt', content: 'twin v1\n', expected_sha256: await sha('twin.txt') });
    const kept = await fs.stat(backupFile(t.file('.toolgate'), r.data.backup_id as string));
    expect(kept.ino).not.toBe(ino);
    expect(kept.nlink).toBe(1);
    expect((await fs.stat(t.file('twin-alias.txt'))).nlink).toBe(1);
    expect(await fs.readFile(t.file('twin-alias.txt'), 'utf8')).toBe('twin v0\n');
    // A file alone under its name: its inode becomes the backup.
    await fs.writeFile(t.file('solo.txt'), 'solo v0\n');
    const solo = (await fs.stat(t.file('solo.txt'))).ino;
    const s = await write({ path: 'solo.txt', content: 'solo v1\n', expected_sha256: await sha('solo.txt') });
    expect((await fs.stat(backupFile(t.file('.toolgate'), s.data.backup_id as string))).ino).toBe(solo);
  });

  it('a change refused after its backup was taken leaves no backup, and the file keeps its one link', async () => {
    await fs.writeFile(t.file('ro.txt'), 'ro v0\n');
    // No write bit at all: refused at the rename (root included), after the backup was linked.
    await fs.chmod(t.file('ro.txt'), 0o444);
    try {
      const r = await write({ path: 'ro.txt', content: 'ro v1\n', expected_sha256: await sha('ro.txt') });
      expect(r.body.status).toBe('error');
      expect(await fs.readFile(t.file('ro.txt'), 'utf8')).toBe('ro v0\n');
      expect((await fs.stat(t.file('ro.txt'))).nlink).toBe(1);
      expect((await t.call('list_backups', { path: 'ro.txt' })).body.data).toMatchObject({ backups: [] });
    } finally {
      await fs.chmod(t.file('ro.txt'), 0o644);
    }
  });

  it('leaves no temp file beside the written file', async () => {
    await write({ path: 'tmpcheck/a.txt', content: 'x\n' });
    expect(await fs.readdir(t.file('tmpcheck'))).toEqual(['a.txt']);
  });
});
