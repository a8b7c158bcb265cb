// Audit log (docs/operations.md): one hash-chained JSON line per tool call, in `<state>/audit/<instance>-<date>.jsonl`
// and on a stdout stream; facts only (never contents or secrets); `toolgate audit verify` finds edited,
// removed and reordered lines; the chain survives a restart.
import fs from 'node:fs/promises';
import { Writable } from 'node:stream';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { AuditLog } from '../../src/ops/audit.js';
import { chainLine } from '../../src/ops/audit-chain.js';
import { readLastLine } from '../../src/ops/audit-file.js';
import { verifyAuditFile, verifyAuditText } from '../../src/ops/audit-verify.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { captureStream, makeToken, request } from './ops-helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function auditLines(app: TestApp, instance = 'test-1'): Promise<{ file: string; text: string; lines: Record<string, unknown>[] }> {
  await app.app.toolgate.audit.flush();
  const dir = app.file('.toolgate/audit');
  const files = await fs.readdir(dir);
  const today = new Date().toISOString().slice(0, 10);
  expect(files).toEqual([`${instance}-${today}.jsonl`]);
  const file = path.join(dir, files[0] as string);
  const text = await fs.readFile(file, 'utf8');
  return { file, text, lines: text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('audit log', () => {
  it('one line per tool call with the facts docs/operations.md, "Audit log", lists', async () => {
    const token = makeToken('agent-7');
    t = await makeApp({ TOOLGATE_INSTANCE_ID: 'test-1' }, { tokens: [token.entry] });
    const w = await t.call('write_file', { path: 'docs/a.txt', content: 'hello audit' }, { ...token.header, 'x-request-id': 'rid-write' });
    expect(w.status).toBe(200);
    await t.call('read_file', { path: 'docs/a.txt' }, { ...token.header, 'x-request-id': 'rid-read' });
    await t.call('read_file', { path: 'nope.txt' }, { ...token.header, 'x-request-id': 'rid-404' });
    await t.call('write_file', { path: 'docs/a.txt', content: 'v2', expected_sha256: '0'.repeat(64) }, { ...token.header, 'x-request-id': 'rid-conflict' });

    const { lines } = await auditLines(t);
    expect(lines).toHaveLength(4);
    const [write, read, missing, conflict] = lines as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
    const sha = (w.body.data as { version: { sha256: string } }).version.sha256;
    expect(write).toMatchObject({
      request_id: 'rid-write',
      actor: 'agent-7',
      project: null,
      tool: 'write_file',
      path: 'docs/a.txt',
      risk: 'write',
      outcome: 'success',
      error_code: null,
      http_status: 200,
      bytes_written: 11,
      sha256_before: null,
      sha256_after: sha,
      prev: null,
    });
    expect(Date.parse(write.time as string)).not.toBeNaN();
    expect(typeof write.duration_ms).toBe('number');
    expect(write.client_ip).toBe('127.0.0.1');
    expect(read).toMatchObject({ request_id: 'rid-read', tool: 'read_file', risk: 'read', outcome: 'success', bytes_read: 11, prev: write.hash });
    expect(missing).toMatchObject({ request_id: 'rid-404', outcome: 'error', error_code: 'NOT_FOUND', http_status: 404, prev: read.hash });
    expect(conflict).toMatchObject({ request_id: 'rid-conflict', error_code: 'CONFLICT', prev: missing.hash });
    for (const line of lines) expect(line.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the same lines go to the stdout stream', async () => {
    const out = captureStream();
    t = await makeApp({ TOOLGATE_INSTANCE_ID: 'test-1' }, { auditStream: out.stream });
    await t.call('write_file', { path: 'a.txt', content: 'x' }, { 'x-request-id': 'to-stdout' });
    await t.app.toolgate.audit.flush();
    const lines = out.text().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ log: 'audit', request_id: 'to-stdout', tool: 'write_file', path: 'a.txt', outcome: 'success' });
  });

  it('stdout gets one write per turn of the event loop for all the lines recorded in it', async () => {
    const writes: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        writes.push(chunk.toString());
        cb();
      },
    });
    const log = new AuditLog({ file: false, stream, instanceId: 'test-1' });
    const refuse = (requestId: string) => log.recordRefusal({ requestId, clientIp: null, tool: 'read_file', code: 'UNAUTHORIZED', httpStatus: 401, durationMs: 1 }, null);
    refuse('r1');
    refuse('r2');
    refuse('r3');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(1);
    expect((writes[0] as string).split('\n')).toHaveLength(4);
    refuse('r4');
    await log.flush(); // flush() does not wait for the next turn
    expect(writes).toHaveLength(2);
    const lines = writes.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.request_id)).toEqual(['r1', 'r2', 'r3', 'r4']);
    expect(lines[0]).toMatchObject({ level: 30, log: 'audit', tool: 'read_file', outcome: 'error', error_code: 'UNAUTHORIZED', http_status: 401 });
  });

  it('TOOLGATE_AUDIT=false writes no file', async () => {
    t = await makeApp({ TOOLGATE_AUDIT: 'false' });
    await t.call('write_file', { path: 'a.txt', content: 'x' });
    await t.app.toolgate.audit.flush();
    await expect(fs.readdir(t.file('.toolgate/audit'))).rejects.toThrow();
  });

  it('the audit directory is invisible to the tools', async () => {
    t = await makeApp({ TOOLGATE_INSTANCE_ID: 'test-1' });
    await t.call('write_file', { path: 'a.txt', content: 'x' });
    const { file } = await auditLines(t);
    const res = await t.call('read_file', { path: `.toolgate/audit/${path.basename(file)}` });
    expect(res.body.error?.code).toBe('ACCESS_DENIED');
  });

  it('the chain survives a restart: the next process continues from the last line of today\'s file', async () => {
    t = await makeApp({ TOOLGATE_INSTANCE_ID: 'test-1' });
    await t.call('write_file', { path: 'a.txt', content: 'one' });
    await t.call('read_file', { path: 'a.txt' });
    const before = await auditLines(t);
    await t.app.close();
    // second process over the same workspace
    const again = await buildApp(loadConfig({ TOOLGATE_ROOT: t.root, TOOLGATE_INSTANCE_ID: 'test-1', TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }));
    await request(again, 'POST', '/v1/tools/read_file', { path: 'a.txt' });
    await again.close();
    const after = await auditLines(t);
    expect(after.lines).toHaveLength(3);
    expect(after.lines[2]?.prev).toBe(before.lines[1]?.hash);
    expect(await verifyAuditFile(after.file)).toEqual({ ok: true, lines: 3 });
  });

  it('concurrent calls still make one unbroken chain', async () => {
    t = await makeApp({ TOOLGATE_INSTANCE_ID: 'test-1' });
    await Promise.all(Array.from({ length: 30 }, (_, i) => t!.call('write_file', { path: `f${i % 5}/${i}.txt`, content: `c${i}` })));
    const { file, lines } = await auditLines(t);
    expect(lines).toHaveLength(30);
    expect(await verifyAuditFile(file)).toEqual({ ok: true, lines: 30 });
  });

  it('tool calls refused at the door (no token, wrong token, malformed body) get their line too', async () => {
    const token = makeToken('door');
    t = await makeApp({ TOOLGATE_INSTANCE_ID: 'test-1' }, { tokens: [token.entry] });
    expect((await t.call('read_file', { path: 'x.txt' })).status).toBe(401);
    expect((await t.call('write_file', { path: 'x.txt', content: 'x' }, { authorization: 'Bearer wrong' })).status).toBe(401);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/tools/edit', payload: '{nope', headers: { ...token.header, 'content-type': 'application/json' } });
    expect(bad.statusCode).toBe(400);
    const ok = await t.call('write_file', { path: 'x.txt', content: 'x' }, token.header);
    expect(ok.status).toBe(200);
    const { file, lines } = await auditLines(t);
    expect(lines.map((l) => [l.tool, l.actor, l.error_code, l.http_status])).toEqual([
      ['read_file', null, 'UNAUTHORIZED', 401],
      ['write_file', null, 'UNAUTHORIZED', 401],
      ['edit', null, 'INVALID_PARAM', 400],
      ['write_file', 'door', null, 200],
    ]);
    expect(await verifyAuditFile(file)).toEqual({ ok: true, lines: 4 });
  });
});

