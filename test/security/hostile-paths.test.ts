// Hostile paths against every path-taking tool of the registry (docs/api.md): nothing outside the workspace is
// read, written or listed, no host path leaks, and every answer is an envelope without a 5xx.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/envelope.js';
import { findTool, TOOLS } from '../../src/tools/registry.js';
import { makeApp, type CallResult, type TestApp } from '../helpers.js';
import { expectEnvelope, expectParamsEcho, withoutEcho } from './envelope-checks.js';
import { argsAreValid, argsFor, pathKeysOf, pathTargets, targetArgs } from './tool-args.js';

const SECRET = 'TOP-SECRET-7f3a9c-outside-the-workspace';
const SECRET_NAME = 'secret-name-q8Zr2w.txt';
const INSIDE = 'inside content\n';
/** Per call: a FIFO opened without O_NONBLOCK would hang forever; long enough for any busy machine. */
const CALL_TIMEOUT_MS = 30_000;

let t: TestApp;
let base: string; // temp dir holding ws/, ws-evil/ and outside/
let outside: string;
let evil: string;
let sockServer: net.Server | null = null;
let baseline = '';

const refused = (...codes: ErrorCode[]) => codes;
const DENIED = refused('ACCESS_DENIED');
const INVALID = refused('INVALID_PARAM');

interface Hostile {
  label: string;
  path: () => string;
  /** Codes every tool must answer with; undefined when the name is legitimate (e.g. a literal '%2e%2e'). */
  expect?: ErrorCode[];
}

