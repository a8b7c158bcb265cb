// `toolgate` installed the way the README says, then used as a person or an MCP client would: the package
// is packed by `npm pack` (its prepack script builds dist/ when stale: scripts/build-if-stale.mjs), and the packed files are installed into a
// temporary global prefix, so <prefix>/bin/toolgate is npm's own bin link to dist/cli.js.
//
// Why not one `npm install -g <tarball>`: npm resolves a tarball's dependencies from registry metadata,
// which `npm ci` never caches (it fetches by the lockfile's URLs), so that needs the network. Here the
// tarball is unpacked, its production dependencies come from npm's cache by the lockfile's integrity
// (`npm ci --omit=dev --offline`), and `npm install --global` of that folder makes the prefix's bin
// links: the same files, the same bin linking, no network.
//
// One test does install the tarball alone, as a consumer does (issue 36): no lockfile, so npm resolves the
// dependency ranges afresh, with none of our `overrides`. That one needs the registry's metadata, or npm's
// cache of it (--prefer-offline).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let base = '';
let prefix = '';
let bin = '';
let tarball = '';
let tarballFiles: string[] = [];

/** The environment of a person's shell: no settings of the test run, npm's nor toolgate's. */
function shellEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('TOOLGATE_') || k === 'NODE_OPTIONS' || /^npm_(package_|lifecycle_|config_(local_prefix|global_prefix|prefix)$)/i.test(k)) continue;
    env[k] = v;
  }
  return { ...env, PATH: `${path.join(prefix, 'bin')}${path.delimiter}${env.PATH ?? ''}`, ...extra };
}

async function run(file: string, args: string[], cwd: string, stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(file, args, { cwd, env: shellEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(stdin ?? '');
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

/** npm's output, standard output then standard error (where it writes its warnings). */
async function npmIn(cwd: string, args: string[]): Promise<string> {
  const { stdout, stderr } = await promisify(execFile)(npm, [...args, '--no-audit', '--no-fund'], { cwd, env: shellEnv(), maxBuffer: 32 * 1024 * 1024 }).catch((err: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(`npm ${args.join(' ')} failed:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
  });
  return `${stdout}${stderr}`;
}

beforeAll(async () => {
  base = await makeTempDir('toolgate-install-');
  prefix = path.join(base, 'prefix');
  bin = path.join(prefix, 'bin', 'toolgate');
  // A copy of the checkout's tracked sources, and of its dist/ as vitest's global set-up left it (built
  // from these sources: test/global-setup.ts), copied last so that prepack finds it up to date.
  const checkout = path.join(base, 'checkout');
  await fs.mkdir(path.join(checkout, 'scripts'), { recursive: true });
  for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.client.json', 'openapi.yaml', 'README.md', 'scripts/bundle.mjs', 'scripts/build-if-stale.mjs']) await fs.copyFile(path.join(REPO, f), path.join(checkout, f));
  await fs.cp(path.join(REPO, 'src'), path.join(checkout, 'src'), { recursive: true });
  await fs.symlink(path.join(REPO, 'node_modules'), path.join(checkout, 'node_modules'), 'dir');
  await fs.cp(path.join(REPO, 'dist'), path.join(checkout, 'dist'), { recursive: true });

  await npmIn(checkout, ['pack', '--pack-destination', base]);
  const packed = (await fs.readdir(base)).find((f) => f.endsWith('.tgz'));
  if (!packed) throw new Error('npm pack made no tarball');
  tarball = path.join(base, packed);
  const unpacked = path.join(base, 'unpacked');
  await fs.mkdir(unpacked);
  await promisify(execFile)('tar', ['xzf', tarball, '-C', unpacked]);
  const pkg = path.join(unpacked, 'package');
  tarballFiles = (await fs.readdir(pkg, { recursive: true })).map((f) => f.split(path.sep).join('/'));

  await fs.copyFile(path.join(REPO, 'package-lock.json'), path.join(pkg, 'package-lock.json'));
  await npmIn(pkg, ['ci', '--omit=dev', '--offline']);
  await fs.mkdir(prefix);
  await npmIn(base, ['install', '--global', '--prefix', prefix, pkg, '--offline']);
}, 300_000);

afterAll(async () => {
  if (base) await fs.rm(base, { recursive: true, force: true });
});

describe('toolgate installed into a global prefix', () => {
  it('the package holds the built CLI, the server bundle and the console, and no sources or tests', () => {
    expect(tarballFiles).toEqual(expect.arrayContaining(['package.json', 'openapi.yaml', 'dist/cli.js', 'dist/cli-client.js', 'dist/main.js', 'dist/serve.js', 'dist/console/index.html']));
    expect(tarballFiles.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
  });

  it('the tarball alone, without the lockfile, installs into a clean prefix with no engine warning and runs', async () => {
    expect(tarballFiles).not.toContain('package-lock.json');
    const clean = path.join(base, 'clean-prefix');
    await fs.mkdir(clean);
    const output = await npmIn(base, ['install', '--global', '--prefix', clean, tarball, '--prefer-offline']);
    expect(output).not.toContain('EBADENGINE');
    const { version } = JSON.parse(await fs.readFile(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect(await run(path.join(clean, 'bin', 'toolgate'), ['--version'], base)).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  }, 300_000);

  it('<prefix>/bin/toolgate answers --version and tools from any directory', async () => {
    const { version } = JSON.parse(await fs.readFile(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
    const v = await run(bin, ['--version'], base);
    expect(v).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    // by name on PATH, as a person types it
    const tools = await run('toolgate', ['tools', '--format', 'openai'], base);
    expect(tools.code).toBe(0);
    expect((JSON.parse(tools.stdout) as { function: { name: string } }[]).map((t) => t.function.name)).toContain('write_file');
  });

  it('toolgate serve, then toolgate call with content from standard input', async () => {
    const ws = path.join(base, 'ws-serve');
    const server: ChildProcess = spawn(bin, ['serve', '--root', ws], { cwd: base, env: shellEnv({ TOOLGATE_PORT: '0', TOOLGATE_AUDIT_STDOUT: 'false' }), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      server.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      server.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      let port: string | undefined;
      // A guard against a server that never listens, not a measure of its start: generous for a busy machine.
      for (const deadline = Date.now() + 120_000; Date.now() < deadline && !(port = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]); ) {
        if (server.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(port, out).toBeDefined();
      const w = await run('toolgate', ['call', 'write_file', 'path=notes/in.md', 'content=@-', '--url', `http://127.0.0.1:${port}`], base, '# from stdin\n');
      expect(w.stderr).toBe('');
      expect(w.code).toBe(0);
      expect(await fs.readFile(path.join(ws, 'notes/in.md'), 'utf8')).toBe('# from stdin\n');
    } finally {
      const exited = new Promise((resolve) => (server.exitCode !== null ? resolve(null) : server.once('exit', resolve)));
      server.kill('SIGTERM');
      await exited;
    }
  });

  it('toolgate mcp, started as the README mcpServers entry starts it, lists and calls tools', async () => {
    const ws = path.join(base, 'ws-mcp');
    await fs.mkdir(ws);
    await fs.writeFile(path.join(ws, 'hello.txt'), 'hello over MCP\n');
    const client = new Client({ name: 'install-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: 'toolgate', args: ['mcp', '--root', ws], env: shellEnv({ TOOLGATE_AUDIT_STDOUT: 'false' }), stderr: 'ignore' }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('read_file');
      const result = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ status: 'success', data: { content: 'hello over MCP\n' } });
    } finally {
      await client.close();
    }
  });
});
