// apply_patch over the real app: the whole scenario corpus (test/fixtures/apply-patch), each in a fresh workspace,
// the tree compared after the call; refused patches (engine or sandbox) must leave the tree as it was.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';

const ROOT = join(import.meta.dirname, '..', 'fixtures', 'apply-patch');
const scenarios = readdirSync(ROOT).filter((n) => statSync(join(ROOT, n)).isDirectory()).sort();

/**
 * The workspace's files (the state directory left out), byte for byte as latin1 strings; with `emptyDirs`, an
 * empty directory too (as '<dir>/'), so a directory left behind by a refused patch shows.
 */
function readTree(dir: string, prefix = '', emptyDirs = false): Record<string, string> {
  const files: Record<string, string> = {};
  if (!existsSync(dir)) return files;
  for (const name of readdirSync(dir).sort()) {
    if (!prefix && name === '.toolgate') continue;
    const full = join(dir, name);
    const rel = prefix ? `${prefix}/${name}` : name;
    if (!statSync(full).isDirectory()) files[rel] = readFileSync(full, 'latin1');
    else if (emptyDirs && readdirSync(full).length === 0) files[`${rel}/`] = '';
    else Object.assign(files, readTree(full, rel, emptyDirs));
  }
  return files;
}

const INVALID_PATCH = 'INVALID_PARAM';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/**
 * Runs `body` over an app whose workspace (state directory included) is a tmpfs of `bytes`, so a write can fill
 * the disk for real. Mounting needs root, as the tests run here and in CI; anywhere else this fails, not skips,
 * because a skipped rollback test is how the rollback went untested before.
 */
async function onSmallVolume(bytes: number, body: (root: string, app: TestApp) => Promise<void>): Promise<void> {
  const root = await makeTempDir('toolgate-volume-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, 'tmpfs', root], { stdio: 'pipe' });
  } catch (err) {
    await fs.rmdir(root);
    const why = (err as { stderr?: Buffer }).stderr?.toString().trim() || String(err);
    throw new Error(`This test needs to mount a small tmpfs (root, or CAP_SYS_ADMIN) to fill a disk for real: ${why}`, { cause: err });
  }
  let app: TestApp | undefined;
  try {
    app = await makeApp({ TOOLGATE_ROOT: root });
    await body(root, app);
  } finally {
    await app?.close();
    execFileSync('umount', [root], { stdio: 'pipe' });
    await fs.rmdir(root);
  }
}

async function appWith(input: Record<string, string>): Promise<TestApp> {
  t = await makeApp();
  for (const [rel, content] of Object.entries(input)) {
    await fs.mkdir(join(t.file(rel), '..'), { recursive: true });
    await fs.writeFile(t.file(rel), content);
  }
  return t;
}

describe('apply_patch scenarios over HTTP', () => {
  it.each(scenarios)('%s', async (name) => {
    const dir = join(ROOT, name);
    const want = JSON.parse(readFileSync(join(dir, 'expect.json'), 'utf8')) as { ok: boolean; code?: string };
    t = await makeApp();
    if (existsSync(join(dir, 'input'))) cpSync(join(dir, 'input'), t.root, { recursive: true });
    const before = readTree(t.root, '', true);
    const res = await t.call('apply_patch', { patch: readFileSync(join(dir, 'patch.txt'), 'utf8') });
    if (want.ok) {
      expect(res.body.status, JSON.stringify(res.body.error)).toBe('success');
      expect(res.body.text.startsWith('Success. Updated the following files:')).toBe(true);
    } else {
      expect(res.body.status).toBe('error');
      expect(res.body.error?.code).toBe(want.code === 'INVALID_PATCH' ? INVALID_PATCH : want.code);
      expect(readTree(t.root, '', true)).toEqual(before);
    }
    expect(readTree(t.root)).toEqual(readTree(join(dir, 'expected')));
  });
});

