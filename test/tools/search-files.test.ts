import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, sha256OfFile, type TestApp } from '../helpers.js';

type Result = { type: 'name'; path: string; kind: string } | { type: 'content'; path: string; line: number; column: number; preview: string };
interface SearchData {
  results: Result[];
  truncated: boolean;
  files_searched: number;
  files_matched: number;
  entries_visited: number;
  skipped_binary: number;
  skipped_large: number;
}

const data = (r: { body: { data: unknown } }) => r.body.data as SearchData;
const show = (r: { body: { data: unknown } }) => data(r).results.map((x) => (x.type === 'name' ? `name:${x.path}` : `${x.path}:${x.line}:${x.column}:${x.preview}`));

// Regexes that must finish get a limit no busy machine reaches; the cases where the limit must fire use a
// regex that never ends under a small one (limited()), so neither outcome depends on the machine's speed.
const GENEROUS = { TOOLGATE_REGEX_TIMEOUT_MS: '600000' };

describe('search_files', () => {
  let t: TestApp;
  let small: TestApp | undefined;
  /** An app over the same workspace whose regex limit is small, for a regex that never ends (the search workers are shared). */
  const limited = async () => (small = await makeApp({ TOOLGATE_ROOT: t.root, TOOLGATE_REGEX_TIMEOUT_MS: '300' }));
  beforeEach(async () => {
    t = await makeApp(GENEROUS);
    await fs.mkdir(t.file('src/deep/er'), { recursive: true });
    await fs.writeFile(t.file('README.md'), '# Project\nSee the TODO list.\n');
    await fs.writeFile(t.file('src/main.ts'), 'const a = 1;\n  // todo: fix\nexport const todoList = [];\n');
    await fs.writeFile(t.file('src/deep/er/x.py'), 'print("hello")\n');
    await fs.writeFile(t.file('src/todo.txt'), 'nothing here\n');
  });
  afterEach(async () => {
    await t.close();
    await small?.close();
    small = undefined;
  });

  it('finds names and content case-insensitively, breadth-first, with line, column and preview', async () => {
    const r = await t.call('search_files', { query: 'todo' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    expect(show(r)).toEqual(['README.md:2:9:See the TODO list.', 'src/main.ts:2:6:// todo: fix', 'src/main.ts:3:14:export const todoList = [];', 'name:src/todo.txt']);
    expect(data(r).truncated).toBe(false);
    expect(data(r).files_searched).toBe(4);
    expect(data(r).files_matched).toBe(2);
    expect(r.body.text).toContain('Found 4 matches');
  });

  it('case_sensitive, mode name and mode content', async () => {
    expect(show(await t.call('search_files', { query: 'TODO', case_sensitive: true }))).toEqual(['README.md:2:9:See the TODO list.']);
    expect(show(await t.call('search_files', { query: 'todo', mode: 'name' }))).toEqual(['name:src/todo.txt']);
    expect(show(await t.call('search_files', { query: 'todo', mode: 'content', case_sensitive: true }))).toEqual(['src/main.ts:2:6:// todo: fix', 'src/main.ts:3:14:export const todoList = [];']);
  });

  it('directories are name hits too', async () => {
    const r = await t.call('search_files', { query: 'deep', mode: 'name' });
    expect(data(r).results).toEqual([{ type: 'name', path: 'src/deep', kind: 'directory' }]);
  });

  it('non-ASCII queries, case-insensitive, with character columns', async () => {
    await fs.writeFile(t.file('u.txt'), 'première ligne\nÉTÉ à Paris\n');
    expect(show(await t.call('search_files', { query: 'été', mode: 'content' }))).toEqual(['u.txt:2:1:ÉTÉ à Paris']);
    expect(show(await t.call('search_files', { query: 'Paris', mode: 'content', case_sensitive: true }))).toEqual(['u.txt:2:7:ÉTÉ à Paris']);
    expect(show(await t.call('search_files', { query: 'paris', mode: 'content' }))).toEqual(['u.txt:2:7:ÉTÉ à Paris']);
  });

  it('a path below the root, a single file, and max_depth', async () => {
    expect(show(await t.call('search_files', { path: 'src/deep', query: 'hello' }))).toEqual(['src/deep/er/x.py:1:8:print("hello")']);
    expect(show(await t.call('search_files', { path: 'src/main.ts', query: 'const a' }))).toEqual(['src/main.ts:1:1:const a = 1;']);
    expect(show(await t.call('search_files', { query: 'hello', max_depth: 2 }))).toEqual([]);
    expect(show(await t.call('search_files', { query: 'hello', max_depth: 4 }))).toHaveLength(1);
  });

  it('glob filters files by basename or by path', async () => {
    expect(show(await t.call('search_files', { query: 'o', glob: '*.py', mode: 'content' }))).toEqual(['src/deep/er/x.py:1:12:print("hello")']);
    expect(show(await t.call('search_files', { query: 'todo', glob: 'src/*.ts' }))).toEqual(['src/main.ts:2:6:// todo: fix', 'src/main.ts:3:14:export const todoList = [];']);
    const bad = await t.call('search_files', { query: 'x', glob: '' });
    expect(bad.status).toBe(400);
  });

  it('regex mode, with line anchors', async () => {
    const r = await t.call('search_files', { query: '^\\s*//\\s*(todo|fixme)', regex: true, mode: 'content' });
    expect(show(r)).toEqual(['src/main.ts:2:1:// todo: fix']);
    const names = await t.call('search_files', { query: '^todo\\.\\w+$', regex: true, mode: 'name' });
    expect(show(names)).toEqual(['name:src/todo.txt']);
  });

  it('INVALID_REGEX for a bad pattern (fixed message)', async () => {
    const r = await t.call('search_files', { query: '([a-', regex: true });
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe('INVALID_REGEX');
    expect(r.body.error?.message).toMatch(/^Invalid regex pattern: /);
  });

  it('a catastrophic regex answers TIMEOUT quickly and the service keeps answering', async () => {
    await fs.writeFile(t.file('evil.txt'), `${'a'.repeat(40)}b\n`);
    const r = await (await limited()).call('search_files', { query: '(a+)+$', regex: true, mode: 'content' });
    expect(r.status).toBe(504);
    expect(r.body.error?.code).toBe('TIMEOUT');
    const names = await t.call('search_files', { query: '(a+)+$', regex: true, mode: 'name' });
    expect(names.status).toBe(200); // short names finish: the pattern alone is not refused
    const after = await t.call('search_files', { query: 'hello', regex: true });
    expect(after.status).toBe(200);
    expect(show(after)).toHaveLength(1);
  });

  it('skips binary files, files over TOOLGATE_MAX_READ_BYTES, .git, node_modules and .gitignored paths', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_MAX_READ_BYTES: '100000' });
    await fs.mkdir(t.file('.git'), { recursive: true });
    await fs.mkdir(t.file('node_modules/p'), { recursive: true });
    await fs.mkdir(t.file('build'), { recursive: true });
    await fs.writeFile(t.file('.git/config'), 'needle');
    await fs.writeFile(t.file('node_modules/p/i.js'), 'needle');
    await fs.writeFile(t.file('build/out.js'), 'needle');
    await fs.writeFile(t.file('.gitignore'), 'build/\n*.log\n');
    await fs.writeFile(t.file('x.log'), 'needle');
    await fs.writeFile(t.file('bin.dat'), Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1])]));
    await fs.writeFile(t.file('big.txt'), `${'x'.repeat(200_000)}needle`);
    await fs.writeFile(t.file('ok.txt'), 'a needle');
    const r = await t.call('search_files', { query: 'needle' });
    expect(show(r)).toEqual(['ok.txt:1:3:a needle']);
    expect(data(r).skipped_binary).toBe(1);
    expect(data(r).skipped_large).toBe(1);
    const all = await t.call('search_files', { query: 'needle', respect_gitignore: false });
    expect(show(all)).toEqual(['ok.txt:1:3:a needle', 'x.log:1:1:needle', 'build/out.js:1:1:needle']); // breadth-first
  });

  it('nested .gitignore files apply below their directory', async () => {
    await fs.writeFile(t.file('src/.gitignore'), 'main.ts\n');
    expect(show(await t.call('search_files', { query: 'todo', mode: 'content' }))).toEqual(['README.md:2:9:See the TODO list.']);
    expect(show(await t.call('search_files', { path: 'src', query: 'todo', mode: 'content' }))).toEqual([]);
  });

  it('never lists or searches the state directory', async () => {
    await t.call('write_file', { path: 'README.md', content: 'new\n', expected_sha256: await sha256OfFile(t.file('README.md')) }); // backup of "TODO" text in the state dir
    const r = await t.call('search_files', { query: 'TODO' });
    expect(JSON.stringify(r.body)).not.toContain('.toolgate');
    expect(show(r)).toEqual(['name:src/todo.txt', 'src/main.ts:2:6:// todo: fix', 'src/main.ts:3:14:export const todoList = [];'].sort((a, b) => (a.startsWith('name') ? 1 : 0) - (b.startsWith('name') ? 1 : 0)));
    const names = await t.call('search_files', { query: 'toolgate', mode: 'name' });
    expect(data(names).results).toEqual([]);
    const into = await t.call('search_files', { path: '.toolgate', query: 'x' });
    expect(into.status).toBe(403);
  });

  it('never follows symlinks out of the workspace', async () => {
    const outside = await makeTempDir('toolgate-outside-');
    await fs.writeFile(path.join(outside, 'secret.txt'), 'needle');
    await fs.symlink(outside, t.file('esc'));
    await fs.symlink(path.join(outside, 'secret.txt'), t.file('leak.txt'));
    const r = await t.call('search_files', { query: 'needle' });
    expect(data(r).results).toEqual([]);
    const names = await t.call('search_files', { query: 'esc', mode: 'name' });
    expect(data(names).results).toEqual([{ type: 'name', path: 'esc', kind: 'symlink' }]);
    expect((await t.call('search_files', { path: 'esc', query: 'needle' })).status).toBe(403);
    await fs.rm(outside, { recursive: true, force: true });
  });

  it('limit truncates and answers partial', async () => {
    for (let i = 0; i < 20; i++) await fs.writeFile(t.file(`m${String(i).padStart(2, '0')}.txt`), 'hit\nhit\n');
    const r = await t.call('search_files', { query: 'hit', limit: 5 });
    expect(r.body.status).toBe('partial');
    expect(data(r).truncated).toBe(true);
    expect(show(r)).toEqual(['m00.txt:1:1:hit', 'm00.txt:2:1:hit', 'm01.txt:1:1:hit', 'm01.txt:2:1:hit', 'm02.txt:1:1:hit']);
    expect(r.body.text).toContain('truncated at limit 5');
    const exact = await t.call('search_files', { query: 'TODO list', limit: 1 });
    expect(data(exact).truncated).toBe(false);
  });

  it('TOOLGATE_SEARCH_MAX_FILES bounds the entries visited', async () => {
    await t.close();
    t = await makeApp({ TOOLGATE_SEARCH_MAX_FILES: '5' });
    for (let i = 0; i < 20; i++) await fs.writeFile(t.file(`f${i}.txt`), 'x');
    const r = await t.call('search_files', { query: 'zzz' });
    expect(r.body.status).toBe('partial');
    expect(data(r).truncated).toBe(true);
    expect(data(r).entries_visited).toBe(5);
    expect(r.body.text).toContain('TOOLGATE_SEARCH_MAX_FILES');
  });

  it('regex search returns the same results as literal search for a literal pattern', async () => {
    for (let i = 0; i < 30; i++) await fs.writeFile(t.file(`src/f${i}.txt`), `line one\nsome todo ${i}\n`);
    const lit = show(await t.call('search_files', { query: 'todo', mode: 'content', limit: 1000 }));
    const re = show(await t.call('search_files', { query: 'todo', mode: 'content', regex: true, limit: 1000 }));
    expect(re).toEqual(lit);
    expect(lit.length).toBe(33);
  });

  it('previews of very long lines are cut around the match', async () => {
    await fs.writeFile(t.file('min.js'), `${'a;'.repeat(50_000)}NEEDLE${'b;'.repeat(50_000)}`);
    const r = await t.call('search_files', { query: 'needle', mode: 'content' });
    const hit = data(r).results[0] as Extract<Result, { type: 'content' }>;
    expect(hit.column).toBe(100_001);
    expect(hit.preview).toContain('NEEDLE');
    expect(hit.preview.length).toBeLessThanOrEqual(203);
  });

  it('NOT_FOUND, ACCESS_DENIED and INVALID_PARAM', async () => {
    expect((await t.call('search_files', { path: 'nope', query: 'x' })).status).toBe(404);
    expect((await t.call('search_files', { path: '..', query: 'x' })).body.error?.code).toBe('ACCESS_DENIED');
    for (const body of [{}, { query: '' }, { query: 'x', mode: 'all' }, { query: 'x', limit: 0 }, { query: 'x', max_depth: 0 }, { query: 'x', hidden: true }]) {
      const r = await t.call('search_files', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error?.code).toBe('INVALID_PARAM');
    }
  });

  it('case-insensitive literal search agrees with a case-insensitive regex, also when candidates are dense', async () => {
    const lines = [`${'e'.repeat(5000)}EeE`, 'ee', 'xEEx', 'Ee', `${'eE'.repeat(3000)}`, 'no', 'QqQ qq', 'crlf qq\r'];
    await fs.writeFile(t.file('dense.txt'), `${lines.join('\n')}\n`);
    for (const query of ['eee', 'EE', 'qq', 'e', 'QQ Q']) {
      const lit = show(await t.call('search_files', { path: 'dense.txt', query, mode: 'content', limit: 1000 }));
      const re = show(await t.call('search_files', { path: 'dense.txt', query: query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), regex: true, mode: 'content', limit: 1000 }));
      expect(lit, query).toEqual(re);
    }
    expect(show(await t.call('search_files', { path: 'dense.txt', query: 'QQ', mode: 'content' }))).toEqual(['dense.txt:7:1:QqQ qq', 'dense.txt:8:6:crlf qq']);
  });

  it('a stuck regex search does not block other requests meanwhile', async () => {
    await fs.writeFile(t.file('evil.txt'), `${'a'.repeat(40)}b\n`);
    const slow = (await limited()).call('search_files', { query: '(a+)+$', regex: true, mode: 'content' });
    const quick = await t.call('read_file', { path: 'README.md' });
    expect(quick.status).toBe(200);
    expect((await slow).body.error?.code).toBe('TIMEOUT');
  });

  it('no match is success (fixed wording)', async () => {
    const r = await t.call('search_files', { query: 'zzzz' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('success');
    expect(r.body.text).toMatch(/^No matches found for 'zzzz'/);
  });

  it("searches another project ([id]/path) without its state directory", async () => {
    await t.close();
    const base = await makeTempDir('toolgate-projects-');
    await fs.mkdir(path.join(base, 'p1'));
    await fs.mkdir(path.join(base, 'p2'));
    await fs.writeFile(path.join(base, 'p2/a.txt'), 'needle one\n');
    t = await makeApp({ TOOLGATE_PROJECTS_ROOT: base });
    await t.call('write_file', { path: 'a.txt', content: 'needle two\n', expected_sha256: await sha256OfFile(path.join(base, 'p2/a.txt')) }, { 'x-project-id': 'p2' }); // backup of "needle one"
    const r = await t.call('search_files', { path: '[p2]/', query: 'needle' }, { 'x-project-id': 'p1' });
    expect(r.status).toBe(200);
    expect(show(r)).toEqual(['[p2]/a.txt:1:1:needle two']);
    await fs.rm(base, { recursive: true, force: true });
  });

  it('answers to the file-search alias', async () => {
    expect((await t.call('file-search', { query: 'hello' })).status).toBe(200);
  });
});

