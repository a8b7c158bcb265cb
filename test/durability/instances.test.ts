// Processes sharing one workspace (issue 12): with the default instance id each writes its own audit file, and
// a start-up sweep removes only temp files whose writer is gone, never a live writer's in-flight ones.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { writeTempFile } from '../../src/workspace/atomic.js';
import { makeApp, type TestApp } from '../helpers.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let first: TestApp | undefined;
let second: FastifyInstance | undefined;
afterEach(async () => {
  await second?.close();
  await first?.close();
  second = first = undefined;
});

const secondApp = (root: string) => buildApp(loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }), { logger: false });
const instanceOf = async (app: FastifyInstance) => ((await app.inject({ method: 'GET', url: '/healthz' })).json() as { instance: string }).instance;

describe('two instances with the default instance id on one workspace', () => {
  it('write separate audit files, so neither breaks the other one\'s chain', async () => {
    first = await makeApp();
    second = await secondApp(first.root);
    const [a, b] = [await instanceOf(first.app), await instanceOf(second)];
    expect(a).not.toBe(b);
    expect(a.startsWith(`${os.hostname().replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40)}-${process.pid}-`)).toBe(true);
    expect((await first.call('write_file', { path: 'a.txt', content: 'a\n' })).body.status).toBe('success');
    expect((await second.inject({ method: 'POST', url: '/v1/tools/write_file', payload: { path: 'b.txt', content: 'b\n' } })).json()).toMatchObject({ status: 'success' });
    await Promise.all([first.app.toolgate.audit.flush(), second.toolgate.audit.flush()]);
    const files = (await fs.readdir(first.file('.toolgate/audit'))).sort();
    expect(files).toHaveLength(2);
    expect(files.some((f) => f.startsWith(`${a}-`))).toBe(true);
    expect(files.some((f) => f.startsWith(`${b}-`))).toBe(true);
  });

  it('a second start does not delete the first one\'s in-flight temp file', async () => {
    first = await makeApp();
    const ws = first.app.toolgate.workspace!;
    const inFlight = await writeTempFile(ws, Buffer.alloc(1024, 'x')); // written, not yet renamed into place
    second = await secondApp(first.root);
    await expect(fs.stat(inFlight.path)).resolves.toBeTruthy();
  });

  it('even with one explicitly set instance id, a second start spares the live first one\'s temp file', async () => {
    first = await makeApp({ TOOLGATE_INSTANCE_ID: 'same' });
    const inFlight = await writeTempFile(first.app.toolgate.workspace!, Buffer.alloc(1024, 'x'));
    second = await buildApp(loadConfig({ TOOLGATE_ROOT: first.root, TOOLGATE_INSTANCE_ID: 'same', TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }), { logger: false });
    await expect(fs.stat(inFlight.path)).resolves.toBeTruthy();
  });

  it('a start removes the temp files of a writer that is gone, whatever its instance id', async () => {
    first = await makeApp();
    const dir = first.file('.toolgate/tmp/gone-writer');
    await fs.mkdir(dir, { recursive: true });
    // A process of this host records itself as the directory's owner and exits (as a kill -9 would leave it).
    // (From dist/, the global set-up's build: plain node, no TypeScript loader to boot.)
    const made = spawnSync(process.execPath, ['--input-type=module', '-e', `import('./dist/workspace/process-owner.js').then((m) => m.writeOwnerRecord(${JSON.stringify(path.join(dir, '.owner'))}))`], { cwd: repoRoot, encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    await fs.writeFile(path.join(dir, '.toolgate-tmp-0123456789abcdef'), 'left by a crash');
    second = await secondApp(first.root);
    await expect(fs.stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
