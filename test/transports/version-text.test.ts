// The text a client hands its model names the version (docs/api.md, "Versions"): a model that sees only the
// text of a read passes expected_sha256 on its next overwrite, over every door, without a second read.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp, sha256OfFile, type TestApp } from '../helpers.js';
import { httpClient, mcpUrl, textOf } from './mcp-helpers.js';
import { connect, wsUrl } from './ws-helpers.js';

let t: TestApp | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await t?.close();
  t = undefined;
});

/** The sha256 a model would copy out of the text. */
const shaIn = (text: string) => /Version: sha256 ([0-9a-f]{64})/.exec(text)?.[1];

describe('answers that carry a version say it in their text', () => {
  it('MCP: the text of read_file names the sha256 and the next overwrite passes with it', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('x.txt'), 'one\ntwo\n');
    client = await httpClient(await mcpUrl(t.app));
    const text = textOf;

    const read = text(await client.callTool({ name: 'read_file', arguments: { path: 'x.txt' } }));
    const sha = shaIn(read);
    expect(sha).toBe(await sha256OfFile(t.file('x.txt')));
    // The content still follows the summary.
    expect(read).toContain('one\ntwo');

    const write = await client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'three\n', expected_sha256: sha } });
    expect(write.isError).toBe(false);
    expect(shaIn(text(write))).toBe(await sha256OfFile(t.file('x.txt')));
    expect(await fs.readFile(t.file('x.txt'), 'utf8')).toBe('three\n');
  });

  it('REST and WebSocket: the envelope text names the version of data.version', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('x.txt'), 'alpha\n');
    const sha = await sha256OfFile(t.file('x.txt'));

    const rest = await t.call('read_file', { path: 'x.txt' });
    expect(shaIn(rest.body.text)).toBe(sha);
    const edit = await t.call('edit_file', { path: 'x.txt', edits: [{ old_text: 'alpha', new_text: 'beta' }] });
    expect(edit.status).toBe(200);
    expect(shaIn(edit.body.text)).toBe((edit.body.data as { version: { sha256: string } }).version.sha256);

    const ws = await connect(await wsUrl(t));
    ws.send({ type: 'tool_call', call_id: '1', tool_name: 'read_file', arguments: { path: 'x.txt' } });
    const msg = await ws.one();
    expect(shaIn(msg.result?.text ?? '')).toBe(await sha256OfFile(t.file('x.txt')));
  });

  it('answers without a version do not invent one', async () => {
    t = await makeApp();
    await fs.mkdir(t.file('d'));
    const list = await t.call('list_directory', { path: 'd' });
    expect(list.status).toBe(200);
    expect(list.body.text).not.toContain('Version: sha256');
  });
});