describe('apply_patch', () => {
  it('answers one diff per file and backs up what it changed and deleted', async () => {
    t = await appWith({ 'a.txt': 'one\ntwo\n', 'b.txt': 'gone\n' });
    const patch = ['*** Begin Patch', '*** Update File: a.txt', '@@', ' one', '-two', '+TWO', '*** Delete File: b.txt', '*** Add File: c.txt', '+new', '*** End Patch'].join('\n');
    const res = await t.call('apply_patch', { patch });
    expect(res.body.status).toBe('success');
    const files = (res.body.data as { files: Array<{ path: string; operation: string; diff_preview: string; backup_id: string | null }> }).files;
    expect(files.map((f) => [f.path, f.operation])).toEqual([
      ['a.txt', 'update'],
      ['b.txt', 'delete'],
      ['c.txt', 'create'],
    ]);
    expect(files[0]?.diff_preview).toContain('+TWO');
    expect(files[1]?.backup_id).toBeTruthy();
    expect(res.body.text).toBe('Success. Updated the following files:\nM a.txt\nD b.txt\nA c.txt');
    const restored = await t.call('restore_backup', { backup_id: files[1]?.backup_id });
    expect(restored.body.status).toBe('success');
    expect(await fs.readFile(t.file('b.txt'), 'utf8')).toBe('gone\n');
  });

  it('accepts the alias input and a heredoc wrapper', async () => {
    t = await appWith({ 'a.txt': 'x\n' });
    const res = await t.call('apply_patch', { input: "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\nEOF\n" });
    expect(res.body.status).toBe('success');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('y\n');
  });

  it('accepts the Responses API operation, nested and flat', async () => {
    t = await appWith({ 'a.txt': 'x\n' });
    const nested = await t.call('apply_patch', { operation: { type: 'update_file', path: 'a.txt', diff: '@@\n-x\n+y\n' } });
    expect(nested.body.status).toBe('success');
    const flat = await t.call('apply_patch', { type: 'create_file', path: 'b.txt', diff: '+hello\n+' });
    expect(flat.body.status).toBe('success');
    expect(await fs.readFile(t.file('b.txt'), 'utf8')).toBe('hello\n');
    const del = await t.call('apply_patch', { type: 'delete_file', path: 'a.txt' });
    expect(del.body.status).toBe('success');
    expect(existsSync(t.file('a.txt'))).toBe(false);
  });

  it('refuses two argument forms at once', async () => {
    t = await appWith({});
    const res = await t.call('apply_patch', { patch: '*** Begin Patch\n*** End Patch', type: 'delete_file', path: 'a.txt' });
    expect(res.body.error?.code).toBe('INVALID_PARAM');
  });

  it('a dry run answers the diffs and writes nothing', async () => {
    t = await appWith({ 'a.txt': 'x\n' });
    const res = await t.call('apply_patch', { patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch', dry_run: true });
    expect(res.body.status).toBe('partial');
    expect((res.body.data as { applied: boolean }).applied).toBe(false);
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('x\n');
  });

  // A real failure in the middle of the commit: the workspace is a 1 MiB volume and the last file of the patch is
  // 2 MiB, so its write hits ENOSPC after every other file was committed, as root too (a full disk is the likeliest
  // failure of a real patch). The backups and temp files live in the state directory on that same volume.
  it('puts every file back and removes the directories it made when the disk fills during a later file', async () => {
    await onSmallVolume(1024 * 1024, async (root, t) => {
      const file = (rel: string) => join(root, rel);
      await fs.writeFile(file('a.txt'), 'x\n');
      await fs.writeFile(file('m.txt'), 'move me\n');
      await fs.mkdir(file('old'));
      await fs.writeFile(file('old/gone.txt'), 'g\n');
      await fs.mkdir(file('keep'));
      const before = readTree(root, '', true);
      const patch = [
        '*** Begin Patch',
        '*** Add File: fresh/deep/one.txt',
        '+1',
        '*** Update File: a.txt',
        '@@',
        '-x',
        '+y',
        '*** Delete File: old/gone.txt',
        '*** Update File: m.txt',
        '*** Move to: moved/here/m.txt',
        '@@',
        '-move me',
        '+moved',
        '*** Add File: keep/new/two.txt',
        '+2',
        '*** Add File: big/fill.txt',
        ...Array.from({ length: 2 * 1024 }, () => `+${'z'.repeat(1023)}`),
        '*** End Patch',
      ].join('\n');
      const res = await t.call('apply_patch', { patch });
      expect([res.status, res.body.error?.code]).toEqual([507, 'DISK_FULL']);
      expect(res.body.error?.message).toContain('nothing was written');
      // The same files with the same bytes, and the same directories: the pre-existing empty 'keep' and 'old' stay.
      expect(readTree(root, '', true)).toEqual(before);
      expect(statSync(file('keep')).isDirectory()).toBe(true);
      expect(existsSync(file('fresh'))).toBe(false);
      expect(existsSync(file('moved'))).toBe(false);
      expect(existsSync(file('big'))).toBe(false);
      // The volume works again: the same patch without the big file applies.
      const small = patch.slice(0, patch.indexOf('*** Add File: big/')) + '*** End Patch';
      expect((await t.call('apply_patch', { patch: small })).body.status).toBe('success');
      expect(await fs.readFile(file('moved/here/m.txt'), 'utf8')).toBe('moved\n');
    });
  });

  it('refuses a patch whose final tree needs one path to be a file and a directory, before writing anything', async () => {
    t = await appWith({ 'a.txt': 'x\n' });
    const patch = ['*** Begin Patch', '*** Update File: a.txt', '@@', '-x', '+y', '*** Add File: blocker', '+b', '*** Add File: blocker/x.txt', '+never', '*** End Patch'].join('\n');
    const res = await t.call('apply_patch', { patch });
    expect([res.status, res.body.error?.code]).toEqual([400, 'INVALID_PARAM']);
    expect(res.body.error?.message).toContain('contradictory');
    expect(res.body.error?.message).toContain("'*** Add File: blocker'");
    expect(res.body.error?.message).toContain("'*** Add File: blocker/x.txt'");
    expect(res.body.error?.message).not.toContain('retry');
    expect(res.body.error?.details).toMatchObject({ path: 'blocker', under: 'blocker/x.txt', patch_code: 'INVALID_PATCH' });
    expect(readTree(t.root, '', true)).toEqual({ 'a.txt': 'x\n' });
  });

  // A dangling symlink makes two spellings of one place: 'link/x.txt' lands under the 'target' the patch adds.
  it('sees the clash through a symlink on the way', async () => {
    t = await appWith({});
    await fs.symlink('target', t.file('link'));
    const res = await t.call('apply_patch', { patch: '*** Begin Patch\n*** Add File: target\n+t\n*** Add File: link/x.txt\n+x\n*** End Patch' });
    expect(res.body.error?.code).toBe('INVALID_PARAM');
    expect(res.body.error?.message).toContain('contradictory');
    expect(existsSync(t.file('target'))).toBe(false);
  });

  it('refuses a path under an existing file before writing anything', async () => {
    t = await appWith({ 'a.txt': 'x\n', 'notes': 'n\n' });
    const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** Add File: notes/today.md\n+t\n*** End Patch';
    const res = await t.call('apply_patch', { patch });
    expect(res.body.error?.code).toBe('NOT_A_DIRECTORY');
    expect(res.body.error?.message).toContain("'notes/today.md'");
    expect(readTree(t.root, '', true)).toEqual({ 'a.txt': 'x\n', notes: 'n\n' });
  });

  it('keeps the directories it made when the patch applies', async () => {
    t = await appWith({});
    const res = await t.call('apply_patch', { patch: '*** Begin Patch\n*** Add File: a/b/c.txt\n+c\n*** End Patch' });
    expect(res.body.status).toBe('success');
    expect(await fs.readFile(t.file('a/b/c.txt'), 'utf8')).toBe('c\n');
  });

  it('keeps a UTF-8 BOM and CRLF line endings', async () => {
    t = await appWith({ 'a.txt': '\uFEFFone\r\ntwo\r\n' });
    const res = await t.call('apply_patch', { patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** End Patch' });
    expect(res.body.status).toBe('success');
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('\uFEFFone\r\n2\r\n');
  });
});

describe('apply_patch versions', () => {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  const twoFiles = '*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: b.txt\n*** Add File: c.txt\n+c\n*** End Patch';

  it('under TOOLGATE_REQUIRE_VERSION=always names every file without a version and what to send', async () => {
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'always' });
    await fs.writeFile(t.file('a.txt'), 'a\n');
    await fs.writeFile(t.file('b.txt'), 'b\n');
    const res = await t.call('apply_patch', { patch: twoFiles });
    expect([res.status, res.body.error?.code]).toEqual([428, 'VERSION_REQUIRED']);
    expect(res.body.error?.message).toContain("no version for 'a.txt', 'b.txt'");
    expect(res.body.error?.message).toContain('[{"path": "a.txt", "sha256": "<sha256>"}, ...]');
    expect(res.body.error?.details?.paths).toEqual(['a.txt', 'b.txt']);
    expect(readTree(t.root)).toEqual({ 'a.txt': 'a\n', 'b.txt': 'b\n' });

    const one = await t.call('apply_patch', { patch: twoFiles, expected_sha256: [{ path: 'a.txt', sha256: sha('a\n') }] });
    expect(one.body.error?.message).toContain("no version for 'b.txt'");

    const ok = await t.call('apply_patch', { patch: twoFiles, expected_sha256: [{ path: './a.txt', sha256: sha('a\n') }, { path: 'b.txt', sha256: sha('b\n').toUpperCase() }] });
    expect(ok.body.status).toBe('success');
    expect(readTree(t.root)).toEqual({ 'a.txt': 'A\n', 'c.txt': 'c\n' });
  });

  it('under always, a patch that only adds files needs no version', async () => {
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'always' });
    const res = await t.call('apply_patch', { patch: '*** Begin Patch\n*** Add File: new/n.txt\n+n\n*** End Patch' });
    expect(res.body.status).toBe('success');
  });

  it('takes one string for one file (the Responses API operation too) and If-Match with one tag per file', async () => {
    t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'always' });
    await fs.writeFile(t.file('a.txt'), 'a\n');
    await fs.writeFile(t.file('b.txt'), 'b\n');
    const flat = await t.call('apply_patch', { type: 'update_file', path: 'a.txt', diff: '@@\n-a\n+a2\n', expected_sha256: sha('a\n') });
    expect(flat.body.status).toBe('success');
    const ifMatch = await t.call('apply_patch', { patch: twoFiles.replace('-a\n+A', '-a2\n+A') }, { 'if-match': `"${sha('a2\n')}", "${sha('b\n')}"` });
    expect(ifMatch.body.status).toBe('success');
    expect(readTree(t.root)).toEqual({ 'a.txt': 'A\n', 'c.txt': 'c\n' });
  });

  it('refuses a stale sha256 with CONFLICT in any mode and changes nothing', async () => {
    t = await appWith({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const res = await t.call('apply_patch', { patch: twoFiles, expected_sha256: [{ path: 'b.txt', sha256: sha('old b\n') }] });
    expect([res.status, res.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(res.body.error?.message).toContain("'b.txt'");
    expect(readTree(t.root)).toEqual({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  });

  it('refuses versions it cannot place: one string for several files, a path the patch does not change', async () => {
    t = await appWith({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const several = await t.call('apply_patch', { patch: twoFiles, expected_sha256: sha('a\n') });
    expect(several.body.error?.code).toBe('INVALID_PARAM');
    expect(several.body.error?.message).toContain('Pass a list');
    const added = await t.call('apply_patch', { patch: twoFiles, expected_sha256: [{ path: 'c.txt', sha256: sha('c\n') }] });
    expect(added.body.error?.code).toBe('INVALID_PARAM');
    expect(added.body.error?.message).toContain("'c.txt', which the patch does not update, move or delete");
    const twice = await t.call('apply_patch', { patch: twoFiles, expected_sha256: [{ path: 'a.txt', sha256: sha('a\n') }, { path: 'a.txt', sha256: sha('a\n') }] });
    expect(twice.body.error?.code).toBe('INVALID_PARAM');
    expect(readTree(t.root)).toEqual({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  });

  // Issue 21's edit attack through apply_patch: a hunk of 2,000 identical lines, indented four more than the
  // file's 150,000, fits everywhere under the whitespace pass (3·10⁸ comparisons on the event loop). The
  // search stops at its budget (src/edit/patch-apply.ts) with the places already found.
  it('stops a hunk search on 150,000 identical lines at its work budget, changing nothing', async () => {
    const line = 'const value = compute(alpha, beta);';
    const content = `${line}\n`.repeat(150_000);
    t = await appWith({ 'same.js': content });
    const hunk = Array.from({ length: 2000 }, () => `-    ${line}`);
    const res = await t.call('apply_patch', { patch: ['*** Begin Patch', '*** Update File: same.js', '@@', ...hunk, '+gone', '*** End Patch'].join('\n') });
    expect(res.body.error?.code).toBe('MULTIPLE_MATCHES');
    expect(res.body.error?.message).toMatch(/fit at least \d+ places/);
    expect(res.body.error?.details).toMatchObject({ candidates_incomplete: true, pass: 'whitespace' });
    expect(await fs.readFile(t.file('same.js'), 'utf8')).toBe(content);
  });
});
