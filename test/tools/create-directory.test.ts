import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';

describe('create_directory', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('creates a directory with its parents', async () => {
    const r = await t.call('create_directory', { path: 'a/b/c' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    expect(r.body.data).toEqual({ created: true, created_path: 'a' });
    expect(r.body.text).toBe("Created directory 'a/b/c' (and parents from 'a').");
    expect((await fs.stat(t.file('a/b/c'))).isDirectory()).toBe(true);
    expect(r.body.context.risk).toBe('write');
    expect(r.body.context.risk_level).toBe('medium');
  });

  it('creates one directory with parents: false when the parent exists', async () => {
    await fs.mkdir(t.file('a'));
    const r = await t.call('create_directory', { path: 'a/b', parents: false });
    expect(r.body.data).toEqual({ created: true, created_path: 'a/b' });
    expect(r.body.text).toBe("Created directory 'a/b'.");
  });

  it('an existing directory is a successful no-op', async () => {
    await fs.mkdir(t.file('d'));
    const r = await t.call('create_directory', { path: 'd' });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ created: false, created_path: null });
    expect(r.body.text).toBe('Directory already exists: d');
  });

  it('ALREADY_EXISTS when a file has the name', async () => {
    await fs.writeFile(t.file('f'), 'x');
    const r = await t.call('create_directory', { path: 'f' });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('ALREADY_EXISTS');
  });

  it('PARENT_NOT_FOUND with parents: false (fixed message)', async () => {
    const r = await t.call('create_directory', { path: 'x/y/z', parents: false });
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe('PARENT_NOT_FOUND');
    expect(r.body.error?.message).toBe('Parent directory does not exist: x/y');
    await expect(fs.stat(t.file('x'))).rejects.toThrow();
  });

  it('NOT_A_DIRECTORY when a parent is a file', async () => {
    await fs.writeFile(t.file('f'), 'x');
    const r = await t.call('create_directory', { path: 'f/sub' });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('NOT_A_DIRECTORY');
  });

  it('ACCESS_DENIED outside, through an escaping symlink and in the state directory', async () => {
    const up = await t.call('create_directory', { path: '../evil' });
    expect(up.status).toBe(403);
    const outside = await makeTempDir('toolgate-outside-');
    await fs.symlink(outside, t.file('esc'));
    const via = await t.call('create_directory', { path: 'esc/new' });
    expect(via.status).toBe(403);
    expect(via.body.error?.code).toBe('ACCESS_DENIED');
    await expect(fs.stat(path.join(outside, 'new'))).rejects.toThrow();
    const state = await t.call('create_directory', { path: '.toolgate/x' });
    expect(state.body.error?.code).toBe('ACCESS_DENIED');
    await fs.rm(outside, { recursive: true, force: true });
  });

  it('INVALID_PARAM for the root and bad arguments', async () => {
    for (const body of [{ path: '.' }, { path: 'a', parents: 'yes' }, {}]) {
      const r = await t.call('create_directory', body);
      expect(r.status).toBe(400);
      expect(r.body.error?.code).toBe('INVALID_PARAM');
    }
  });
});
