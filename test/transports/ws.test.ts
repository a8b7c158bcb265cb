// WebSocket door (/v1/ws): tool_call -> tool_result with the envelope, calls in flight answered as they
// finish, malformed messages answered without closing, auth before the upgrade (header or subprotocol).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { captureStream, makeToken } from '../ops/ops-helpers.js';
import { connect, wsUrl } from './ws-helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('WebSocket /v1/ws', () => {
  it('answers tool calls with the envelope, several in flight, each with its call_id', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'A\n');
    await fs.writeFile(t.file('b.txt'), 'B\n');
    const c = await connect(await wsUrl(t));
    c.send({ type: 'tool_call', call_id: '1', tool_name: 'read_file', arguments: { path: 'a.txt' } });
    c.send({ type: 'tool_call', call_id: '2', tool_name: 'read_file', arguments: { path: 'b.txt' }, timeout_seconds: 5 });
    c.send({ type: 'tool_call', call_id: '3', tool_name: 'read_file', arguments: { path: 'missing.txt' } });
    const byId = new Map((await c.next(3)).map((m) => [m.call_id, m]));
    expect(byId.get('1')).toMatchObject({ type: 'tool_result', result: { status: 'success', data: { content: 'A\n' } } });
    expect(byId.get('2')).toMatchObject({ type: 'tool_result', result: { status: 'success', data: { content: 'B\n' } } });
    expect(byId.get('3')).toMatchObject({ type: 'tool_result', result: { status: 'error', error: { code: 'NOT_FOUND' } } });
  });

  it('answers malformed messages with an error message and keeps the connection; ping gets pong', async () => {
    t = await makeApp();
    await fs.writeFile(t.file('a.txt'), 'A\n');
    const c = await connect(await wsUrl(t));
    c.send('not json');
    c.send({ type: 'dance' });
    c.send({ type: 'tool_call', call_id: 'x', arguments: {} });
    c.send({ type: 'ping' });
    const [notJson, unknownType, noTool, pong] = await c.next(4);
    expect(notJson).toMatchObject({ type: 'error', error: { code: 'INVALID_PARAM' } });
    expect(unknownType?.error?.message).toMatch(/unknown message type "dance"/);
    expect(noTool).toMatchObject({ type: 'error', call_id: 'x', error: { code: 'INVALID_PARAM' } });
    expect(noTool?.error?.message).toContain('tool_name');
    expect(pong).toEqual({ type: 'pong' });
    c.send({ type: 'tool_call', call_id: 'after', tool_name: 'read_file', arguments: { path: 'a.txt' } });
    expect((await c.next())[0]).toMatchObject({ call_id: 'after', result: { status: 'success' } });
  });

  it('closes a connection whose message is over the size limit (1009)', async () => {
    t = await makeApp({ TOOLGATE_BODY_LIMIT_BYTES: '4096' });
    const c = await connect(await wsUrl(t));
    const closed = new Promise<number>((r) => c.socket.once('close', (code: number) => r(code)));
    c.send({ type: 'tool_call', call_id: 'big', tool_name: 'write_file', arguments: { path: 'x', content: 'x'.repeat(10_000) } });
    expect(await closed).toBe(1009);
  });

  it('refuses the upgrade with 401 without a token; accepts the header and the browser subprotocol', async () => {
    const tok = makeToken('ide');
    t = await makeApp({}, { tokens: [tok.entry] });
    await fs.writeFile(t.file('a.txt'), 'A\n');
    const url = await wsUrl(t);
    await expect(connect(url)).rejects.toThrow('HTTP 401');
    await expect(connect(url, { headers: { authorization: 'Bearer wrong' } })).rejects.toThrow('HTTP 401');
    await expect(connect(url, { protocols: ['toolgate.v1', 'toolgate.bearer.wrong'] })).rejects.toThrow('HTTP 401');

    const viaHeader = await connect(url, { headers: tok.header });
    viaHeader.send({ type: 'tool_call', call_id: 'h', tool_name: 'read_file', arguments: { path: 'a.txt' } });
    expect((await viaHeader.next())[0]?.result?.status).toBe('success');

    const browser = await connect(url, { protocols: ['toolgate.v1', `toolgate.bearer.${tok.secret}`] });
    expect(browser.socket.protocol).toBe('toolgate.v1');
    browser.send({ type: 'tool_call', call_id: 'b', tool_name: 'read_file', arguments: { path: 'a.txt' } });
    expect((await browser.next())[0]?.result?.status).toBe('success');
  });
});

