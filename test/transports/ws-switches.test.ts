// Policy switches over /v1/ws (docs/approvals.md): the upgrade's X-Toolgate-Switches holds for the connection, a
// tool_call's own `switches` (same syntax, for browsers that cannot set headers) replaces it for that call.
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { agent, makePolicyApp, type PolicyApp } from '../approvals/approval-helpers.js';
import { connect, wsUrl } from './ws-helpers.js';

const POLICY = `
switches:
  memory: { default: off }
rules:
  - name: memory-off
    paths: [USER.md]
    when: { memory: off }
    action: deny
`;

let t: PolicyApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const readUser = (callId: string, extra: Record<string, unknown> = {}) => ({ type: 'tool_call', call_id: callId, tool_name: 'read_file', arguments: { path: 'USER.md' }, ...extra });

describe('WebSocket switches', () => {
  it('the upgrade header holds for the connection; a call switches for itself; unknown switches are named', async () => {
    t = await makePolicyApp(POLICY);
    await fs.writeFile(t.file('USER.md'), 'Name: Ann\n');
    const url = await wsUrl(t);

    const plain = await connect(url, { headers: agent.header });
    plain.send(readUser('off'));
    const denied = await plain.one();
    expect(denied).toMatchObject({ call_id: 'off', result: { status: 'error', error: { code: 'ACCESS_DENIED' } } });
    expect(denied.result?.error?.message).toContain('memory');
    plain.send(readUser('on', { switches: 'memory=on' }));
    expect(await plain.one()).toMatchObject({ call_id: 'on', result: { status: 'success', data: { content: 'Name: Ann\n' } } });
    plain.send(readUser('bad', { switches: 'dreams=on' }));
    const bad = await plain.one();
    expect(bad).toMatchObject({ call_id: 'bad', result: { status: 'error', error: { code: 'INVALID_PARAM' } } });
    expect(bad.result?.error?.message).toContain("'dreams'");

    const withHeader = await connect(url, { headers: { ...agent.header, 'x-toolgate-switches': 'memory=on' } });
    withHeader.send(readUser('h'));
    expect(await withHeader.one()).toMatchObject({ call_id: 'h', result: { status: 'success' } });
    withHeader.send(readUser('h-off', { switches: 'memory=off' }));
    expect(await withHeader.one()).toMatchObject({ call_id: 'h-off', result: { error: { code: 'ACCESS_DENIED' } } });
  });
});
