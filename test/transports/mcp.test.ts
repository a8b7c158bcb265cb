// MCP door, driven by the official SDK's Client: Streamable HTTP at /mcp (stateless, behind the tokens) and
// stdio through `toolgate mcp`. structuredContent is the envelope; content is what the model reads.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { compiled } from '../compiled.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { captureStream, makeToken } from '../ops/ops-helpers.js';
import { envelopeOf, httpClient, mcpUrl, textOf } from './mcp-helpers.js';

let t: TestApp | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await t?.close();
  t = undefined;
});

const listening = (app: TestApp) => mcpUrl(app.app);

/** One JSON-RPC message over plain fetch: no initialize, no session. */
async function rawRpc(url: string, body: object, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

describe('MCP over Streamable HTTP', () => {
  it('lists every tool with title, input and output schema and its annotations', async () => {
    t = await makeApp();
    client = await httpClient(await listening(t));
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.size).toBeGreaterThanOrEqual(15);
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations).toMatchObject({ readOnlyHint: expect.any(Boolean), destructiveHint: expect.any(Boolean), idempotentHint: expect.any(Boolean), openWorldHint: expect.any(Boolean) });
      // A read changes nothing, so it is neither destructive nor repeated with any effect.
      if (tool.annotations?.readOnlyHint) expect(tool.annotations).toMatchObject({ destructiveHint: false, idempotentHint: true });
    }
    const hints = (name: string) => byName.get(name)?.annotations;
    expect(hints('read_file')).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    // Only the web tools reach outside the workspace.
    expect(tools.filter((x) => x.annotations?.openWorldHint).map((x) => x.name).sort()).toEqual(['web_fetch', 'web_search']);
    expect(hints('delete_file')).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    // MCP reads destructiveHint false as "only additive": an overwrite or edit is destructive there, creating is not.
    expect(hints('write_file')).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(hints('edit_file')).toMatchObject({ destructiveHint: true, idempotentHint: false });
    expect(hints('append_to_file')).toMatchObject({ destructiveHint: false, idempotentHint: false });
    expect(hints('create_directory')).toMatchObject({ destructiveHint: false, idempotentHint: true });
  });

  it('answers reads, searches, edits and errors with the envelope and what the model needs to read', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('notes.txt'), 'alpha\nbeta\ngamma\n');
    client = await httpClient(await listening(t));

    // The SDK client validates structuredContent against each tool's outputSchema on every call.
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    expect(read.isError).toBe(false);
    expect(envelopeOf(read)).toMatchObject({ status: 'success', context: { path_resolved: 'notes.txt', risk: 'read' } });
    expect(textOf(read)).toContain('alpha\nbeta\ngamma');

    const search = await client.callTool({ name: 'search_files', arguments: { query: 'beta', mode: 'content' } });
    expect(textOf(search)).toContain('notes.txt:2:1: beta');

    const edit = await client.callTool({ name: 'edit_file', arguments: { path: 'notes.txt', old_text: 'beta', new_text: 'BETA', expected_sha256: (envelopeOf(read).data as { version: { sha256: string } }).version.sha256 } });
    expect(envelopeOf(edit).status).toBe('success');
    expect(textOf(edit)).toMatch(/-beta\n\+BETA/);

    const missing = await client.callTool({ name: 'read_file', arguments: { path: 'nope.txt' } });
    expect(missing.isError).toBe(true);
    expect(envelopeOf(missing)).toMatchObject({ status: 'error', error: { code: 'NOT_FOUND' } });
    expect(textOf(missing)).toMatch(/^Error NOT_FOUND: /);

    const invalid = await client.callTool({ name: 'read_file', arguments: { start_line: 2 } });
    expect(invalid.isError).toBe(true);
    expect(envelopeOf(invalid).error?.code).toBe('INVALID_PARAM');
  });

  it('is stateless: a tools/call without initialize or session is answered, and GET is 405', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'hello\n');
    const url = await listening(t);
    const res = await rawRpc(url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.body).toMatchObject({ id: 7, result: { isError: false, structuredContent: { status: 'success', data: { content: 'hello\n' } } } });
    const list = await rawRpc(url, { jsonrpc: '2.0', id: 8, method: 'tools/list' });
    expect((list.body.result as { tools: unknown[] }).tools.length).toBeGreaterThanOrEqual(15);
    expect((await fetch(url)).status).toBe(405);
  });

  it('goes through the same pipeline: no token 401, wrong project refused, over the rate limit RATE_LIMITED, audited', async () => {
    const projectsRoot = await makeTempDir();
    await fs.mkdir(path.join(projectsRoot, 'a'));
    await fs.writeFile(path.join(projectsRoot, 'a', 'x.txt'), 'x\n');
    const onlyA = makeToken('only-a', { projects: ['a'] });
    const audit = captureStream();
    t = await makeApp({ TOOLGATE_PROJECTS_ROOT: projectsRoot, TOOLGATE_RATE_LIMIT: '3', TOOLGATE_AUDIT_STDOUT: 'true' }, { tokens: [onlyA.entry], auditStream: audit.stream });
    const url = await listening(t);

    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'x.txt' } } };
    const anonymous = await rawRpc(url, call, { 'x-project-id': 'a' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await rawRpc(url, call, { 'x-project-id': 'a', authorization: 'Bearer wrong' })).status).toBe(401);

    client = await httpClient(url, { ...onlyA.header, 'x-project-id': 'b' });
    const wrongProject = await client.callTool({ name: 'read_file', arguments: { path: 'x.txt' } });
    expect(envelopeOf(wrongProject).error?.code).toBe('ACCESS_DENIED');
    await client.close();

    client = await httpClient(url, { ...onlyA.header, 'x-project-id': 'a' });
    const codes: (string | undefined)[] = [];
    for (let i = 0; i < 4; i++) codes.push(envelopeOf(await client.callTool({ name: 'read_file', arguments: { path: 'x.txt' } })).error?.code);
    expect(codes).toEqual([undefined, undefined, undefined, 'RATE_LIMITED']);

    await t.app.toolgate.audit.flush();
    const lines = audit
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tool: string; error_code: string | null; actor: string | null; project: string | null });
    expect(lines.filter((l) => l.error_code === 'UNAUTHORIZED')).toHaveLength(2);
    expect(lines.filter((l) => l.error_code === 'ACCESS_DENIED')).toHaveLength(1);
    expect(lines.filter((l) => l.actor === 'only-a' && l.project === 'a' && l.error_code === null)).toHaveLength(3);
    expect(lines.filter((l) => l.error_code === 'RATE_LIMITED')).toHaveLength(1);
    await fs.rm(projectsRoot, { recursive: true, force: true });
  });
});

