// Held directories (docs/api.md, "Sandbox"): the directory of a recent path is kept open and walked from by the
// next call on a file in it, only while it is still at that very path. A directory renamed, replaced, swapped for
// a link or moved out of the workspace since is never used: the call sees what the path names now.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HELD_DIRS_MAX } from '../../src/workspace/held-dirs.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
const cleanup: string[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const dir of cleanup.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

async function app(): Promise<{ a: TestApp; ws: Workspace }> {
  t = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'never' });
  const ws = t.app.toolgate.workspace;
  if (!ws) throw new Error('single workspace expected');
  return { a: t, ws };
}

/** read_file's content, or its error code. */
async function read(a: TestApp, rel: string): Promise<string> {
  const r = await a.call('read_file', { path: rel });
  return r.body.status === 'success' ? (r.body.data as { content: string }).content : `error ${r.body.error?.code}`;
}

/** A file in a held directory: written, then read once, which keeps its directory. */
async function held(a: TestApp, ws: Workspace, rel: string, content: string): Promise<void> {
  await fs.mkdir(path.dirname(a.file(rel)), { recursive: true });
  await fs.writeFile(a.file(rel), content);
  const before = ws.heldDirs.size;
  expect(await read(a, rel)).toBe(content);
  expect(ws.heldDirs.size).toBe(before + 1);
  expect(await read(a, rel)).toBe(content);
}

describe('held directories', () => {
  it('a directory renamed and another made at its path: calls act on the new one', async () => {
    const { a, ws } = await app();
    await held(a, ws, 'd/sub/f.txt', 'one\n');
    await fs.rename(a.file('d/sub'), a.file('d/moved'));
    await fs.mkdir(a.file('d/sub'));
    await fs.writeFile(a.file('d/sub/f.txt'), 'two\n');
    expect(await read(a, 'd/sub/f.txt')).toBe('two\n');
    expect(await read(a, 'd/moved/f.txt')).toBe('one\n');
    expect((await a.call('write_file', { path: 'd/sub/f.txt', content: 'three\n' })).body.status).toBe('success');
    expect(await fs.readFile(a.file('d/sub/f.txt'), 'utf8')).toBe('three\n');
    expect(await fs.readFile(a.file('d/moved/f.txt'), 'utf8')).toBe('one\n');
  });

  it('a held directory swapped for a link to outside the workspace: refused, nothing outside read or written', async () => {
    const { a, ws } = await app();
    const outside = await makeTempDir('toolgate-held-outside-');
    cleanup.push(outside);
    await fs.writeFile(path.join(outside, 'f.txt'), 'secret\n');
    await held(a, ws, 'd/f.txt', 'inside\n');
    await fs.rename(a.file('d'), a.file('d-old'));
    await fs.symlink(outside, a.file('d'));
    expect(await read(a, 'd/f.txt')).toBe('error ACCESS_DENIED');
    expect((await a.call('write_file', { path: 'd/f.txt', content: 'written\n' })).body.error?.code).toBe('ACCESS_DENIED');
    expect(await fs.readFile(path.join(outside, 'f.txt'), 'utf8')).toBe('secret\n');
  });

  it('a held directory moved out of the workspace: not found there, nothing of it read or written', async () => {
    const { a, ws } = await app();
    await held(a, ws, 'd/f.txt', 'inside\n');
    // Beside the workspace root, on the same file system (a rename).
    const away = `${a.root}-away`;
    cleanup.push(away);
    await fs.rename(a.file('d'), away);
    expect(await read(a, 'd/f.txt')).toBe('error NOT_FOUND');
    expect((await a.call('write_file', { path: 'd/f.txt', content: 'written\n' })).body.status).toBe('success');
    expect(await fs.readFile(path.join(away, 'f.txt'), 'utf8')).toBe('inside\n');
    expect(await fs.readFile(a.file('d/f.txt'), 'utf8')).toBe('written\n');
  });

  it('a held directory removed: not found; made again: found', async () => {
    const { a, ws } = await app();
    await held(a, ws, 'd/f.txt', 'one\n');
    await fs.rm(a.file('d'), { recursive: true });
    expect(await read(a, 'd/f.txt')).toBe('error NOT_FOUND');
    await fs.mkdir(a.file('d'));
    await fs.writeFile(a.file('d/f.txt'), 'two\n');
    expect(await read(a, 'd/f.txt')).toBe('two\n');
  });

  it(`at most ${HELD_DIRS_MAX} are held: the process's descriptors do not grow past them`, async () => {
    const { a, ws } = await app();
    const open = async () => (await fs.readdir('/proc/self/fd')).length;
    /** The count once the last call's own descriptors are closed (when it has settled, just after its answer). */
    const openSettled = async (atMost: number) => {
      for (let i = 0; i < 200 && (await open()) > atMost; i++) await new Promise((r) => setTimeout(r, 5));
      return open();
    };
    // A first call at the root (no directory to hold) opens what every call uses (the audit file).
    await fs.writeFile(a.file('first.txt'), 'first\n');
    expect(await read(a, 'first.txt')).toBe('first\n');
    const before = await openSettled(0);
    for (let i = 0; i < HELD_DIRS_MAX + 8; i++) {
      await fs.mkdir(a.file(`many/d${i}`), { recursive: true });
      await fs.writeFile(a.file(`many/d${i}/f.txt`), `${i}\n`);
      expect(await read(a, `many/d${i}/f.txt`)).toBe(`${i}\n`);
    }
    expect(ws.heldDirs.size).toBe(HELD_DIRS_MAX);
    expect(await openSettled(before + HELD_DIRS_MAX)).toBeLessThanOrEqual(before + HELD_DIRS_MAX);
    // The least recently used went first: the newest are still held, and still read right.
    expect(await read(a, `many/d${HELD_DIRS_MAX + 7}/f.txt`)).toBe(`${HELD_DIRS_MAX + 7}\n`);
    expect(ws.heldDirs.size).toBe(HELD_DIRS_MAX);
    await t?.close();
    t = undefined;
    expect(await openSettled(before)).toBeLessThanOrEqual(before);
  });
});
