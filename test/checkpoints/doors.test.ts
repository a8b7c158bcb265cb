// Turns and rewind through every door (issue 35 point 7): MCP with `_meta["toolgate/turn"]`, the WebSocket
// `turn` field, the typed client's `turn` option, and the function-calling exports listing both tools.
import fs from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createToolgateClient } from '../../src/client/index.js';
import { listenOn, makeApp, type TestApp } from '../helpers.js';
import { envelopeOf, httpClient, mcpUrl } from '../transports/mcp-helpers.js';
import { connect, wsUrl } from '../transports/ws-helpers.js';

let t: TestApp | undefined;
let mcp: Client | undefined;
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
  await t?.close();
  t = undefined;
});

interface Listed {
  checkpoints: { id: string; turn: string | null; files: { path: string; op: string }[] }[];
}

describe('MCP', () => {
  it('records a tools/call under _meta["toolgate/turn"], lists and rewinds it; a bad turn is an error envelope', async () => {
    t = await makeApp();
    mcp = await httpClient(await mcpUrl(t.app));
    const tools = (await mcp.listTools()).tools.map((x) => x.name);
    expect(tools).toEqual(expect.arrayContaining(['list_checkpoints', 'rewind']));
    expect((await mcp.listTools()).tools.find((x) => x.name === 'rewind')?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });

    const w = await mcp.callTool({ name: 'write_file', arguments: { path: 'm.txt', content: 'mcp\n' }, _meta: { 'toolgate/turn': 'mcp-turn-1' } });
    expect(envelopeOf(w).status).toBe('success');
    const bad = await mcp.callTool({ name: 'write_file', arguments: { path: 'bad.txt', content: 'x' }, _meta: { 'toolgate/turn': 'two words' } });
    expect(bad.isError).toBe(true);
    expect(envelopeOf(bad).error?.code).toBe('INVALID_PARAM');
    expect(envelopeOf(bad).error?.message).toMatch(/Invalid turn/);

    const listed = envelopeOf(await mcp.callTool({ name: 'list_checkpoints', arguments: {} })).data as Listed;
    expect(listed.checkpoints).toEqual([expect.objectContaining({ turn: 'mcp-turn-1', files: [expect.objectContaining({ path: 'm.txt', op: 'create' })] })]);
    const dry = envelopeOf(await mcp.callTool({ name: 'rewind', arguments: { turn: 'mcp-turn-1', dry_run: true } }));
    expect(dry.data).toMatchObject({ applied: false, changes: [{ path: 'm.txt', op: 'delete', content: 'mcp\n' }] });
    const done = envelopeOf(await mcp.callTool({ name: 'rewind', arguments: { turn: 'mcp-turn-1' } }));
    expect(done.status).toBe('success');
    await expect(fs.access(t.file('m.txt'))).rejects.toThrow();
  });
});

describe('WebSocket', () => {
  it('records a tool_call under its turn field; a bad turn answers an error envelope and changes nothing', async () => {
    t = await makeApp();
    const ws = await connect(await wsUrl(t));
    ws.send({ type: 'tool_call', call_id: '1', tool_name: 'write_file', arguments: { path: 'w.txt', content: 'ws\n' }, turn: 'ws-turn' });
    expect((await ws.one()).result?.status).toBe('success');
    ws.send({ type: 'tool_call', call_id: '2', tool_name: 'write_file', arguments: { path: 'bad.txt', content: 'x' }, turn: 42 });
    const bad = await ws.one();
    expect(bad).toMatchObject({ type: 'tool_result', call_id: '2', result: { status: 'error', error: { code: 'INVALID_PARAM' } } });
    await expect(fs.access(t.file('bad.txt'))).rejects.toThrow();

    ws.send({ type: 'tool_call', call_id: '3', tool_name: 'list_checkpoints', arguments: {} });
    const listed = (await ws.one()).result?.data as Listed;
    expect(listed.checkpoints.map((c) => c.turn)).toEqual(['ws-turn']);
    ws.send({ type: 'tool_call', call_id: '4', tool_name: 'rewind', arguments: { turn: 'ws-turn' } });
    expect((await ws.one()).result?.status).toBe('success');
    await expect(fs.access(t.file('w.txt'))).rejects.toThrow();
  });
});

describe('the typed client', () => {
  it('sends its turn option as Toolgate-Turn; list_checkpoints and rewind are typed calls', async () => {
    t = await makeApp();
    const client = createToolgateClient({ baseUrl: await listenOn(t.app) });
    const w = await client.callTool('write_file', { path: 'c.txt', content: 'client\n' }, { turn: 'client-turn' });
    expect(w.kind).toBe('success');
    const listed = await client.callTool('list_checkpoints', { limit: 5 });
    if (listed.kind !== 'success') throw new Error(listed.envelope.text);
    expect(listed.envelope.data.checkpoints[0]?.turn).toBe('client-turn');
    const dry = await client.callTool('rewind', { turn: 'client-turn', dry_run: true });
    if (dry.kind !== 'success') throw new Error(dry.envelope.text);
    expect(dry.envelope.data.changes.map((c) => [c.path, c.op])).toEqual([['c.txt', 'delete']]);
    const bad = await client.callTool('write_file', { path: 'x.txt', content: 'x' }, { turn: 'x'.repeat(129) });
    expect(bad).toMatchObject({ kind: 'error', httpStatus: 400, envelope: { error: { code: 'INVALID_PARAM' } } });
  });
});

describe('function-calling exports', () => {
  it('list rewind and list_checkpoints in every format', async () => {
    t = await makeApp();
    for (const format of ['openai', 'openai-responses', 'anthropic', 'mcp']) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/tools?format=${format}` });
      const text = res.body;
      expect(res.statusCode).toBe(200);
      expect(text, format).toContain('"rewind"');
      expect(text, format).toContain('"list_checkpoints"');
    }
  });
});