describe('audit verify', () => {
  const chain = (n: number) => {
    let prev: string | null = null;
    const lines: string[] = [];
    for (let i = 0; i < n; i++) {
      const { line, hash } = chainLine({ time: `2025-01-01T00:00:0${i}.000Z`, tool: 'write_file', path: `f${i}.txt`, outcome: 'success' }, prev);
      lines.push(line);
      prev = hash;
    }
    return lines;
  };
  const text = (lines: string[]) => `${lines.join('\n')}\n`;

  it('an intact chain verifies', () => {
    expect(verifyAuditText(text(chain(5)))).toEqual({ ok: true, lines: 5 });
    expect(verifyAuditText('')).toEqual({ ok: true, lines: 0 });
  });

  it('an edited line is found by its number', () => {
    const lines = chain(5);
    lines[2] = (lines[2] as string).replace('f2.txt', 'f9.txt');
    expect(verifyAuditText(text(lines))).toMatchObject({ ok: false, line: 3, reason: expect.stringMatching(/edited/) });
  });

  it('an edited line with a recomputed own hash breaks the link of the next line', () => {
    const lines = chain(5);
    const parsed = JSON.parse(lines[1] as string) as Record<string, unknown>;
    delete parsed.hash;
    const prev = parsed.prev as string;
    delete parsed.prev;
    lines[1] = chainLine({ ...parsed, path: 'forged.txt' }, prev).line;
    expect(verifyAuditText(text(lines))).toMatchObject({ ok: false, line: 3, reason: expect.stringMatching(/line 2/) });
  });

  it('a removed line is found', () => {
    const lines = chain(5);
    lines.splice(3, 1);
    expect(verifyAuditText(text(lines))).toMatchObject({ ok: false, line: 4, reason: expect.stringMatching(/removed/) });
    const firstGone = chain(3).slice(1);
    expect(verifyAuditText(text(firstGone))).toMatchObject({ ok: false, line: 1 });
  });

  it('reordered lines are found', () => {
    const lines = chain(5);
    [lines[1], lines[2]] = [lines[2] as string, lines[1] as string];
    expect(verifyAuditText(text(lines))).toMatchObject({ ok: false, line: 2, reason: expect.stringMatching(/reordered/) });
  });

  it('an inserted or damaged line is found', () => {
    const lines = chain(4);
    lines.splice(2, 0, chain(1)[0] as string);
    expect(verifyAuditText(text(lines))).toMatchObject({ ok: false, line: 3 });
    const cut = chain(3);
    cut[1] = (cut[1] as string).slice(0, 40);
    expect(verifyAuditText(text(cut))).toMatchObject({ ok: false, line: 2, reason: expect.stringMatching(/not a JSON line/) });
  });

  it('a line cut short by a crash stays its own line; the chain continues after it', async () => {
    const dir = await makeTempDir();
    const stateDir = path.join(dir, 'state');
    const auditDir = path.join(stateDir, 'audit');
    await fs.mkdir(auditDir, { recursive: true });
    const today = new Date().toISOString().slice(0, 10);
    const file = path.join(auditDir, `crash-${today}.jsonl`);
    const [first] = chain(1);
    await fs.writeFile(file, `${first}\n{"time":"2025`);
    expect(await readLastLine(file)).toEqual({ line: '{"time":"2025', terminated: false });
    const app = await buildApp(loadConfig({ TOOLGATE_ROOT: path.join(dir, 'ws'), TOOLGATE_STATE_DIR: stateDir, TOOLGATE_INSTANCE_ID: 'crash', TOOLGATE_AUDIT_STDOUT: 'false' }));
    await request(app, 'POST', '/v1/tools/write_file', { path: 'a.txt', content: 'x' });
    await app.close();
    const lines = (await fs.readFile(file, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe('{"time":"2025');
    expect(await verifyAuditFile(file)).toMatchObject({ ok: false, line: 2 });
    await fs.rm(dir, { recursive: true });
  });
});

describe('secrets', () => {
  it('neither file contents nor tokens reach the audit file, the audit stream or the logs', async () => {
    const token = makeToken('secret-keeper');
    const secretContent = 'SECRET-CONTENT-7f3a9c2e1b';
    const logs = captureStream();
    const auditOut = captureStream();
    t = await makeApp(
      { TOOLGATE_INSTANCE_ID: 'test-1', TOOLGATE_LOG_LEVEL: 'trace', TOOLGATE_LOG_REQUESTS: 'true' },
      { tokens: [token.entry], logger: { level: 'trace', stream: logs.stream }, auditStream: auditOut.stream },
    );
    const w = await t.call('write_file', { path: 'secret.txt', content: secretContent }, token.header);
    expect(w.status).toBe(200);
    const r = await t.call('read_file', { path: 'secret.txt' }, token.header);
    expect((r.body.data as { content: string }).content).toBe(secretContent);
    await t.call('write_file', { path: 'secret.txt', content: `${secretContent}-2`, expected_sha256: '0'.repeat(64) }, token.header);
    // a wrong token, and a right one on a failing route, are logged without the token
    await request(t.app, 'GET', '/v1/tools', undefined, { authorization: `Bearer ${token.secret}-wrong` });
    await request(t.app, 'POST', '/v1/tools/no_such_tool', {}, token.header);

    const { text } = await auditLines(t);
    expect(logs.text()).toContain('incoming request');
    expect(logs.text()).toContain('authentication failed');
    for (const [where, output] of [
      ['audit file', text],
      ['audit stream', auditOut.text()],
      ['logs', logs.text()],
    ] as const) {
      expect(output, where).not.toContain(secretContent);
      expect(output, where).not.toContain(token.secret);
      expect(output, where).not.toContain(token.entry.sha256);
    }
  });

  it('pino redacts an Authorization header that does get logged', async () => {
    const logs = captureStream();
    const token = makeToken('x');
    t = await makeApp({}, { tokens: [token.entry], logger: { level: 'info', stream: logs.stream } });
    t.app.log.info({ headers: { authorization: token.header.authorization, cookie: 'session=abc' }, token: token.secret }, 'headers');
    expect(logs.text()).toContain('[redacted]');
    expect(logs.text()).not.toContain(token.secret);
    expect(logs.text()).not.toContain('session=abc');
  });
});
