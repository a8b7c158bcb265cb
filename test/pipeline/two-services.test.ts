// Two services in one process, opened with different settings, each keep their own: the sandbox's mode (a
// second service in the weaker mode once switched every earlier one to path strings), memory budgets, and
// worker pools (closing one service stops its workers, never the other's). src/workspace/runtime.ts.
import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { lockPathFor } from '../../src/workspace/locks.js';
import { memoryBudgetOf } from '../../src/workspace/memory-budget.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { sampleDocx } from '../office/fixtures.js';

const FILLER = 'filler line of the large file\n';
/** Past OFF_THREAD_CHARS (src/edit/off-thread.ts): the edit runs in the service's edit worker. */
const large = (middle: string) => `${FILLER.repeat(10_000)}${middle}${FILLER.repeat(10_000)}`;

let handles: TestApp;
let weakBase = '';
let weak: FastifyInstance | null = null;
let outside = '';

const workspaceOf = (app: FastifyInstance): Workspace => {
  const ws = app.toolgate.workspace;
  if (!ws) throw new Error('single workspace expected');
  return ws;
};
const callOn = async (app: FastifyInstance, tool: string, body: object) => (await app.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body })).json();

beforeAll(async () => {
  handles = await makeApp({ TOOLGATE_REQUIRE_VERSION: 'never', TOOLGATE_TOOL_TIMEOUT_MS: '60000' });
  outside = await makeTempDir('toolgate-outside-');
  await fs.writeFile(path.join(outside, 'f.txt'), 'OUTSIDE\n');
  // Opened after the first: no /proc to name descriptors, the weaker check accepted.
  weakBase = await makeTempDir();
  const config = loadConfig({ TOOLGATE_ROOT: path.join(weakBase, 'ws'), TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_ALLOW_WEAK_SANDBOX: 'true', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_TOOL_TIMEOUT_MS: '60000' });
  weak = await buildApp(config, { fdDir: path.join(weakBase, 'no-proc') });
});
afterAll(async () => {
  await weak?.close();
  await handles?.close();
  await fs.rm(weakBase, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

describe('two services in one process', () => {
  it('a second service in the weaker mode leaves the first acting through handles: a directory swapped for a symlink does not redirect its write', async () => {
    const app = weak as FastifyInstance;
    // The weaker service works, on path strings.
    expect((await callOn(app, 'write_file', { path: 'd/a.txt', content: 'weak\n' })).status).toBe('success');
    expect((await callOn(app, 'read_file', { path: 'd/a.txt' })).data.content).toBe('weak\n');

    // The first service's write waits for the file's lock (held here from outside) while `d` is swapped for a
    // symlink leading out: acting through the handle of the directory it checked, it writes there, never out.
    await fs.mkdir(handles.file('d'));
    await fs.writeFile(handles.file('d/f.txt'), 'inside\n');
    const ws = workspaceOf(handles.app);
    const real = path.join(ws.root, 'd/f.txt');
    await fs.mkdir(path.dirname(lockPathFor(ws, real)), { recursive: true });
    const release = lockfile.lockSync(real, { lockfilePath: lockPathFor(ws, real), realpath: false });
    const pending = handles.call('write_file', { path: 'd/f.txt', content: 'written\n' });
    await new Promise((r) => setTimeout(r, 200));
    await fs.rename(handles.file('d'), handles.file('d_real'));
    await fs.symlink(outside, handles.file('d'));
    release();
    const r = await pending;
    expect(await fs.readFile(path.join(outside, 'f.txt'), 'utf8')).toBe('OUTSIDE\n');
    // Resolved before the swap (the usual case): written into the directory it checked. A loaded machine may
    // reach the resolution only after the swap: then the symlink leading out is refused.
    if (r.body.status === 'success') expect(await fs.readFile(handles.file('d_real/f.txt'), 'utf8')).toBe('written\n');
    else expect(r.body.error?.code).toBe('ACCESS_DENIED');

    expect(handles.app.toolgate.workspace?.runtime.fdDir).toBe(`/proc/${process.pid}/fd`);
    expect(workspaceOf(app).runtime.fdDir).toBeNull();
  });

  it('each service has its own memory budget', () => {
    const a = workspaceOf(handles.app);
    const b = workspaceOf(weak as FastifyInstance);
    expect(a.limits.memoryBudgetBytes).toBe(b.limits.memoryBudgetBytes);
    expect(memoryBudgetOf(a.runtime, a.limits.memoryBudgetBytes)).not.toBe(memoryBudgetOf(b.runtime, b.limits.memoryBudgetBytes));
  });

  it("closing one service stops its own edit and office workers, never the other's", async () => {
    const app = weak as FastifyInstance;
    const docx = await sampleDocx();
    // Both services start their workers.
    for (const [write, call] of [
      [(rel: string, data: string | Buffer) => fs.writeFile(handles.file(rel), data), (tool: string, body: object) => handles.call(tool, body).then((res) => res.body)],
      [(rel: string, data: string | Buffer) => fs.writeFile(path.join(workspaceOf(app).root, rel), data), (tool: string, body: object) => callOn(app, tool, body)],
    ] as const) {
      await write('big.txt', large('  target()\n'));
      await write('doc.docx', docx);
      expect((await call('edit_file', { path: 'big.txt', old_text: '  target()\n', new_text: '  done()\n' })).status).toBe('success');
      expect((await call('read_docx', { path: 'doc.docx' })).status).toBe('success');
    }
    await app.close();
    weak = null;
    // The first service still edits large files and reads documents in workers of its own.
    await fs.writeFile(handles.file('big2.txt'), large('  again()\n'));
    const edited = await handles.call('edit_file', { path: 'big2.txt', old_text: '  again()\n', new_text: '  once()\n' });
    expect(edited.body.error, JSON.stringify(edited.body.error)).toBeUndefined();
    expect(await fs.readFile(handles.file('big2.txt'), 'utf8')).toBe(large('  once()\n'));
    const read = await handles.call('read_docx', { path: 'doc.docx' });
    expect(read.body.error, JSON.stringify(read.body.error)).toBeUndefined();
  });
});
