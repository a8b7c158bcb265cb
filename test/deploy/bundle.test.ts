// The production build run as production runs it. The build of `npm run build` (tsc, then scripts/bundle.mjs;
// vitest's global set-up makes it), its serving files alone beside node_modules, then `node dist/main.js`
// and `toolgate serve` (dist/cli.js) started from it; and the Dockerfile's build stage copies every input
// of that build. The app comes from the one bundled dist/serve.js, so what a bundle can
// break is driven through HTTP here: the search and regex workers (built from source text), the lazily
// imported yaml (a YAML tokens file), the externals (Swagger UI's static files, pino), graceful shutdown.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';
import { startServer } from '../web/servers.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TOKEN = 'bundle-test-token';
/**
 * Of dist/, serving needs only these (console/: the approval page's static files; edit-worker.js: the edit
 * engine's worker on large files; serve.*.js: the bundle's chunks, code a start does not load): the rest (tsc's
 * per-module files, for the CLI's other commands) is removed.
 */
const SERVING_FILES = ['main.js', 'serve.js', 'cli.js', 'cli-client.js', 'edit-worker.js', 'console'];
const isServingFile = (name: string) => SERVING_FILES.includes(name) || (name.startsWith('serve.') && name.endsWith('.js'));

interface Envelope {
  status: string;
  data: Record<string, unknown> | null;
  error?: { code: string };
}

interface Server {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

let base = '';
let dist = '';

async function start(args: string[], env: Record<string, string>): Promise<Server> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TOOLGATE_') && k !== 'NODE_OPTIONS') clean[k] = v;
  const child = spawn(process.execPath, args, { cwd: base, env: { ...clean, NODE_ENV: 'production', TOOLGATE_HOST: '127.0.0.1', TOOLGATE_PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 120_000; // a guard against a server that never listens, generous for a busy machine
  let port: string | undefined;
  while (!(port = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1])) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited (${child.exitCode}) before listening:\n${out}`);
    if (Date.now() > deadline) throw new Error(`${args.join(' ')} did not listen in 120 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return { child, url: `http://127.0.0.1:${port}`, output: () => out, exited };
}

async function call(server: Server, tool: string, body: unknown, token: string | null = TOKEN): Promise<{ status: number; body: Envelope }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${server.url}/v1/tools/${tool}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Envelope };
}

async function stop(server: Server | undefined): Promise<number | null> {
  if (!server) return null;
  if (server.child.exitCode === null) server.child.kill('SIGTERM');
  return server.exited;
}

beforeAll(async () => {
  base = await makeTempDir('toolgate-bundle-');
  // The build `npm run build` made (vitest's global set-up runs it when stale: test/global-setup.ts), of
  // which only SERVING_FILES are copied, beside the package file and node_modules, as the image holds them.
  const build = path.join(base, 'build');
  dist = path.join(build, 'dist');
  await fs.mkdir(dist, { recursive: true });
  await fs.copyFile(path.join(REPO, 'package.json'), path.join(build, 'package.json'));
  await fs.symlink(path.join(REPO, 'node_modules'), path.join(build, 'node_modules'), 'dir');
  const serving = (await fs.readdir(path.join(REPO, 'dist'))).filter(isServingFile);
  expect(serving.filter((name) => name.startsWith('serve.')).length).toBeGreaterThan(0);
  for (const entry of serving) await fs.cp(path.join(REPO, 'dist', entry), path.join(dist, entry), { recursive: true });
  await fs.mkdir(path.join(base, 'ws'));
  await fs.mkdir(path.join(base, 'ws-cli'));
  const sha256 = createHash('sha256').update(TOKEN).digest('hex');
  await fs.writeFile(path.join(base, 'tokens.yaml'), `- id: bundle\n  sha256: ${sha256}\n`);
}, 240_000);

afterAll(async () => {
  if (base) await fs.rm(base, { recursive: true, force: true });
});

