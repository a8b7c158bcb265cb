// In-band confirmation over /v1/ws (docs/approvals.md, "Where a person decides"): a call that needs approval, from a
// connection that may decide its own calls, gets a confirmation_request; the confirmation_response decides
// it and the same call answers. No answer in time, or the connection gone, leaves the request pending.
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { agent, approvalOf, ide, makePolicyApp, person, type PolicyApp } from '../approvals/approval-helpers.js';
import { sha256OfFile } from '../helpers.js';
import { connect, wsUrl, type Client } from './ws-helpers.js';

let t: PolicyApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** sha256 of main.py as ideConnection writes it: overwriting needs the version the writer saw. */
let version = '';
const write = (callId: string, extra: Record<string, unknown> = {}) => ({
  type: 'tool_call',
  call_id: callId,
  tool_name: 'write_file',
  arguments: { path: 'main.py', content: 'print("bye")\n', expected_sha256: version },
  ...extra,
});

/** The IDE policy (every write asks) with main.py in the workspace, and a connection for `token`. */
async function ideConnection(token: typeof ide | null, env: Record<string, string> = {}): Promise<Client> {
  t = await makePolicyApp('ide.yaml', env, token !== null);
  await fs.writeFile(t.file('main.py'), 'print("hi")\n');
  version = await sha256OfFile(t.file('main.py'));
  return connect(await wsUrl(t), token ? { headers: token.header } : {});
}

describe('confirmation_request / confirmation_response', () => {
  it('a self_approve token is asked; approving runs the call and it answers success', async () => {
    const c = await ideConnection(ide);
    c.send(write('w1'));
    const ask = await c.one();
    expect(ask).toMatchObject({
      type: 'confirmation_request',
      call_id: 'w1',
      timeout_seconds: 30,
      approval: { tool: 'write_file', path: 'main.py', risk: 'write', diff_truncated: false },
    });
    expect(ask.approval?.id).toMatch(/^apr_/);
    expect(ask.approval?.diff_preview).toContain('+print("bye")');
    expect(Date.parse(ask.approval?.expires_at ?? '')).toBeGreaterThan(0);
    expect(await fs.readFile(t!.file('main.py'), 'utf8')).toBe('print("hi")\n');

    c.send({ type: 'confirmation_response', call_id: 'w1', approved: true, reason: 'looks right' });
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'success' } });
    expect(await fs.readFile(t!.file('main.py'), 'utf8')).toBe('print("bye")\n');
    const approved = t!.audit().find((l) => l.event === 'approval_approved');
    expect(approved).toMatchObject({ approval_id: ask.approval?.id, decided_by: 'ide', reason: 'looks right' });
    expect(t!.audit().filter((l) => l.event === 'approval_used')).toHaveLength(1);

    // Answering it again is an error message; the connection stays.
    c.send({ type: 'confirmation_response', call_id: 'w1', approved: false });
    expect(await c.one()).toMatchObject({ type: 'error', call_id: 'w1', error: { code: 'NOT_FOUND' } });
    c.send({ type: 'ping' });
    expect(await c.one()).toEqual({ type: 'pong' });
  });

  it('rejecting answers USER_REJECTED with the reason and leaves the file unchanged', async () => {
    const c = await ideConnection(ide);
    c.send(write('w1'));
    expect((await c.one()).type).toBe('confirmation_request');
    c.send({ type: 'confirmation_response', call_id: 'w1', approved: false, reason: 'keep hi' });
    const result = await c.one();
    expect(result).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'error', error: { code: 'USER_REJECTED' } } });
    expect(result.result?.error?.message).toContain('keep hi');
    expect(await fs.readFile(t!.file('main.py'), 'utf8')).toBe('print("hi")\n');
  });

  it('without an answer in time the call answers pending; the console decides and the repeat runs', async () => {
    const c = await ideConnection(ide);
    c.send(write('w1', { confirmation_timeout_seconds: 0.05 }));
    const ask = await c.one();
    expect(ask).toMatchObject({ type: 'confirmation_request', timeout_seconds: 0.05 });
    const pending = await c.one();
    expect(pending).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'partial', data: { applied: false, approval: { id: ask.approval?.id, status: 'pending' } } } });
    expect(await fs.readFile(t!.file('main.py'), 'utf8')).toBe('print("hi")\n');

    // A late answer finds nothing waiting; the request waits for the console instead.
    c.send({ type: 'confirmation_response', approval_id: ask.approval?.id, approved: true });
    expect(await c.one()).toMatchObject({ type: 'error', error: { code: 'NOT_FOUND' } });
    const id = approvalOf(pending.result!).id;
    expect((await t!.decide(person, id, 'approve')).status).toBe(200);
    c.send({ ...write('w2'), arguments: { ...write('w2').arguments, approval_id: id } });
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'w2', result: { status: 'success' } });
    expect(await fs.readFile(t!.file('main.py'), 'utf8')).toBe('print("bye")\n');
  });

  it('a token without self_approve is not asked: the call answers pending at once', async () => {
    const c = await ideConnection(agent);
    c.send(write('w1'));
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'partial', data: { applied: false, approval: { status: 'pending' } } } });
  });

  it('TOOLGATE_APPROVAL_MAX_WAIT_S=0 turns in-band confirmation off', async () => {
    const c = await ideConnection(ide, { TOOLGATE_APPROVAL_MAX_WAIT_S: '0' });
    c.send(write('w1'));
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'partial', data: { approval: { status: 'pending' } } } });
  });

  it('without tokens the caller is asked only with TOOLGATE_SELF_APPROVE', async () => {
    const quiet = await ideConnection(null);
    quiet.send(write('w0'));
    expect(await quiet.one()).toMatchObject({ type: 'tool_result', call_id: 'w0', result: { status: 'partial', data: { approval: { status: 'pending' } } } });
    await t?.close();

    const c = await ideConnection(null, { TOOLGATE_SELF_APPROVE: 'true' });
    c.send(write('w1'));
    expect((await c.one()).type).toBe('confirmation_request');
    c.send({ type: 'confirmation_response', call_id: 'w1', approved: true });
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'success' } });
  });

  it('other calls keep flowing while one waits; a malformed answer is refused and the wait goes on', async () => {
    const c = await ideConnection(ide);
    c.send(write('w1'));
    const ask = await c.one();
    expect(ask.type).toBe('confirmation_request');
    c.send({ type: 'tool_call', call_id: 'r1', tool_name: 'read_file', arguments: { path: 'main.py' } });
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'r1', result: { status: 'success', data: { content: 'print("hi")\n' } } });

    c.send({ type: 'confirmation_response', call_id: 'w1', approved: 'yes' });
    c.send({ type: 'confirmation_response', call_id: 'w1', approve: true, approved: true });
    c.send({ type: 'confirmation_response', approved: true });
    c.send({ type: 'confirmation_response', call_id: 'w1', approval_id: 'apr_other', approved: true });
    const [notBool, extraKey, noId, otherId] = await c.next(4);
    expect(notBool).toMatchObject({ type: 'error', call_id: 'w1', error: { code: 'INVALID_PARAM' } });
    expect(notBool?.error?.message).toContain("'approved'");
    expect(extraKey?.error?.message).toContain('approve');
    expect(noId?.error?.message).toContain('call_id');
    expect(otherId).toMatchObject({ type: 'error', call_id: 'w1', error: { code: 'INVALID_PARAM' } });

    // Still waiting: answered by approval id, the call runs.
    c.send({ type: 'confirmation_response', approval_id: ask.approval?.id, approved: true });
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'success' } });
  });

  it('the wait for a person does not count against the call timeout_seconds', async () => {
    const c = await ideConnection(ide);
    // 2 s: far more than the write needs on any busy machine, so only counting the wait could make it fire.
    c.send(write('w1', { timeout_seconds: 2 }));
    expect((await c.one()).type).toBe('confirmation_request');
    // Longer than the tool's limit before the person answers: the tool's timer runs only around its runs.
    await new Promise((r) => setTimeout(r, 2500));
    c.send({ type: 'confirmation_response', call_id: 'w1', approved: true });
    expect(await c.one()).toMatchObject({ type: 'tool_result', call_id: 'w1', result: { status: 'success' } });
  });

  it('a connection that closes while asked leaves the request pending for the console', async () => {
    const c = await ideConnection(ide);
    c.send(write('w1'));
    const ask = await c.one();
    c.socket.close();
    // The call ends (its audit line) once the server saw the close; nothing was decided or changed.
    await vi.waitFor(() => expect(t!.audit().some((l) => l.tool === 'write_file' && l.event === undefined)).toBe(true));
    const record = (await t!.get(person, `/v1/approvals/${ask.approval?.id}`)).json.approval as { status: string };
    expect(record.status).toBe('pending');
    expect(await fs.readFile(t!.file('main.py'), 'utf8')).toBe('print("hi")\n');
  });
});