describe('MCP over stdio (toolgate mcp)', () => {
  it('serves the tools with nothing but JSON-RPC on stdout; logs and audit go to stderr', async () => {
    const base = await makeTempDir();
    await fs.writeFile(path.join(base, 'hello.txt'), 'from stdio\n');
    const repo = path.resolve(import.meta.dirname, '../..');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [compiled('src/cli.ts'), 'mcp', '--root', base],
      env: { ...(process.env as Record<string, string>), TOOLGATE_AUDIT_STDOUT: 'true', TOOLGATE_LOG_LEVEL: 'info' },
      cwd: repo,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const protocolErrors: Error[] = [];
    client = new Client({ name: 'toolgate-test', version: '1.0.0' });
    client.onerror = (err) => protocolErrors.push(err);
    await client.connect(transport);

    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toContain('read_file');
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } });
    expect(envelopeOf(read)).toMatchObject({ status: 'success', data: { content: 'from stdio\n' } });
    expect(textOf(read)).toContain('from stdio');
    const outside = await client.callTool({ name: 'read_file', arguments: { path: '../etc/passwd' } });
    expect(outside.isError).toBe(true);

    await client.close();
    client = undefined;
    // A non-JSON line on stdout would have reached the client as a parse error.
    expect(protocolErrors).toEqual([]);
    expect(stderr).toContain('"log":"audit"');
    await fs.rm(base, { recursive: true, force: true });
  }, 30_000);
});