const HOSTILE: Hostile[] = [
  { label: 'parent ../x', path: () => '../x', expect: DENIED },
  { label: 'a/../../x', path: () => 'a/../../x', expect: DENIED },
  { label: 'bare ..', path: () => '..', expect: DENIED },
  { label: './../', path: () => './../', expect: DENIED },
  { label: 'hard-to-spot a/./../../x', path: () => 'a/./../../x', expect: DENIED },
  { label: 'deep ../../../../etc/passwd', path: () => '../../../../../../../../etc/passwd', expect: DENIED },
  { label: 'dir/../../x', path: () => 'dir/../../x', expect: DENIED },
  { label: 'a/b/../../../x', path: () => 'a/b/../../../x', expect: DENIED },
  { label: 'sibling-prefix ../ws-evil/secret', path: () => '../ws-evil/secret', expect: DENIED },
  { label: 'url-encoded %2e%2e/x (literal name)', path: () => '%2e%2e/x' },
  { label: 'url-encoded %2e%2e%2fsecret (literal name)', path: () => '%2e%2e%2fsecret' },
  { label: 'double-encoded %252e%252e/x (literal name)', path: () => '%252e%252e/x' },
  { label: '..%2fx (literal name)', path: () => '..%2fx' },
  { label: '..%5cx (literal name)', path: () => '..%5cx' },
  { label: 'two-dot leader \\u2025/x', path: () => '\u2025/x' },
  { label: 'one-dot leaders \\u2024\\u2024/x', path: () => '\u2024\u2024/x' },
  { label: 'fullwidth ．．／x', path: () => '\uff0e\uff0e\uff0fx' },
  { label: 'division slash ..\\u2215x', path: () => '..\u2215x' },
  { label: 'NUL byte', path: () => 'inside.txt\0.png', expect: INVALID },
  { label: 'NUL after ..', path: () => '..\0/x', expect: INVALID },
  { label: 'backslashes ..\\x', path: () => '..\\x', expect: INVALID },
  { label: 'drive C:\\x', path: () => 'C:\\x', expect: INVALID },
  { label: 'absolute /etc/passwd', path: () => '/etc/passwd', expect: INVALID },
  { label: 'absolute //etc/passwd', path: () => '//etc/passwd', expect: INVALID },
  { label: 'absolute workspace root', path: () => t.root, expect: INVALID },
  { label: 'absolute file inside the root', path: () => `${t.root}/inside.txt`, expect: INVALID },
  { label: 'absolute sibling-prefix dir', path: () => `${t.root}-evil/secret`, expect: INVALID },
  { label: 'empty path', path: () => '', expect: INVALID },
  { label: 'overlong path (>4096 bytes)', path: () => 'a/'.repeat(2100) + 'x', expect: INVALID },
  { label: 'overlong segment (>255 bytes)', path: () => 'y'.repeat(300), expect: INVALID },
  { label: 'state directory .toolgate', path: () => '.toolgate', expect: DENIED },
  { label: 'inside the state directory', path: () => '.toolgate/locks/x.lock', expect: DENIED },
  { label: 'state tmp directory', path: () => '.toolgate/tmp', expect: DENIED },
  { label: 'state dir through ./', path: () => './.toolgate/', expect: DENIED },
  { label: 'state dir via a/../', path: () => 'a/../.toolgate/backups', expect: DENIED },
  { label: 'symlink to the state dir', path: () => 'state-link', expect: DENIED },
  { label: 'file below a symlink to the state dir', path: () => 'state-link/new.txt', expect: DENIED },
  { label: 'temp-file-like name', path: () => 'x.toolgate-tmp-0123456789abcdef', expect: DENIED },
  { label: 'temp-file-like name in a dir', path: () => 'dir/.toolgate-tmp-1/f', expect: DENIED },
  { label: 'symlinked file to outside', path: () => 'link-out-file', expect: DENIED },
  { label: 'symlinked directory to outside', path: () => 'link-out-dir', expect: DENIED },
  { label: 'file below a symlinked directory to outside', path: () => 'link-out-dir/secret.txt', expect: DENIED },
  { label: 'new file below a symlinked directory (symlinked parent)', path: () => 'link-out-dir/new.txt', expect: DENIED },
  { label: 'symlinked directory in the middle a/link/b/c.txt', path: () => 'a/link/b/c.txt', expect: DENIED },
  { label: 'symlink chain link1->link2->outside', path: () => 'chain1', expect: DENIED },
  { label: 'symlink loop', path: () => 'loop1', expect: DENIED },
  { label: 'dangling symlink to outside (absolute)', path: () => 'dangling-out', expect: DENIED },
  { label: 'dangling symlink to outside (relative)', path: () => 'dangling-out-rel', expect: DENIED },
  { label: 'relative symlink into the sibling-prefix dir', path: () => 'evil-rel', expect: DENIED },
  { label: 'symlink through a missing dir and .. into a symlinked dir', path: () => 'sneaky', expect: refused('NOT_FOUND', 'ACCESS_DENIED') },
  { label: 'symlink to /proc/self/root', path: () => 'proc-root', expect: DENIED },
  { label: 'file below a symlink to /proc/self/root', path: () => 'proc-root/etc/passwd', expect: DENIED },
  { label: 'symlink to /proc/self/cwd', path: () => 'proc-cwd', expect: DENIED },
  { label: 'symlink to /etc/passwd', path: () => 'etc-passwd', expect: DENIED },
  { label: 'FIFO', path: () => 'fifo' },
  { label: 'unix socket', path: () => 'sock' },
  { label: 'the workspace root .', path: () => '.' },
  { label: 'symlink out followed by .. (lexical)', path: () => 'link-out-dir/../inside.txt' },
];

async function plantFixtures(): Promise<void> {
  const ws = t.root;
  await fs.writeFile(path.join(ws, 'inside.txt'), INSIDE);
  await fs.writeFile(path.join(ws, 'victim.txt'), 'victim\n');
  await fs.mkdir(path.join(ws, 'dir'), { recursive: true });
  await fs.writeFile(path.join(ws, 'dir', 'file.txt'), 'in dir\n');
  await fs.mkdir(path.join(ws, 'a'), { recursive: true });
  await fs.symlink('inside.txt', path.join(ws, 'link-inside'));
  await fs.symlink('dir', path.join(ws, 'linkdir-inside'));
  await fs.symlink(path.join(outside, 'secret.txt'), path.join(ws, 'link-out-file'));
  await fs.symlink(outside, path.join(ws, 'link-out-dir'));
  await fs.symlink(outside, path.join(ws, 'a', 'link'));
  await fs.symlink('chain2', path.join(ws, 'chain1'));
  await fs.symlink(path.join(outside, 'secret.txt'), path.join(ws, 'chain2'));
  await fs.symlink('loop2', path.join(ws, 'loop1'));
  await fs.symlink('loop1', path.join(ws, 'loop2'));
  await fs.symlink(path.join(outside, 'created-by-dangling.txt'), path.join(ws, 'dangling-out'));
  await fs.symlink('../outside/created-by-dangling-rel.txt', path.join(ws, 'dangling-out-rel'));
  await fs.symlink('../ws-evil/secret', path.join(ws, 'evil-rel'));
  await fs.symlink('ghost/../link-out-dir/pwned.txt', path.join(ws, 'sneaky'));
  await fs.symlink('.toolgate', path.join(ws, 'state-link'));
  await fs.symlink('/proc/self/root', path.join(ws, 'proc-root'));
  await fs.symlink('/proc/self/cwd', path.join(ws, 'proc-cwd'));
  await fs.symlink('/etc/passwd', path.join(ws, 'etc-passwd'));
  await fs.symlink('.', path.join(ws, 'rootlink'));
  execFileSync('mkfifo', [path.join(ws, 'fifo')]);
  sockServer = net.createServer();
  const server = sockServer;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path.join(ws, 'sock'), () => resolve());
  });
}

