// A default start (no policy, TOOLGATE_EXEC off) of the production build loads only what a call needs
// (docs/development.md, "Start-up"): it is run here from a build whose lazily loaded chunks are removed and
// beside a node_modules without the packages loaded on first use, so it cannot pass if any of them is
// imported at start. Then each lazily loaded feature's first use is driven through HTTP on the whole build.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TOKEN = 'lazy-start-test-token';

/** Bundled modules a default start must not load: each sits in a chunk of its own, removed for the first start. */
const LAZY_MODULES = [
  'src/web/fetch.ts',
  'src/web/html-to-markdown.ts',
  'node_modules/undici/index.js',
  'src/policy/policy-file.ts',
  'src/policy/approvals-file.ts',
  'src/policy/approvals-redis.ts',
  'node_modules/@fastify/swagger/index.js',
];
/** Packages the bundle leaves in node_modules that a default start must not load: absent for the first start. */
const LAZY_PACKAGES = ['iconv-lite', 'yaml', 'ioredis', '@fastify/swagger-ui', '@fastify/static', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'ip-address'];

interface Envelope {
  status: string;
  data: Record<string, unknown> | null;
  error?: { code: string; message: string };
}

interface Server {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

let base = '';
/** The whole serving build (dist/ beside the real node_modules). */
let full = '';
/** The same build without the lazy chunks, beside a node_modules without the lazy packages. */
let trimmed = '';
let tokensFile = '';

async function start(main: string, env: Record<string, string>): Promise<Server> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TOOLGATE_') && k !== 'NODE_OPTIONS') clean[k] = v;
  const child = spawn(process.execPath, [main], {
    cwd: base,
    env: { ...clean, NODE_ENV: 'production', TOOLGATE_HOST: '127.0.0.1', TOOLGATE_PORT: '0', TOOLGATE_TOKENS_FILE: tokensFile, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 120_000; // a guard against a server that never listens, generous for a busy machine
  let port: string | undefined;
  while (!(port = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1])) {
    if (child.exitCode !== null) throw new Error(`${main} exited (${child.exitCode}) before listening:\n${out}`);
    if (Date.now() > deadline) throw new Error(`${main} did not listen in 120 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return { child, url: `http://127.0.0.1:${port}`, output: () => out, exited };
}

async function stop(server: Server | undefined): Promise<number | null> {
  if (!server) return null;
  if (server.child.exitCode === null) server.child.kill('SIGTERM');
  return server.exited;
}

async function call(server: Server, tool: string, body: unknown): Promise<{ status: number; body: Envelope }> {
  const res = await fetch(`${server.url}/v1/tools/${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Envelope };
}

/** The serving files of dist/ (as test/deploy/bundle.test.ts copies them) into `build`/dist. */
async function copyBuild(build: string): Promise<string> {
  const dist = path.join(build, 'dist');
  await fs.mkdir(dist, { recursive: true });
  await fs.copyFile(path.join(REPO, 'package.json'), path.join(build, 'package.json'));
  const serving = ['main.js', 'serve.js', 'edit-worker.js', 'console'];
  for (const name of await fs.readdir(path.join(REPO, 'dist'))) {
    if (serving.includes(name) || (name.startsWith('serve.') && name.endsWith('.js'))) await fs.cp(path.join(REPO, 'dist', name), path.join(dist, name), { recursive: true });
  }
  return dist;
}

beforeAll(async () => {
  base = await makeTempDir('toolgate-lazy-');
  tokensFile = path.join(base, 'tokens.json');
  // JSON, not YAML: a YAML tokens file would load yaml, one of the packages the trimmed start goes without.
  await fs.writeFile(tokensFile, JSON.stringify([{ id: 'lazy', sha256: createHash('sha256').update(TOKEN).digest('hex') }]));

  const fullBuild = path.join(base, 'full');
  full = await copyBuild(fullBuild);
  await fs.symlink(path.join(REPO, 'node_modules'), path.join(fullBuild, 'node_modules'), 'dir');

  const trimmedBuild = path.join(base, 'trimmed');
  trimmed = await copyBuild(trimmedBuild);
  const chunks = (await fs.readdir(trimmed)).filter((n) => n.endsWith('.js'));
  const texts = new Map(await Promise.all(chunks.map(async (n) => [n, await fs.readFile(path.join(trimmed, n), 'utf8')] as const)));
  for (const mod of LAZY_MODULES) {
    // esbuild marks where each bundled module starts with a comment naming it.
    const holders = [...texts].filter(([, text]) => text.includes(`\n// ${mod}\n`)).map(([n]) => n);
    expect(holders, `${mod} is bundled in a chunk of its own`).toHaveLength(1);
    expect(holders[0], `${mod} is not in serve.js`).toMatch(/^serve\..+\.js$/);
    await fs.rm(path.join(trimmed, holders[0] as string), { force: true });
  }
  // node_modules of links to every package but the lazy ones (scoped packages linked one by one).
  const modules = path.join(trimmedBuild, 'node_modules');
  await fs.mkdir(modules);
  for (const name of await fs.readdir(path.join(REPO, 'node_modules'))) {
    if (name.startsWith('@')) {
      await fs.mkdir(path.join(modules, name));
      for (const sub of await fs.readdir(path.join(REPO, 'node_modules', name))) {
        if (!LAZY_PACKAGES.includes(`${name}/${sub}`)) await fs.symlink(path.join(REPO, 'node_modules', name, sub), path.join(modules, name, sub), 'dir');
      }
    } else if (!LAZY_PACKAGES.includes(name)) {
      await fs.symlink(path.join(REPO, 'node_modules', name), path.join(modules, name));
    }
  }
  await fs.mkdir(path.join(base, 'ws'));
  await fs.mkdir(path.join(base, 'ws-policy'));
}, 240_000);

afterAll(async () => {
  if (base) await fs.rm(base, { recursive: true, force: true });
});

describe('a default start', () => {
  it('serves tool calls without the lazily loaded chunks and packages', async () => {
    const server = await start(path.join(trimmed, 'main.js'), { TOOLGATE_ROOT: path.join(base, 'ws'), TOOLGATE_EXEC: 'off' });
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect((await call(server, 'write_file', { path: 'a.txt', content: 'hello\n' })).status).toBe(200);
      const read = await call(server, 'read_file', { path: 'a.txt' });
      expect(read.status).toBe(200);
      expect(read.body.data?.content).toBe('hello\n');
      // Validation by zod, with the one locale the bundle keeps (scripts/bundle.mjs).
      const invalid = await call(server, 'read_file', { path: 5 });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error?.message).toMatch(/'path' must be a string/);
      const tools = await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(tools.status).toBe(200);
      // A feature whose code is missing fails as the envelope, on its first use only: the service stays up.
      const docs = await fetch(`${server.url}/docs/json`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(docs.status).toBe(500);
      expect(((await docs.json()) as Envelope).error?.code).toBe('EXECUTION_ERROR');
      expect((await call(server, 'read_file', { path: 'a.txt' })).status).toBe(200);
    } finally {
      expect(await stop(server)).toBe(0);
    }
  });
});

describe('the first use of each lazily loaded feature', () => {
  let server: Server | undefined;
  beforeAll(async () => {
    server = await start(path.join(full, 'main.js'), { TOOLGATE_ROOT: path.join(base, 'ws'), TOOLGATE_EXEC: 'off' });
  });
  afterAll(async () => {
    expect(await stop(server)).toBe(0);
  });
  const s = () => server as Server;

  it('an encoding other than utf-8 (iconv-lite) writes and reads', async () => {
    const written = await call(s(), 'write_file', { path: 'latin.txt', content: 'café\n', encoding: 'latin1' });
    expect(written.status).toBe(200);
    expect(await fs.readFile(path.join(base, 'ws', 'latin.txt'))).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const read = await call(s(), 'read_file', { path: 'latin.txt', encoding: 'windows-1252' });
    expect(read.body.data?.content).toBe('café\n');
    expect((await call(s(), 'read_file', { path: 'latin.txt', encoding: 'no-such-encoding' })).body.error?.code).toBe('INVALID_PARAM');
  });

  it('/docs and the OpenAPI document (Swagger UI), with the service 404 for what they do not serve', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const [ui, json] = await Promise.all([fetch(`${s().url}/docs`, { headers: auth }), fetch(`${s().url}/docs/json`, { headers: auth })]);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger-ui');
    expect(ui.headers.get('x-request-id')).toBeTruthy();
    const doc = (await json.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/v1/tools/read_file');
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs'))).toEqual([]);
    const yaml = await fetch(`${s().url}/docs/yaml`, { headers: auth });
    expect(await yaml.text()).toMatch(/^openapi: 3\.1\.0/);
    const head = await fetch(`${s().url}/docs/static/swagger-ui.css`, { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    const missing = await fetch(`${s().url}/docs/static/no-such-file.css`, { headers: auth });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Envelope).error?.code).toBe('NOT_FOUND');
  });

  it('a policy (the YAML policy file, the evaluator, the approval store) decides from the first call', async () => {
    const policy = path.join(base, 'policy.yaml');
    await fs.writeFile(policy, 'rules:\n  - { name: secrets, paths: [secrets], action: deny }\n  - { paths: [SOUL.md], action: ask }\n');
    const guarded = await start(path.join(full, 'main.js'), { TOOLGATE_ROOT: path.join(base, 'ws-policy'), TOOLGATE_POLICY: policy });
    try {
      const denied = await call(guarded, 'write_file', { path: 'secrets/key.pem', content: 'x' });
      expect(denied.status).toBe(403);
      expect(denied.body.error?.code).toBe('ACCESS_DENIED');
      const asked = await call(guarded, 'write_file', { path: 'SOUL.md', content: 'x' });
      expect(asked.status).toBe(202);
      expect((await call(guarded, 'write_file', { path: 'notes.txt', content: 'x' })).status).toBe(200);
      expect(guarded.output()).toMatch(/policy loaded: .*policy\.yaml \(2 rules\)/);
    } finally {
      expect(await stop(guarded)).toBe(0);
    }
  });
});
