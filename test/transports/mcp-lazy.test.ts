// The MCP SDK is loaded when /mcp is first used, not when the service starts (docs/mcp.md). A
// child process builds the app from tsc's per-module build (dist/, made by vitest's global set-up) with a
// module hook that reports every SDK module resolved, then is driven through its HTTP doors.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { compiled } from '../compiled.js';
import { makeTempDir } from '../helpers.js';
import { envelopeOf, httpClient } from './mcp-helpers.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
});

const HOOKS = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes('/node_modules/@modelcontextprotocol/sdk/')) port.postMessage(resolved.url);
  return resolved;
}
`;

function runner(hooksUrl: string): string {
  return `
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => process.stdout.write('sdk-load ' + url + '\\n'));
register(${JSON.stringify(hooksUrl)}, { data: { port: port2 }, transferList: [port2] });
const { buildApp } = await import(${JSON.stringify(pathToFileURL(compiled('src/app.ts')).href)});
const { loadConfig } = await import(${JSON.stringify(pathToFileURL(compiled('src/config.ts')).href)});
const app = await buildApp(loadConfig(process.env), {});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write('listening ' + app.server.address().port + '\\n');
`;
}

async function waitFor(child: ChildProcess, output: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  // Generous: a guard against a child that never prints, not a measure of how fast it starts.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const m = pattern.exec(output());
    if (m) return m;
    if (child.exitCode !== null) throw new Error(`child exited (${child.exitCode}) before printing ${pattern}:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`child did not print ${pattern}:\n${output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('MCP SDK loading', () => {
  it('is not loaded at start nor by the other doors, and is loaded by the first POST /mcp', async () => {
    const dir = await makeTempDir('toolgate-mcp-lazy-');
    cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
    const root = path.join(dir, 'ws');
    await fs.mkdir(root);
    await fs.writeFile(path.join(root, 'a.txt'), 'lazy\n');
    await fs.writeFile(path.join(dir, 'hooks.mjs'), HOOKS);
    await fs.writeFile(path.join(dir, 'run.mjs'), runner(pathToFileURL(path.join(dir, 'hooks.mjs')).href));

    const clean: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TOOLGATE_') && k !== 'NODE_OPTIONS') clean[k] = v;
    const child = spawn(process.execPath, [path.join(dir, 'run.mjs')], {
      env: { ...clean, TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    cleanup.push(async () => {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
      }
    });
    const port = Number((await waitFor(child, () => out, /listening (\d+)/))[1]);
    const base = `http://127.0.0.1:${port}`;

    // The other doors and the routes of /mcp that answer without the SDK.
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const rest = await fetch(`${base}/v1/tools/read_file`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: 'a.txt' }) });
    expect(((await rest.json()) as { data: { content: string } }).data.content).toBe('lazy\n');
    expect((await fetch(`${base}/mcp`)).status).toBe(405);
    expect(out).not.toContain('sdk-load');

    const client = await httpClient(`${base}/mcp`);
    cleanup.push(() => client.close());
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
    expect(envelopeOf(read).data).toMatchObject({ content: 'lazy\n' });
    await waitFor(child, () => out, /sdk-load \S+\/sdk\/dist\/esm\/server\/index\.js/);
  }, 180_000);
});
