// Multi-project mode (docs/api.md): the project comes from X-Project-Id or the URL, ids are
// validated, unknown projects are NOT_FOUND, and a token may only touch the projects it names, by
// every route, including `[otherId]/path`.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backupFile, makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { makeToken, request } from './ops-helpers.js';

let t: TestApp;
let projectsRoot: string;
const onlyA = makeToken('only-a', { projects: ['a'] });
const aAndB = makeToken('a-and-b', { projects: ['a', 'b'] });
const everything = makeToken('everything');

beforeEach(async () => {
  projectsRoot = await makeTempDir('toolgate-projects-');
  for (const p of ['a', 'b', 'c.d_e-1']) await fs.mkdir(path.join(projectsRoot, p));
  await fs.writeFile(path.join(projectsRoot, 'a', 'hello.txt'), 'from a');
  await fs.writeFile(path.join(projectsRoot, 'b', 'hello.txt'), 'from b');
  t = await makeApp({ TOOLGATE_PROJECTS_ROOT: projectsRoot }, { tokens: [onlyA.entry, aAndB.entry, everything.entry] });
});
afterEach(async () => {
  await t.close();
  await fs.rm(projectsRoot, { recursive: true, force: true });
});

const read = (url: string, body: unknown, headers: Record<string, string>) => request(t.app, 'POST', url, body, headers);