async function plantOutside(): Promise<void> {
  await fs.mkdir(path.join(outside, 'b'), { recursive: true });
  await fs.writeFile(path.join(outside, 'secret.txt'), `${SECRET}\nx\n`);
  await fs.writeFile(path.join(outside, SECRET_NAME), `${SECRET}\n`);
  await fs.writeFile(path.join(outside, 'b', 'c.txt'), `${SECRET} x\n`);
  await fs.mkdir(evil, { recursive: true });
  await fs.writeFile(path.join(evil, 'secret'), `${SECRET}\nx\n`);
}

/** Recursive listing with contents and link targets, so any change (even a touch) shows. */
async function snapshot(dir: string, skip: (rel: string) => boolean = () => false): Promise<string> {
  const out: string[] = [];
  const walk = async (abs: string, rel: string): Promise<void> => {
    const names = (await fs.readdir(abs)).sort();
    for (const name of names) {
      const r = rel ? `${rel}/${name}` : name;
      if (skip(r)) continue;
      const p = path.join(abs, name);
      const st = await fs.lstat(p);
      if (st.isSymbolicLink()) out.push(`L ${r} -> ${await fs.readlink(p)}`);
      else if (st.isDirectory()) {
        out.push(`D ${r} ${st.mode.toString(8)}`);
        await walk(p, r);
      } else if (st.isFile()) out.push(`F ${r} ${st.mode.toString(8)} ${st.mtimeMs} ${(await fs.readFile(p)).toString('base64')}`);
      else out.push(`O ${r} ${st.mode.toString(8)}`);
    }
  };
  await walk(dir, '');
  return out.join('\n');
}

const outsideSnapshot = () => snapshot(base, (r) => r === 'ws' || r.startsWith('ws/'));
const wsSnapshot = () => snapshot(t.root, (r) => r === '.toolgate' || r.startsWith('.toolgate/'));