describe('a command held for the person, confirmed in band', () => {
  it('the confirmation_request shows what the command did and its change; approving lands it without a second run', async () => {
    const c = await ideConnection(null, { TOOLGATE_SELF_APPROVE: 'true', TOOLGATE_EXEC: 'sandboxed' });
    await fs.writeFile(t!.file('package.json'), JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'od -An -N4 -tx1 /dev/urandom | tr -d " \\n" > main.py' } }));
    c.send({ type: 'tool_call', call_id: 'r1', tool_name: 'run_command', arguments: { command: 'npm test' } });
    // npm's output streams first (tool_progress), then the person is asked.
    let ask = await c.one();
    while (ask.type === 'tool_progress') ask = await c.one();
    expect(ask).toMatchObject({ type: 'confirmation_request', call_id: 'r1', approval: { tool: 'run_command', risk: 'execute' } });
    expect(ask.approval?.diff_preview).toContain('exit: exited 0');
    const token = /\+([0-9a-f]{8})/.exec(ask.approval?.diff_preview ?? '')?.[1];
    expect(token).toBeTruthy();
    expect(await fs.readFile(t!.file('main.py'), 'utf8')).toBe('print("hi")\n');
    c.send({ type: 'confirmation_response', call_id: 'r1', approved: true });
    let result = await c.one();
    while (result.type === 'tool_progress') result = await c.one();
    expect(result).toMatchObject({ type: 'tool_result', call_id: 'r1', result: { status: 'success' } });
    expect(await fs.readFile(t!.file('main.py'), 'utf8')).toBe(token);
  });
});