describe('multi-project mode', () => {
  it('takes the project from the URL or from X-Project-Id; context.project names it', async () => {
    const viaUrl = await read('/v1/projects/a/tools/read_file', { path: 'hello.txt' }, everything.header);
    expect(viaUrl.status).toBe(200);
    expect((viaUrl.body.data as { content: string }).content).toBe('from a');
    expect(viaUrl.body.context.project).toBe('a');
    const viaHeader = await read('/v1/tools/read_file', { path: 'hello.txt' }, { ...everything.header, 'x-project-id': 'b' });
    expect((viaHeader.body.data as { content: string }).content).toBe('from b');
    expect(viaHeader.body.context.project).toBe('b');
    const both = await read('/v1/projects/a/tools/read_file', { path: 'hello.txt' }, { ...everything.header, 'x-project-id': 'a' });
    expect(both.status).toBe(200);
  });

  it('writes land in the project directory; the state directory is <project>/.toolgate', async () => {
    const res = await read('/v1/projects/c.d_e-1/tools/write_file', { path: 'new.txt', content: 'n' }, everything.header);
    expect(res.status).toBe(200);
    expect(await fs.readFile(path.join(projectsRoot, 'c.d_e-1', 'new.txt'), 'utf8')).toBe('n');
    await t.app.toolgate.audit.flush();
    const audit = await fs.readdir(path.join(projectsRoot, 'c.d_e-1', '.toolgate', 'audit'));
    expect(audit.length).toBe(1);
  });

  it('without a project: INVALID_PARAM that says how to name one', async () => {
    const res = await read('/v1/tools/read_file', { path: 'hello.txt' }, everything.header);
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_PARAM');
    expect(res.body.error?.message).toMatch(/X-Project-Id/);
  });

  it('invalid project ids are INVALID_PARAM, by header and by URL', async () => {
    for (const id of ['.hidden', '-x', '_x', 'a b', 'x'.repeat(65), '..', 'a/b', 'a%2Fb', 'a:b']) {
      const res = await read('/v1/tools/read_file', { path: 'hello.txt' }, { ...everything.header, 'x-project-id': id });
      expect(res.status, id).toBe(400);
      expect(res.body.error?.code, id).toBe('INVALID_PARAM');
    }
    for (const id of ['.hidden', '..%2Fb', '%2e%2e', 'x'.repeat(65)]) {
      const res = await read(`/v1/projects/${id}/tools/read_file`, { path: 'hello.txt' }, everything.header);
      expect(res.body.error?.code, id).toBe('INVALID_PARAM');
    }
  });

  it('an unknown project is NOT_FOUND, and a project created later is found', async () => {
    const res = await read('/v1/projects/zzz/tools/read_file', { path: 'hello.txt' }, everything.header);
    expect(res.status).toBe(404);
    expect(res.body.error?.code).toBe('NOT_FOUND');
    expect(res.body.error?.message).toMatch(/Unknown project 'zzz'/);
    await fs.mkdir(path.join(projectsRoot, 'zzz'));
    await fs.writeFile(path.join(projectsRoot, 'zzz', 'hello.txt'), 'late');
    const again = await read('/v1/projects/zzz/tools/read_file', { path: 'hello.txt' }, everything.header);
    expect(again.status).toBe(200);
  });

  it('a token for project a gets ACCESS_DENIED on b by every route', async () => {
    const attempts = [
      read('/v1/projects/b/tools/read_file', { path: 'hello.txt' }, onlyA.header),
      read('/v1/tools/read_file', { path: 'hello.txt' }, { ...onlyA.header, 'x-project-id': 'b' }),
      read('/v1/projects/b/tools/read', { path: 'hello.txt' }, onlyA.header),
      read('/v1/projects/a/tools/read_file', { path: '[b]/hello.txt' }, onlyA.header),
      read('/v1/projects/a/tools/write_file', { path: '[b]/evil.txt', content: 'x' }, onlyA.header),
      read('/v1/tools/read_file', { path: '[b]/hello.txt' }, { ...onlyA.header, 'x-project-id': 'a' }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.body.error?.code).toBe('ACCESS_DENIED');
      expect(JSON.stringify(res.body)).not.toContain('from b');
    }
    await expect(fs.access(path.join(projectsRoot, 'b', 'evil.txt'))).rejects.toThrow();
    // and it learns nothing about which projects exist
    const unknown = await read('/v1/projects/nope/tools/read_file', { path: 'x' }, onlyA.header);
    expect(unknown.body.error?.code).toBe('ACCESS_DENIED');
    // its own project works
    expect((await read('/v1/projects/a/tools/read_file', { path: 'hello.txt' }, onlyA.header)).status).toBe(200);
  });

  it('the URL and the header must not disagree', async () => {
    const res = await read('/v1/projects/a/tools/read_file', { path: 'hello.txt' }, { ...onlyA.header, 'x-project-id': 'b' });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_PARAM');
  });

  it('[otherId]/path reaches another project when the token allows it', async () => {
    const res = await read('/v1/projects/a/tools/read_file', { path: '[b]/hello.txt' }, aAndB.header);
    expect(res.status).toBe(200);
    expect((res.body.data as { content: string }).content).toBe('from b');
    expect(res.body.context.path_resolved).toBe('[b]/hello.txt');
    const w = await read('/v1/projects/a/tools/write_file', { path: '[b]/from-a.txt', content: 'cross' }, aAndB.header);
    expect(w.status).toBe(200);
    expect(await fs.readFile(path.join(projectsRoot, 'b', 'from-a.txt'), 'utf8')).toBe('cross');
    const missing = await read('/v1/projects/a/tools/read_file', { path: '[nope]/x.txt' }, everything.header);
    expect(missing.body.error?.code).toBe('NOT_FOUND');
    const invalid = await read('/v1/projects/a/tools/read_file', { path: '[.x]/x.txt' }, everything.header);
    expect(invalid.body.error?.code).toBe('INVALID_PARAM');
  });

  it('a cross-project change keeps its lock, temp file and backup in the owning project (restorable there)', async () => {
    const v = (await read('/v1/projects/b/tools/read_file', { path: 'hello.txt' }, aAndB.header)).body.data as { version: { sha256: string } };
    const w = await read('/v1/projects/a/tools/edit_file', { path: '[b]/hello.txt', old_text: 'from b', new_text: 'edited from a', expected_sha256: v.version.sha256 }, aAndB.header);
    expect(w.status).toBe(200);
    const backupId = (w.body.data as { backup_id: string }).backup_id;
    const listed = await read('/v1/projects/b/tools/list_backups', { path: 'hello.txt' }, aAndB.header);
    expect((listed.body.data as { backups: { backup_id: string }[] }).backups.map((b) => b.backup_id)).toEqual([backupId]);
    const viaA = await read('/v1/projects/a/tools/list_backups', { path: '[b]/hello.txt' }, aAndB.header);
    expect((viaA.body.data as { backups: { backup_id: string }[] }).backups.map((b) => b.backup_id)).toEqual([backupId]);
    await expect(fs.stat(path.join(projectsRoot, 'a', '.toolgate', 'backups'))).rejects.toThrow();
    const restored = await read('/v1/projects/b/tools/restore_backup', { backup_id: backupId }, aAndB.header);
    expect(restored.status).toBe(200);
    expect(await fs.readFile(path.join(projectsRoot, 'b', 'hello.txt'), 'utf8')).toBe('from b');
  });

  it('a local directory named [b] is reached as ./[b]/…, reported so, and its backup restores in this project only (issue 12)', async () => {
    await fs.writeFile(path.join(projectsRoot, 'b', 'b.txt'), 'project b\n');
    const call = (tool: string, body: unknown) => read(`/v1/projects/a/tools/${tool}`, body, aAndB.header);
    const created = await call('write_file', { path: './[b]/b.txt', content: 'local v1\n', create_dirs: true });
    expect(created.body.status, JSON.stringify(created.body.error)).toBe('success');
    expect(await fs.readFile(path.join(projectsRoot, 'a', '[b]', 'b.txt'), 'utf8')).toBe('local v1\n');
    const sha = (created.body.data as { version: { sha256: string } }).version.sha256;
    const updated = await call('write_file', { path: './[b]/b.txt', content: 'local v2\n', expected_sha256: sha });
    expect(updated.body.data).toMatchObject({ applied: true });
    const backupId = (updated.body.data as { backup_id: string }).backup_id;
    // Every tool that reports the path writes it so that it reads back as the local file.
    const listed = (await call('list_directory', { path: '.', depth: 3 })).body.data as { entries: { path: string }[] };
    expect(listed.entries.map((e) => e.path)).toEqual(expect.arrayContaining(['./[b]', './[b]/b.txt']));
    const found = (await call('search_files', { path: '.', query: 'local', mode: 'content' })).body.data as { results: { path: string }[] };
    expect(found.results.map((r) => r.path)).toEqual(['./[b]/b.txt']);
    const large = (await call('find_large_files', { path: '.', min_size_bytes: 1 })).body.data as { files: { path: string }[] };
    expect(large.files.map((f) => f.path)).toContain('./[b]/b.txt');
    const backups = (await call('list_backups', {})).body.data as { backups: { backup_id: string; path: string }[] };
    expect(backups.backups).toEqual([expect.objectContaining({ backup_id: backupId, path: './[b]/b.txt' })]);
    const back = await call('read_file', { path: './[b]/b.txt' });
    expect((back.body.data as { content: string }).content).toBe('local v2\n');
    // The backup stores project a and the real path, and restores there, never into project b.
    const stateA = path.join(projectsRoot, 'a', '.toolgate');
    const origin = JSON.parse(await fs.readFile(path.join(path.dirname(backupFile(stateA, backupId)), 'origin'), 'utf8')) as { project: string; path: string };
    expect(origin).toMatchObject({ project: 'a', path: '[b]/b.txt' });
    const restored = await call('restore_backup', { backup_id: backupId });
    expect(restored.body.status, JSON.stringify(restored.body.error)).toBe('success');
    expect((restored.body.data as { path: string }).path).toBe('./[b]/b.txt');
    expect(await fs.readFile(path.join(projectsRoot, 'a', '[b]', 'b.txt'), 'utf8')).toBe('local v1\n');
    expect(await fs.readFile(path.join(projectsRoot, 'b', 'b.txt'), 'utf8')).toBe('project b\n');
    // Without the escape, [b]/ still names project b.
    expect(((await call('read_file', { path: '[b]/b.txt' })).body.data as { content: string }).content).toBe('project b\n');
    // A backup id of another project does not restore from here.
    const bVersion = ((await read('/v1/projects/b/tools/read_file', { path: 'b.txt' }, aAndB.header)).body.data as { version: { sha256: string } }).version;
    const bWrite = await read('/v1/projects/b/tools/write_file', { path: 'b.txt', content: 'b v2\n', expected_sha256: bVersion.sha256 }, aAndB.header);
    const bBackup = (bWrite.body.data as { backup_id: string }).backup_id;
    expect((await call('restore_backup', { backup_id: bBackup })).body.error?.code).toBe('NOT_FOUND');
    expect(await fs.readFile(path.join(projectsRoot, 'b', 'b.txt'), 'utf8')).toBe('b v2\n');
  });

  it('[otherId]/.. cannot climb out of the other project', async () => {
    const res = await read('/v1/projects/a/tools/read_file', { path: '[b]/../a/hello.txt' }, aAndB.header);
    expect(res.body.status).toBe('error');
    expect(res.body.error?.code).toBe('ACCESS_DENIED');
  });

  it('workspaces are opened lazily and cached', async () => {
    const { projects } = t.app.toolgate;
    expect(projects.multi).toBe(true);
    expect(await projects.openedWorkspaces()).toHaveLength(0);
    await read('/v1/projects/a/tools/read_file', { path: 'hello.txt' }, everything.header);
    await read('/v1/projects/a/tools/read_file', { path: 'hello.txt' }, everything.header);
    const opened = await projects.openedWorkspaces();
    expect(opened.map((w) => w.id)).toEqual(['a']);
    expect(await projects.project('a', null)).toBe(opened[0]);
  });
});