describe('the bundled build', () => {
  it('dist/main.js enables the compile cache before it imports the bundle', async () => {
    // (The servers below run from a dist/ holding only SERVING_FILES: the bundle needs no other file of it.)
    const main = await fs.readFile(path.join(dist, 'main.js'), 'utf8');
    expect(main.indexOf('enableCompileCache')).toBeGreaterThan(-1);
    expect(main.indexOf('enableCompileCache')).toBeLessThan(main.indexOf("import('./serve.js')"));
  });

  describe('node dist/main.js', () => {
    let server: Server | undefined;
    beforeAll(async () => {
      // A regex limit no busy machine reaches: the regexes here must finish (the limit's own test has a server of its own).
      server = await start([path.join(dist, 'main.js')], { TOOLGATE_ROOT: path.join(base, 'ws'), TOOLGATE_TOKENS_FILE: path.join(base, 'tokens.yaml'), TOOLGATE_REGEX_TIMEOUT_MS: '600000', TOOLGATE_WEB_ALLOW: '127.0.0.1' });
    });
    afterAll(async () => {
      await stop(server);
    });
    const s = () => server as Server;

    it('is ready, with auth from a YAML tokens file (yaml imported lazily)', async () => {
      expect((await fetch(`${s().url}/readyz`)).status).toBe(200);
      expect((await call(s(), 'read_file', { path: 'a.txt' }, null)).status).toBe(401);
    });

    it('writes and reads a file', async () => {
      const written = await call(s(), 'write_file', { path: 'src/a.txt', content: 'hello world\n  // TODO: bundle\nlast line\n' });
      expect(written.status).toBe(200);
      const read = await call(s(), 'read_file', { path: 'src/a.txt' });
      expect(read.status).toBe(200);
      expect(read.body.data?.content).toBe('hello world\n  // TODO: bundle\nlast line\n');
    });

    it('fetches a page as Markdown through the lazily loaded web engines (undici, the HTML converter)', async () => {
      const page = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><head><title>Bundled</title></head><body><main><h1>Bundled</h1><p>A <a href="/next">link</a> made absolute.</p></main></body></html>');
      });
      try {
        const res = await call(s(), 'web_fetch', { url: `${page.origin}/page` });
        expect(res.status).toBe(200);
        expect(res.body.data?.format).toBe('markdown');
        expect(res.body.data?.content).toContain(`[link](${page.origin}/next)`);
        expect((await call(s(), 'time_now', { timezone: 'UTC' })).body.data?.utc_offset).toBe('+00:00');
      } finally {
        await page.close();
      }
    });

    it('searches contents and names in the search workers, literal and regex', async () => {
      await call(s(), 'write_file', { path: 'src/todo.md', content: 'nothing\n' });
      const literal = await call(s(), 'search_files', { query: 'todo' });
      expect(literal.status).toBe(200);
      expect(literal.body.data?.results).toEqual([
        { type: 'content', path: 'src/a.txt', line: 2, column: 6, preview: '// TODO: bundle' },
        { type: 'name', path: 'src/todo.md', kind: 'file' },
      ]);
      const regex = await call(s(), 'search_files', { query: '^\\s*//\\s*todo:\\s*(\\w+)$', regex: true, mode: 'content' });
      expect(regex.status).toBe(200);
      expect(regex.body.data?.results).toEqual([{ type: 'content', path: 'src/a.txt', line: 2, column: 1, preview: '// TODO: bundle' }]);
    });

    it('stops a catastrophic regex at TOOLGATE_REGEX_TIMEOUT_MS, in search_files and replace_in_file, and keeps answering', async () => {
      // A regex that never ends meets a small limit; the server's workers then still serve the one above.
      const limited = await start([path.join(dist, 'main.js')], { TOOLGATE_ROOT: path.join(base, 'ws'), TOOLGATE_TOKENS_FILE: path.join(base, 'tokens.yaml'), TOOLGATE_REGEX_TIMEOUT_MS: '300' });
      try {
        await call(limited, 'write_file', { path: 'evil.txt', content: `${'a'.repeat(40)}b\n` });
        const search = await call(limited, 'search_files', { query: '(a+)+$', regex: true, mode: 'content' });
        expect(search.status).toBe(504);
        expect(search.body.error?.code).toBe('TIMEOUT');
        const replace = await call(limited, 'replace_in_file', { path: 'evil.txt', old: '(a+)+$', new: 'x', regex: true });
        expect(replace.status).toBe(504);
        expect(replace.body.error?.code).toBe('TIMEOUT');
        // The process keeps answering (that a replaced worker runs the next regex: test/tools/*.test.ts; the
        // bundle's regex workers at work: the search above and the replacement below).
        expect((await call(limited, 'read_file', { path: 'evil.txt' })).status).toBe(200);
        const swapped = await call(s(), 'replace_in_file', { path: 'src/a.txt', old: '^(hello) (world)$', new: '$2 $1', regex: true });
        expect(swapped.status).toBe(200);
        expect((await call(s(), 'read_file', { path: 'src/a.txt' })).body.data?.content).toMatch(/^world hello\n/);
      } finally {
        await stop(limited);
      }
    });

    it('edits a large file in the edit worker (dist/edit-worker.js), answers and errors alike', async () => {
      // 300 KiB: past OFF_THREAD_CHARS, so the engine runs in the worker loaded from beside the bundle.
      const body = 'filler line of the large file\n'.repeat(10_000);
      await call(s(), 'write_file', { path: 'big.txt', content: `${body}  target()\n${body}` });
      // Indented differently: the tolerant stage, not the byte path.
      const edited = await call(s(), 'edit_file', { path: 'big.txt', old_text: '    target()\n', new_text: '    done()\n' });
      expect(edited.status, JSON.stringify(edited.body.error)).toBe(200);
      expect(edited.body.data?.edits).toEqual([expect.objectContaining({ stage: 'indentation', start_line: 10_001 })]);
      expect(edited.body.data?.snippet).toContain('10001:   done()');
      const twice = await call(s(), 'edit_file', { path: 'big.txt', old_text: '  filler line of the large file\n', new_text: 'x\n' });
      expect(twice.body.error?.code).toBe('MULTIPLE_MATCHES');
      const metrics = await (await fetch(`${s().url}/metrics`)).text();
      expect(Number(/^toolgate_worker_jobs_total\{pool="edit"\} (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
    });

    it('serves Swagger UI at /docs (its static files from node_modules) and the OpenAPI document', async () => {
      const docs = await fetch(`${s().url}/docs`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(docs.status).toBe(200);
      expect(await docs.text()).toContain('swagger-ui');
      const css = await fetch(`${s().url}/docs/static/swagger-ui.css`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(css.status).toBe(200);
      // Read to the end: an unread body (about 150 KiB) can stall the server's write, and the shutdown test
      // below would then wait TOOLGATE_SHUTDOWN_TIMEOUT_MS for that response and exit 1.
      await css.arrayBuffer();
      // The approval console's files are next to the bundle (dist/console).
      const page = await fetch(`${s().url}/console/console.js`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/v1/approvals');
      const json = await fetch(`${s().url}/docs/json`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(json.status).toBe(200);
      const doc = (await json.json()) as { openapi: string; info: { title: string }; paths: Record<string, unknown> };
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.info.title).toBe('toolgate');
      expect(Object.keys(doc.paths)).toContain('/v1/tools/search_files');
    });

    it('logs JSON lines and shuts down cleanly on SIGTERM', async () => {
      const code = await stop(s());
      expect(code, s().output().slice(-4000)).toBe(0);
      expect(s().output()).toMatch(/"msg":"shut down cleanly"/);
    });
  });

  it('toolgate serve (dist/cli.js) serves from the same bundle', async () => {
    const server = await start([path.join(dist, 'cli.js'), 'serve', '--root', path.join(base, 'ws-cli'), '--port', '0'], {});
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect((await call(server, 'write_file', { path: 'n.txt', content: 'needle\n' }, null)).status).toBe(200);
      const found = await call(server, 'search_files', { query: 'needle', mode: 'content' }, null);
      expect(found.body.data?.results).toEqual([{ type: 'content', path: 'n.txt', line: 1, column: 1, preview: 'needle' }]);
    } finally {
      expect(await stop(server)).toBe(0);
    }
  });
});

describe("the Dockerfile's build stage", () => {
  it('copies every input of `npm run build` (the list `npm start` checks for staleness) before it builds', async () => {
    const dockerfile = await fs.readFile(path.join(REPO, 'Dockerfile'), 'utf8');
    const stage = dockerfile.slice(dockerfile.indexOf(' AS build'), dockerfile.indexOf('RUN npm run build'));
    const copied = [...stage.matchAll(/^COPY (.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/)).map((f) => f.replace(/\/$/, ''));
    const { BUILD_INPUTS } = (await import(pathToFileURL(path.join(REPO, 'scripts/build-if-stale.mjs')).href)) as { BUILD_INPUTS: string[] };
    expect(BUILD_INPUTS.length).toBeGreaterThan(0);
    expect(BUILD_INPUTS.filter((input) => !copied.includes(input))).toEqual([]);
  });
});
