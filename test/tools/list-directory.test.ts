import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, sha256OfFile, type TestApp } from '../helpers.js';

interface Entry {
  name: string;
  path: string;
  type: string;
  size: number;
  mtime_ms: number;
}
interface ListData {
  entries: Entry[];
  truncated: boolean;
}

describe('list_directory', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeApp();
    await fs.mkdir(t.file('src/tools'), { recursive: true });
    await fs.mkdir(t.file('b-dir'));
    await fs.writeFile(t.file('a.txt'), 'hello');
    await fs.writeFile(t.file('src/main.ts'), 'x');
    await fs.writeFile(t.file('src/tools/t.ts'), 'y');
    await fs.writeFile(t.file('.env'), 'SECRET=1');
  });
  afterEach(async () => {
    await t.close();
  });

  it('lists the root: directories first, then by name, without hidden names or the state directory', async () => {
    await t.call('write_file', { path: 'w.txt', content: 'x' }); // creates the state directory's contents
    const r = await t.call('list_directory', {});
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    const d = r.body.data as ListData;
    expect(d.entries.map((e) => e.path)).toEqual(['b-dir', 'src', 'a.txt', 'w.txt']);
    expect(d.truncated).toBe(false);
    const a = d.entries.find((e) => e.name === 'a.txt') as Entry;
    expect(a).toMatchObject({ type: 'file', size: 5 });
    expect(a.mtime_ms).toBeGreaterThan(0);
    expect(r.body.context.path_resolved).toBe('.');
  });

  it('include_hidden shows dot files but never the state directory', async () => {
    await t.call('write_file', { path: 'w.txt', content: 'x' });
    const r = await t.call('list_directory', { path: '.', include_hidden: true, depth: 3 });
    const paths = (r.body.data as ListData).entries.map((e) => e.path);
    expect(paths).toContain('.env');
    expect(paths.some((p) => p.startsWith('.toolgate'))).toBe(false);
  });

  it('depth walks breadth-first and paths are relative to the workspace root', async () => {
    const r = await t.call('list_directory', { path: 'src', depth: 2 });
    const d = r.body.data as ListData;
    expect(d.entries.map((e) => `${e.type}:${e.path}`)).toEqual(['directory:src/tools', 'file:src/main.ts', 'file:src/tools/t.ts']);
  });

  it('limit truncates and answers partial', async () => {
    const r = await t.call('list_directory', { depth: 3, limit: 2 });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('partial');
    const d = r.body.data as ListData;
    expect(d.truncated).toBe(true);
    expect(d.entries).toHaveLength(2);
    expect(r.body.text).toContain('truncated');
  });

  it('TOOLGATE_SEARCH_MAX_FILES bounds the walk', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_SEARCH_MAX_FILES: '3' });
    for (let i = 0; i < 10; i++) await fs.writeFile(t.file(`f${i}`), '');
    const r = await t.call('list_directory', {});
    expect((r.body.data as ListData).truncated).toBe(true);
    expect((r.body.data as ListData).entries).toHaveLength(3);
  });

  it('lists .git and node_modules without entering them', async () => {
    await fs.mkdir(t.file('node_modules/pkg'), { recursive: true });
    await fs.mkdir(t.file('.git/objects'), { recursive: true });
    const r = await t.call('list_directory', { depth: 5, include_hidden: true });
    const paths = (r.body.data as ListData).entries.map((e) => e.path);
    expect(paths).toContain('node_modules');
    expect(paths).toContain('.git');
    expect(paths).not.toContain('node_modules/pkg');
    expect(paths).not.toContain('.git/objects');
  });

  it('lists symlinks as symlinks and never follows them out of the workspace', async () => {
    const outside = await makeTempDir('toolgate-outside-');
    await fs.writeFile(path.join(outside, 'secret.txt'), 'top secret');
    await fs.symlink(outside, t.file('escape'));
    await fs.symlink('src', t.file('inside-link'));
    const r = await t.call('list_directory', { depth: 4 });
    const d = r.body.data as ListData;
    expect(d.entries.find((e) => e.name === 'escape')?.type).toBe('symlink');
    expect(d.entries.find((e) => e.name === 'inside-link')?.type).toBe('symlink');
    expect(JSON.stringify(r.body)).not.toContain('secret.txt');
    expect(JSON.stringify(r.body)).not.toContain(outside);
    const via = await t.call('list_directory', { path: 'escape' });
    expect(via.status).toBe(403);
    expect(via.body.error?.code).toBe('ACCESS_DENIED');
    await fs.rm(outside, { recursive: true, force: true });
  });

  it('a symlink to a directory inside the workspace can be listed by name', async () => {
    await fs.symlink('src', t.file('inside-link'));
    const r = await t.call('list_directory', { path: 'inside-link' });
    expect((r.body.data as ListData).entries.map((e) => e.path)).toEqual(['inside-link/tools', 'inside-link/main.ts']);
  });

  it('NOT_FOUND, NOT_A_DIRECTORY, ACCESS_DENIED and INVALID_PARAM', async () => {
    const missing = await t.call('list_directory', { path: 'nope' });
    expect(missing.status).toBe(404);
    expect(missing.body.error?.code).toBe('NOT_FOUND');
    const file = await t.call('list_directory', { path: 'a.txt' });
    expect(file.status).toBe(409);
    expect(file.body.error?.code).toBe('NOT_A_DIRECTORY');
    const state = await t.call('list_directory', { path: '.toolgate' });
    expect(state.status).toBe(403);
    expect(state.body.error?.code).toBe('ACCESS_DENIED');
    const up = await t.call('list_directory', { path: '..' });
    expect(up.body.error?.code).toBe('ACCESS_DENIED');
    for (const body of [{ depth: 0 }, { depth: 11 }, { limit: 0 }, { limit: 10_001 }, { hidden: true }]) {
      const r = await t.call('list_directory', body);
      expect(r.status).toBe(400);
      expect(r.body.error?.code).toBe('INVALID_PARAM');
    }
  });

  it("lists another project's directory ([id]/path) without its state directory", async () => {
    await t.close();
    const base = await makeTempDir('toolgate-projects-');
    await fs.mkdir(path.join(base, 'p1'));
    await fs.mkdir(path.join(base, 'p2/sub'), { recursive: true });
    await fs.writeFile(path.join(base, 'p2/sub/f.txt'), 'x');
    t = await makeApp({ TOOLGATE_PROJECTS_ROOT: base });
    const h = { 'x-project-id': 'p2' };
    await t.call('write_file', { path: 'sub/f.txt', content: 'y', expected_sha256: await sha256OfFile(path.join(base, 'p2/sub/f.txt')) }, h); // fills p2's state dir
    const r = await t.call('list_directory', { path: '[p2]/', depth: 5, include_hidden: true }, { 'x-project-id': 'p1' });
    expect(r.status).toBe(200);
    expect((r.body.data as ListData).entries.map((e) => e.path)).toEqual(['[p2]/sub', '[p2]/sub/f.txt']);
    await fs.rm(base, { recursive: true, force: true });
  });

  it('answers to the file-list alias', async () => {
    const r = await t.call('file-list', { path: 'src' });
    expect(r.status).toBe(200);
  });
});