describe('TOOLGATE_STATE_DIR in multi-project mode', () => {
  it('each project keeps its state in <stateDir>/<projectId>', async () => {
    const stateDir = await makeTempDir('toolgate-state-');
    const app = await makeApp({ TOOLGATE_PROJECTS_ROOT: projectsRoot, TOOLGATE_STATE_DIR: stateDir });
    try {
      const res = await request(app.app, 'POST', '/v1/projects/a/tools/write_file', { path: 'n.txt', content: 'x' });
      expect(res.status).toBe(200);
      await app.app.toolgate.audit.flush();
      expect((await fs.readdir(path.join(stateDir, 'a', 'audit'))).length).toBe(1);
      await expect(fs.access(path.join(projectsRoot, 'a', '.toolgate'))).rejects.toThrow();
    } finally {
      await app.close();
      await fs.rm(stateDir, { recursive: true, force: true });
    }
  });
});

describe('single-workspace mode', () => {
  it('a project id is NOT_FOUND (there are no projects)', async () => {
    const single = await makeApp();
    try {
      const byUrl = await request(single.app, 'POST', '/v1/projects/a/tools/read_file', { path: 'x' });
      expect(byUrl.body.error?.code).toBe('NOT_FOUND');
      const cross = await single.call('read_file', { path: '[a]/x' });
      expect(cross.body.error?.code).toBe('NOT_FOUND'); // a local path: there is no file x in a directory [a]
    } finally {
      await single.close();
    }
  });

  it('[x]/ is a directory, never a project prefix: a file search_files reports reads back by that path (issue 12)', async () => {
    const single = await makeApp();
    try {
      await fs.mkdir(single.file('[B]'));
      await fs.writeFile(single.file('[B]/b.txt'), 'in a directory named [B]\n');
      const found = (await single.call('search_files', { path: '.', query: 'named', mode: 'content' })).body.data as { results: { path: string }[] };
      expect(found.results).toHaveLength(1);
      for (const p of [found.results[0]!.path, '[B]/b.txt', './[B]/b.txt']) {
        const res = await single.call('read_file', { path: p });
        expect((res.body.data as { content: string } | null)?.content, p).toBe('in a directory named [B]\n');
      }
    } finally {
      await single.close();
    }
  });
});