describe('search_files under load', () => {
  it('searches a tree far larger than its pending window completely and in walk order, while concurrent searches wait their turn', async () => {
    // A budget smaller than one search's share: one search at a time, the others queue and still finish complete.
    const t = await makeApp({ TOOLGATE_MEMORY_BUDGET_BYTES: String(8 * 1024 * 1024) });
    try {
      const want: string[] = [];
      for (let d = 0; d < 12; d++) {
        await fs.mkdir(t.file(`tree/d${String(d).padStart(2, '0')}`), { recursive: true });
        for (let f = 0; f < 300; f++) {
          const rel = `tree/d${String(d).padStart(2, '0')}/f${String(f).padStart(3, '0')}.txt`;
          const hit = (d * 300 + f) % 97 === 0;
          await fs.writeFile(t.file(rel), hit ? `x\nfind the needle here\n` : `nothing ${d} ${f}\n`);
          if (hit) want.push(`${rel}:2:10:find the needle here`);
        }
      }
      const rs = await Promise.all(Array.from({ length: 6 }, () => t.call('search_files', { path: 'tree', query: 'needle', mode: 'content', case_sensitive: true, limit: 1000 })));
      for (const r of rs) {
        expect(r.body.status).toBe('success');
        expect(data(r).truncated).toBe(false);
        expect(data(r).files_searched).toBe(3600);
        expect(show(r)).toEqual(want);
      }
    } finally {
      await t.close();
    }
  });
});
