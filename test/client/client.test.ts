// The typed client (toolgate/client) against the real service listening on a port: the calls an agent
// makes, with the envelope types the OpenAPI document declares.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { createToolgateClient, type ErrorEnvelope, type ToolgateClient } from '../../src/client/index.js';
import { listenOn, makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { makeToken } from '../ops/ops-helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const listening = (app: TestApp) => listenOn(app.app);

async function clientFor(options: Record<string, string> = {}): Promise<ToolgateClient> {
  t = await makeApp();
  return createToolgateClient({ baseUrl: await listening(t), ...options });
}

describe('toolgate/client', () => {
  it('writes, reads with the ETag and edits with If-Match', async () => {
    const client = await clientFor();
    const written = await client.callTool('write_file', { path: 'notes.txt', content: 'hello\n' });
    expect(written.kind).toBe('success');
    if (written.kind !== 'success') return;
    expectTypeOf(written.envelope.data).not.toBeAny();
    expect(written.envelope.data?.operation).toBe('create');

    const read = await client.callTool('read_file', { path: 'notes.txt' });
    if (read.kind !== 'success') throw new Error(read.envelope.text);
    expect(read.envelope.data?.content).toBe('hello\n');
    expect(read.etag).toBe(`"${read.envelope.data?.version.sha256}"`);

    const edited = await client.callTool('edit_file', { path: 'notes.txt', old_text: 'hello', new_text: 'hello, world' }, { ifMatch: read.etag! });
    expect(edited).toMatchObject({ kind: 'success', httpStatus: 200, envelope: { status: 'success', data: { applied: true, replacements: 1 } } });
    expect(await fs.readFile(t!.file('notes.txt'), 'utf8')).toBe('hello, world\n');

    // The first ETag names a version that is gone: CONFLICT, as the typed error envelope.
    const stale = await client.callTool('edit_file', { path: 'notes.txt', old_text: 'world', new_text: 'there' }, { ifMatch: read.etag! });
    expect(stale.kind).toBe('error');
    if (stale.kind !== 'error') return;
    expectTypeOf(stale.envelope).toEqualTypeOf<ErrorEnvelope>();
    expectTypeOf(stale.envelope.error.code).toEqualTypeOf<ErrorEnvelope['error']['code']>();
    expect(stale.httpStatus).toBe(409);
    expect(stale.envelope).toMatchObject({ status: 'error', data: null, error: { code: 'CONFLICT' } });
    expect(await fs.readFile(t!.file('notes.txt'), 'utf8')).toBe('hello, world\n');
  });

  it('answers a bad argument with the error envelope, not an exception', async () => {
    const client = await clientFor();
    const missing = await client.callTool('read_file', { path: 'nope.txt' });
    expect(missing).toMatchObject({ kind: 'error', httpStatus: 404, envelope: { error: { code: 'NOT_FOUND' } } });
    // A caller outside TypeScript can still send anything; the service's answer stays typed.
    const invalid = await client.callTool('read_file', { path: 'notes.txt', start_line: 'x' } as never);
    expect(invalid).toMatchObject({ kind: 'error', httpStatus: 400, envelope: { error: { code: 'INVALID_PARAM' } } });
  });

  it('lists the tools, and the generated paths reach the other routes', async () => {
    const client = await clientFor();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['read_file', 'write_file', 'edit_file']));
    expect(tools.find((tool) => tool.name === 'delete_file')).toMatchObject({ risk: 'destructive', input_schema: { type: 'object' } });

    const openai = await client.GET('/v1/tools', { params: { query: { format: 'openai' } } });
    expect(Array.isArray(openai.data)).toBe(true);
    const approvals = await client.GET('/v1/approvals');
    expect(approvals.data).toEqual({ approvals: [] });
  });

  it('sends the token and the project (multi-project mode)', async () => {
    const agent = makeToken('agent', { risks: ['read', 'write'], projects: ['alpha'] });
    const projectsRoot = await makeTempDir('toolgate-client-projects-');
    await fs.mkdir(path.join(projectsRoot, 'alpha'));
    try {
      t = await makeApp({ TOOLGATE_PROJECTS_ROOT: projectsRoot }, { tokens: [agent.entry] });
      const baseUrl = await listening(t);
      const anonymous = await createToolgateClient({ baseUrl, project: 'alpha' }).callTool('time_now', {});
      expect(anonymous).toMatchObject({ kind: 'error', httpStatus: 401, envelope: { error: { code: 'UNAUTHORIZED' } } });

      const client = createToolgateClient({ baseUrl, token: agent.secret, project: 'alpha' });
      const written = await client.callTool('write_file', { path: 'notes.txt', content: 'hello\n' });
      expect(written).toMatchObject({ kind: 'success', envelope: { context: { project: 'alpha' } } });
      expect(await fs.readFile(path.join(projectsRoot, 'alpha', 'notes.txt'), 'utf8')).toBe('hello\n');
    } finally {
      await fs.rm(projectsRoot, { recursive: true, force: true });
    }
  });
});