async function closeSocket(): Promise<void> {
  const server = sockServer;
  sockServer = null;
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Puts the workspace back to the fixtures when a call changed it (e.g. a legit '%2e%2e' name was written). */
async function resetWorkspace(): Promise<void> {
  if ((await wsSnapshot()) === baseline) return;
  await closeSocket();
  for (const name of await fs.readdir(t.root)) {
    if (name !== '.toolgate') await fs.rm(path.join(t.root, name), { recursive: true, force: true });
  }
  await plantFixtures();
  baseline = await wsSnapshot();
}

async function call(tool: string, body: Record<string, unknown>): Promise<CallResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${tool} did not answer within ${CALL_TIMEOUT_MS} ms (blocked?)`)), CALL_TIMEOUT_MS);
  });
  try {
    return await Promise.race([t.call(tool, body), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The invariants every answer to a hostile path must hold. */
function expectSafeAnswer(res: CallResult, sent: Record<string, unknown>): void {
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
  expectEnvelope(res.body, res.status);
  expectParamsEcho(res.body, sent);
  const raw = JSON.stringify(res.body);
  expect(raw).not.toContain(SECRET);
  expect(raw).not.toContain(SECRET_NAME);
  const echoFree = withoutEcho(res.body);
  for (const hostPath of [base, t.root, outside, evil, process.cwd()]) {
    expect(echoFree, `host path ${hostPath} leaked`).not.toContain(hostPath);
  }
  // '/etc' or '/proc' as an absolute path (a relative 'proc-root/etc/passwd' echoed back is the caller's own name).
  expect(echoFree).not.toMatch(/(^|["'\s(:=,])\/(etc|proc)(\/|["'\s)]|$)/);
  const resolved = res.body.context.path_resolved;
  if (resolved !== null) expect(resolved.startsWith('/'), `path_resolved ${resolved} is relative`).toBe(false);
}

beforeAll(async () => {
  t = await makeApp();
  base = path.dirname(t.root);
  outside = path.join(base, 'outside');
  evil = `${t.root}-evil`;
  await plantOutside();
  await plantFixtures();
  baseline = await wsSnapshot();
});

afterAll(async () => {
  await closeSocket();
  await t?.close();
});

describe('hostile paths: the arguments table', () => {
  it('has minimal valid arguments for every path-taking tool in the registry', () => {
    const pathTools = TOOLS.filter((tool) => pathKeysOf(tool).length > 0);
    expect(pathTools.map((tool) => tool.name)).toContain('read_file');
    expect(pathTools.map((tool) => tool.name)).toContain('write_file');
    for (const target of pathTargets({ path: 'victim.txt', destination: 'moved-by-test.txt' })) {
      const args = targetArgs(target, 'inside.txt');
      expect(argsAreValid(target.tool, args), `add ${target.tool.name} to TOOL_ARGS in test/security/tool-args.ts: ${JSON.stringify(args)}`).toBe(true);
    }
  });

  it('covers at least 40 hostile inputs', () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(40);
  });
});

const TARGETS = pathTargets({ path: 'victim.txt', destination: 'moved-by-test.txt' });

describe.each(TARGETS.map((target) => ({ target, name: `${target.tool.name}.${target.key}` })))('hostile paths: $name', ({ target }) => {
  const { tool, key, base: args } = target;
  beforeEach(resetWorkspace);

  it.each(HOSTILE)('$label', async (h) => {
    const before = await outsideSnapshot();
    const sent = targetArgs(target, h.path());
    const res = await call(tool.name, sent);
    expectSafeAnswer(res, sent);
    if (h.expect) {
      if (target.codeOf) expect(h.expect, JSON.stringify(res.body)).toContain(target.codeOf(res.body));
      else {
        expect(res.body.status, JSON.stringify(res.body)).toBe('error');
        expect(h.expect, JSON.stringify(res.body.error)).toContain(res.body.error?.code);
      }
    }
    if (key !== 'path' && typeof args.path === 'string' && res.body.status === 'error') {
      // A refused destination leaves the source where it was.
      expect(await fs.readFile(path.join(t.root, String(args.path)), 'utf8')).toBe('victim\n');
    }
    expect(await outsideSnapshot(), 'nothing outside the workspace changed').toBe(before);
  }, CALL_TIMEOUT_MS + 4_000);
});

describe('hostile paths: specific outcomes', () => {
  beforeEach(resetWorkspace);

  it('percent-encoded dots are a literal file name, never decoded', async () => {
    const res = await call('write_file', { path: '%2e%2e/x', content: 'literal' });
    expect(res.body.status).toBe('success');
    expect(await fs.readFile(path.join(t.root, '%2e%2e', 'x'), 'utf8')).toBe('literal');
    const res2 = await call('write_file', { path: '..%2fx', content: 'literal2' });
    expect(res2.body.status).toBe('success');
    expect(await fs.readFile(path.join(t.root, '..%2fx'), 'utf8')).toBe('literal2');
    const read = await call('read_file', { path: '%2e%2e/x' });
    expect(read.body.data).toMatchObject({ content: 'literal' });
  });

  it('unicode look-alikes of dots and slashes are literal names inside the workspace', async () => {
    for (const p of ['\u2025/x', '\uff0e\uff0e\uff0fx', '..\u2215x']) {
      const res = await call('write_file', { path: p, content: 'u' });
      expect(res.body.status, p).toBe('success');
      expect(await fs.readFile(path.join(t.root, p), 'utf8')).toBe('u');
    }
  });

  it('a FIFO is refused as NOT_REGULAR_FILE without blocking (read and write)', async () => {
    for (const tool of ['read_file', 'write_file']) {
      const res = await call(tool, argsFor(findTool(tool)!, { path: 'fifo' }));
      expect(res.status).toBe(409);
      expect(res.body.error?.code).toBe('NOT_REGULAR_FILE');
    }
  }, CALL_TIMEOUT_MS * 2 + 2_000);

  it('a unix socket is refused as NOT_REGULAR_FILE', async () => {
    const res = await call('read_file', { path: 'sock' });
    expect(res.body.error?.code).toBe('NOT_REGULAR_FILE');
  });

  // Regression: delete_file opened a unix socket to hash it; open fails with ENXIO, which became a 500.
  it('a unix socket is refused as NOT_REGULAR_FILE by delete_file, never a 500', async () => {
    const tool = findTool('delete_file');
    if (!tool) return;
    const res = await call('delete_file', argsFor(tool, { path: 'sock' }));
    expect(res.status).toBe(409);
    expect(res.body.error?.code).toBe('NOT_REGULAR_FILE');
    expect((await fs.lstat(path.join(t.root, 'sock'))).isSocket()).toBe(true);
  });

  it('a write through a dangling symlink to outside does not create the outside file', async () => {
    for (const p of ['dangling-out', 'dangling-out-rel']) {
      const res = await call('write_file', { path: p, content: 'pwned' });
      expect(res.body.error?.code).toBe('ACCESS_DENIED');
    }
    await expect(fs.access(path.join(outside, 'created-by-dangling.txt'))).rejects.toThrow();
    await expect(fs.access(path.join(outside, 'created-by-dangling-rel.txt'))).rejects.toThrow();
  });

  it('a new file below a symlinked parent directory leaves the outside directory empty of it', async () => {
    const before = await fs.readdir(outside);
    const res = await call('write_file', { path: 'link-out-dir/new.txt', content: 'pwned' });
    expect(res.body.error?.code).toBe('ACCESS_DENIED');
    const res2 = await call('write_file', { path: 'link-out-dir/deeper/new.txt', content: 'pwned' });
    expect(res2.body.error?.code).toBe('ACCESS_DENIED');
    expect(await fs.readdir(outside)).toEqual(before);
  });

  // Regression: the sandbox resolved the rest of a symlink target lexically once a segment was missing,
  // so 'ghost/../link-out-dir/pwned.txt' ended on <root>/link-out-dir/pwned.txt (inside, lexically) and the
  // write followed link-out-dir to the outside directory.
  it('a symlink target through a missing directory and .. into a symlinked dir cannot write outside', async () => {
    const res = await call('write_file', { path: 'sneaky', content: 'pwned' });
    expect(res.body.status).toBe('error');
    await expect(fs.access(path.join(outside, 'pwned.txt'))).rejects.toThrow();
    await fs.symlink('ghost/../link-out-dir/secret.txt', path.join(t.root, 'sneaky-read'));
    const read = await call('read_file', { path: 'sneaky-read' });
    expect(read.body.status).toBe('error');
    expect(JSON.stringify(read.body)).not.toContain(SECRET);
  });

  // Regression: a symlink ending in '.' or '..' kept no stat of its final directory, so a link to the
  // workspace root looked like a missing file.
  it('a symlink to the workspace root is a directory, not a missing file', async () => {
    const res = await call('read_file', { path: 'rootlink' });
    expect(res.body.error?.code).toBe('IS_DIRECTORY');
    const res2 = await call('read_file', { path: 'rootlink/inside.txt' });
    expect(res2.body.data).toMatchObject({ content: INSIDE });
  });

  it('tree walks (search, list, large files, disk usage) never follow a symlink out of the workspace', async () => {
    const big = path.join(outside, 'big-outside.bin');
    await fs.writeFile(big, '');
    await fs.truncate(big, 200 * 1024 * 1024);
    try {
      if (findTool('search_files')) {
        for (const mode of ['content', 'name', 'both']) {
          for (const query of ['TOP-SECRET-7f3a9c', 'secret-name-q8Zr2w', 'big-outside']) {
            const res = await call('search_files', { path: '.', query, mode, respect_gitignore: false, max_depth: 10 });
            expectEnvelope(res.body, res.status);
            expect(res.body.status, JSON.stringify(res.body.error)).not.toBe('error');
            expect(JSON.stringify(res.body.data), `${mode} ${query}`).not.toMatch(/secret\.txt|c\.txt|TOP-SECRET-7f3a9c-outside|secret-name-q8Zr2w|big-outside/);
            expect(res.body.stats.matches ?? 0, `${mode} ${query}`).toBe(0);
          }
        }
      }
      if (findTool('list_directory')) {
        const res = await call('list_directory', { path: '.', depth: 10, include_hidden: true, limit: 10_000 });
        expect(res.body.status).not.toBe('error');
        const paths = (res.body.data as { entries: { path: string }[] }).entries.map((e) => e.path);
        expect(paths).toContain('link-out-dir');
        expect(paths.filter((p) => p.startsWith('link-out-dir/') || p.startsWith('a/link/') || p.startsWith('proc-root/') || p.startsWith('.toolgate'))).toEqual([]);
        expect(JSON.stringify(res.body)).not.toContain(SECRET_NAME);
      }
      if (findTool('find_large_files')) {
        const res = await call('find_large_files', { path: '.', min_size_bytes: 1 });
        expect(res.body.status).not.toBe('error');
        expect(JSON.stringify(res.body.data)).not.toMatch(/big-outside|secret|c\.txt/);
      }
      if (findTool('disk_usage')) {
        const res = await call('disk_usage', { path: '.' });
        expect(res.body.status).not.toBe('error');
        expect((res.body.data as { bytes: number }).bytes).toBeLessThan(1024 * 1024);
      }
    } finally {
      await fs.rm(big, { force: true });
    }
  });

  it('symlinks inside the workspace that point inside are followed', async () => {
    const read = await call('read_file', { path: 'link-inside' });
    expect(read.body.status).toBe('success');
    expect(read.body.data).toMatchObject({ content: INSIDE });
    const inDir = await call('read_file', { path: 'linkdir-inside/file.txt' });
    expect(inDir.body.data).toMatchObject({ content: 'in dir\n' });
    const sha = (read.body.data as { version: { sha256: string } }).version.sha256;
    const write = await call('write_file', { path: 'link-inside', content: 'changed through the link\n', expected_sha256: sha });
    expect(write.body.status).toBe('success');
    expect(await fs.readFile(path.join(t.root, 'inside.txt'), 'utf8')).toBe('changed through the link\n');
    expect((await fs.lstat(path.join(t.root, 'link-inside'))).isSymbolicLink()).toBe(true);
  });
});

describe('hostile paths: TOOLGATE_ALLOW_ABSOLUTE=true', () => {
  let abs: TestApp;
  beforeAll(async () => {
    abs = await makeApp({ TOOLGATE_ALLOW_ABSOLUTE: 'true' });
    await fs.writeFile(abs.file('inside.txt'), INSIDE);
    await fs.mkdir(`${abs.root}-evil`);
    await fs.writeFile(`${abs.root}-evil/secret`, SECRET);
  });
  afterAll(async () => {
    await abs?.close();
  });

  it('accepts an absolute path inside the root', async () => {
    const res = await abs.call('read_file', { path: `${abs.root}/inside.txt` });
    expect(res.body.status).toBe('success');
    expect(res.body.data).toMatchObject({ content: INSIDE });
    expect(res.body.context.path_resolved).toBe('inside.txt');
    expect(withoutEcho(res.body)).not.toContain(abs.root);
    const write = await abs.call('write_file', { path: `${abs.root}/new/abs.txt`, content: 'abs' });
    expect(write.body.status).toBe('success');
    expect(await fs.readFile(abs.file('new/abs.txt'), 'utf8')).toBe('abs');
  });

  it.each([
    ['a sibling-prefix directory', (r: string) => `${r}-evil/secret`],
    ['a sibling via ..', (r: string) => `${r}/../ws-evil/secret`],
    ['the parent directory', (r: string) => path.dirname(r)],
    ['/etc/passwd', () => '/etc/passwd'],
    ['the state directory', (r: string) => `${r}/.toolgate/locks`],
  ])('refuses an absolute path to %s', async (_label, make) => {
    for (const tool of ['read_file', 'write_file']) {
      const sent = argsFor(findTool(tool)!, { path: make(abs.root) });
      const res = await abs.call(tool, sent);
      expect(res.body.error?.code).toBe('ACCESS_DENIED');
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
      expect(withoutEcho(res.body)).not.toContain(abs.root);
    }
    expect(await fs.readFile(`${abs.root}-evil/secret`, 'utf8')).toBe(SECRET);
  });

  it('still refuses an absolute path inside the root for every path-taking tool when the setting is off', async () => {
    for (const target of TARGETS) {
      const res = await call(target.tool.name, targetArgs(target, `${t.root}/inside.txt`));
      expect(target.codeOf ? target.codeOf(res.body) : res.body.error?.code, target.tool.name).toBe('INVALID_PARAM');
    }
  });
});
