// Finding (issue 12): failed authentication was neither rate-limited nor bounded (27,045 bad-token requests
// in 10 s, no 429, 14 MB of audit). Failed attempts are now limited per client address
// (TOOLGATE_AUTH_FAIL_LIMIT per TOOLGATE_AUTH_FAIL_WINDOW_MS), and an address's refusals past the first
// few are counted in one audit line per window. The clock is faked (Date only), never waited for.
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REFUSAL_LINES_PER_WINDOW } from '../../src/ops/audit-refusals.js';
import { verifyAuditFile } from '../../src/ops/audit-verify.js';
import { makeApp, type TestApp } from '../helpers.js';
import { captureStream, makeToken } from './ops-helpers.js';
import { startRedis } from './redis-server.js';

let t: TestApp | undefined;
const others: TestApp[] = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await Promise.all([t, ...others.splice(0)].map((a) => a?.close()));
  t = undefined;
});

type Line = Record<string, unknown>;

describe('failed authentication', () => {
  it('failed authentication is rate-limited per client address, and its audit stays bounded', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // Noon, so the minute the test moves the clock on never crosses into the next day's audit file.
    vi.setSystemTime(new Date('2026-06-01T12:00:00Z'));
    const good = makeToken('agent');
    const stdout = captureStream();
    t = await makeApp({ TOOLGATE_INSTANCE_ID: 'test-1', TOOLGATE_AUTH_FAIL_LIMIT: '5' }, { tokens: [good.entry], auditStream: stdout.stream });
    const app = t.app;
    const authenticate = vi.spyOn(app.toolgate.auth, 'authenticate');
    const call = async (ip: string, authorization: string) => {
      const res = await app.inject({ method: 'POST', url: '/v1/tools/read_file', payload: { path: 'a.txt' }, headers: { authorization }, remoteAddress: ip });
      return { status: res.statusCode, code: (res.json() as { error?: { code: string } | null }).error?.code, retryAfter: res.headers['retry-after'] };
    };
    await fs.writeFile(t.file('a.txt'), 'hello\n');

    for (let i = 0; i < 5; i++) expect(await call('10.0.0.7', `Bearer wrong-${i}`)).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    const limited = await call('10.0.0.7', 'Bearer wrong-5');
    expect(limited).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    // refused before the token is looked at, a valid one included, until the window ends
    expect(authenticate).toHaveBeenCalledTimes(5);
    expect(await call('10.0.0.7', good.header.authorization)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(authenticate).toHaveBeenCalledTimes(5);
    // another address has its own count
    expect((await call('10.0.0.8', good.header.authorization)).status).toBe(200);
    expect((await call('10.0.0.8', 'Bearer wrong')).status).toBe(401);

    // the flood: every further attempt from the blocked address is refused, and only counted in the audit
    for (let i = 0; i < 200; i++) expect((await call('10.0.0.7', `Bearer flood-${i}`)).status).toBe(429);
    expect(authenticate).toHaveBeenCalledTimes(7);

    // the window ends: the address may try again, and its next refusal writes the count of the last window
    vi.setSystemTime(Date.now() + 60_000);
    expect(await call('10.0.0.7', 'Bearer wrong-again')).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    expect((await call('10.0.0.7', good.header.authorization)).status).toBe(200);

    await app.toolgate.audit.flush();
    const file = app.toolgate.audit.fileFor(t.file('.toolgate'), new Date());
    const lines = (await fs.readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Line);
    const from7 = lines.filter((l) => l.client_ip === '10.0.0.7');
    // 5 UNAUTHORIZED + 1 + 1 + 200 RATE_LIMITED in the first window: 10 lines, and one line counting the other 197
    const counts = from7.filter((l) => l.event === 'refusals_counted');
    expect(counts).toHaveLength(1);
    expect(counts[0]).toMatchObject({ count: 197, codes: { RATE_LIMITED: 197 } });
    expect(from7.filter((l) => l.event === undefined && l.actor === null)).toHaveLength(REFUSAL_LINES_PER_WINDOW + 1);
    expect(from7.map((l) => l.event ?? l.error_code ?? 'ok')).toEqual([
      ...['UNAUTHORIZED', 'UNAUTHORIZED', 'UNAUTHORIZED', 'UNAUTHORIZED', 'UNAUTHORIZED'],
      ...['RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED'],
      'refusals_counted',
      'UNAUTHORIZED',
      'ok',
    ]);
    expect(lines).toHaveLength(from7.length + 2);
    expect(await verifyAuditFile(file)).toMatchObject({ ok: true, lines: lines.length });
    // stdout carries the same bounded lines
    expect(stdout.text().trim().split('\n')).toHaveLength(lines.length);
  });

  it('TOOLGATE_AUTH_FAIL_LIMIT=0 switches the limit off; the audit of the refusals stays bounded', async () => {
    t = await makeApp({ TOOLGATE_INSTANCE_ID: 'test-1', TOOLGATE_AUTH_FAIL_LIMIT: '0' }, { tokens: [makeToken('agent').entry] });
    for (let i = 0; i < 30; i++) expect((await t.call('read_file', { path: 'a.txt' }, { authorization: `Bearer wrong-${i}` })).status).toBe(401);
    await t.app.toolgate.audit.flush();
    const file = t.app.toolgate.audit.fileFor(t.file('.toolgate'), new Date());
    const lines = (await fs.readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Line);
    expect(lines).toHaveLength(REFUSAL_LINES_PER_WINDOW + 1);
    expect(lines.at(-1)).toMatchObject({ event: 'refusals_counted', client_ip: '127.0.0.1', count: 30 - REFUSAL_LINES_PER_WINDOW, codes: { UNAUTHORIZED: 20 } });
  });

  it('with Redis the replicas share the count of an address\'s failures', async () => {
    const redis = await startRedis();
    try {
      const token = makeToken('agent');
      const env = { TOOLGATE_AUTH_FAIL_LIMIT: '3', TOOLGATE_REDIS_URL: redis.url };
      t = await makeApp(env, { tokens: [token.entry] });
      const two = await makeApp(env, { tokens: [token.entry] });
      others.push(two);
      const bad = (a: TestApp) => a.app.inject({ method: 'POST', url: '/v1/tools/read_file', payload: { path: 'a.txt' }, headers: { authorization: 'Bearer wrong' }, remoteAddress: '10.0.0.9' });
      expect((await bad(t)).statusCode).toBe(401);
      expect((await bad(t)).statusCode).toBe(401);
      expect((await bad(two)).statusCode).toBe(401);
      // the third failure, counted in Redis through the second replica, blocks the address there
      const refused = await bad(two);
      expect([refused.statusCode, (refused.json() as { error: { code: string } }).error.code]).toEqual([429, 'RATE_LIMITED']);
      // the first replica learns it from the store at its next failure, one more try at most
      expect((await bad(t)).statusCode).toBe(401);
      expect((await bad(t)).statusCode).toBe(429);
    } finally {
      await redis.kill();
    }
  });
});