describe('every door goes through the pipeline', () => {
  async function setup() {
    const projectsRoot = await makeTempDir();
    await fs.mkdir(path.join(projectsRoot, 'a'));
    await fs.writeFile(path.join(projectsRoot, 'a', 'x.txt'), 'x\n');
    const onlyA = makeToken('only-a', { projects: ['a'] });
    const audit = captureStream();
    t = await makeApp({ TOOLGATE_PROJECTS_ROOT: projectsRoot, TOOLGATE_RATE_LIMIT: '3', TOOLGATE_AUDIT_STDOUT: 'true' }, { tokens: [onlyA.entry], auditStream: audit.stream });
    const auditLines = async () => {
      await t?.app.toolgate.audit.flush();
      return audit
        .text()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { error_code: string | null; actor: string | null; project: string | null });
    };
    return { projectsRoot, onlyA, auditLines };
  }

  it('REST: no token 401, wrong project ACCESS_DENIED, over the rate limit RATE_LIMITED, all audited', async () => {
    const { projectsRoot, onlyA, auditLines } = await setup();
    const call = (project: string, headers: Record<string, string>) => t!.app.inject({ method: 'POST', url: `/v1/projects/${project}/tools/read_file`, payload: { path: 'x.txt' }, headers });
    expect((await call('a', {})).statusCode).toBe(401);
    expect((await call('b', onlyA.header)).json()).toMatchObject({ error: { code: 'ACCESS_DENIED' } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call('a', onlyA.header)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const lines = await auditLines();
    expect(lines.map((l) => l.error_code)).toEqual(['UNAUTHORIZED', 'ACCESS_DENIED', null, null, null, 'RATE_LIMITED']);
    await fs.rm(projectsRoot, { recursive: true, force: true });
  });

  it('WebSocket: no token 401 before the upgrade, wrong project ACCESS_DENIED, over the rate limit RATE_LIMITED, audited', async () => {
    const { projectsRoot, onlyA, auditLines } = await setup();
    const url = await wsUrl(t!);
    await expect(connect(`${url}?project=a`)).rejects.toThrow('HTTP 401');

    const wrong = await connect(`${url}?project=b`, { headers: onlyA.header });
    wrong.send({ type: 'tool_call', call_id: 'w', tool_name: 'read_file', arguments: { path: 'x.txt' } });
    expect((await wrong.next())[0]?.result?.error?.code).toBe('ACCESS_DENIED');

    const c = await connect(`${url}?project=a`, { headers: onlyA.header });
    for (let i = 0; i < 4; i++) c.send({ type: 'tool_call', call_id: String(i), tool_name: 'read_file', arguments: { path: 'x.txt' } });
    const answers = await c.next(4);
    const codes = answers.map((m) => m.result?.error?.code ?? 'ok').sort();
    expect(codes, JSON.stringify(codes)).toEqual(['RATE_LIMITED', 'ok', 'ok', 'ok']);
    const lines = await auditLines();
    expect(lines.filter((l) => l.error_code === 'ACCESS_DENIED')).toHaveLength(1);
    expect(lines.filter((l) => l.actor === 'only-a' && l.project === 'a')).toHaveLength(4);
    expect(lines.filter((l) => l.error_code === 'RATE_LIMITED')).toHaveLength(1);
    await fs.rm(projectsRoot, { recursive: true, force: true });
  });
});
