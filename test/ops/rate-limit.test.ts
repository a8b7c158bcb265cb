// Rate limits (docs/operations.md): a budget of tool calls per token (client address without auth),
// checked before the tool runs; RATE_LIMITED (429) with Retry-After and x-ratelimit-* headers. With
// TOOLGATE_REDIS_URL replicas share one budget, and the service keeps answering when Redis goes away.
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { normalizeClientIp, setupRateLimit } from '../../src/ops/rate-limit.js';
import type { CallInfo } from '../../src/tools/call.js';
import type { ToolDefinition } from '../../src/tools/define.js';
import { makeApp, type TestApp } from '../helpers.js';
import { makeToken, request } from './ops-helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';

const apps: TestApp[] = [];
async function app(env: Record<string, string>, opts: Parameters<typeof makeApp>[1] = {}): Promise<TestApp> {
  const a = await makeApp(env, opts);
  apps.push(a);
  return a;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

function metricValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('rate limit (memory store)', () => {
  it('answers at once, without a promise, and counts calls of one tick one by one', async () => {
    const limiter = await setupRateLimit(loadConfig({ TOOLGATE_ROOT: '/tmp', TOOLGATE_RATE_LIMIT: '3' }), false, { warn: () => undefined });
    const check = limiter?.check;
    if (!check) throw new Error('no check');
    const calls = Array.from({ length: 5 }, () => ({ actor: 'same', responseHeaders: {} as Record<string, string> }) as unknown as CallInfo);
    const answers = calls.map((call) => {
      try {
        return check(call, {} as ToolDefinition, {});
      } catch (err) {
        return (err as { code: string }).code;
      }
    });
    expect(answers).toEqual([undefined, undefined, undefined, 'RATE_LIMITED', 'RATE_LIMITED']);
    expect(calls.map((c) => c.responseHeaders?.['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0', '0']);
    expect(calls[3]?.responseHeaders?.['retry-after']).toMatch(/^\d+$/);
    limiter?.close();
  });

  it('the call past the budget is RATE_LIMITED with Retry-After and x-ratelimit-*, and does not run', async () => {
    const t = await app({ TOOLGATE_RATE_LIMIT: '3' });
    for (let i = 0; i < 3; i++) {
      const ok = await t.call('write_file', { path: `f${i}.txt`, content: 'x' });
      expect(ok.status).toBe(200);
      expect(ok.headers['x-ratelimit-limit']).toBe('3');
      expect(ok.headers['x-ratelimit-remaining']).toBe(String(2 - i));
      expect(Number(ok.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    }
    const refused = await t.call('write_file', { path: 'f3.txt', content: 'x' }, { 'x-request-id': 'limited-1' });
    expect(refused.status).toBe(429);
    expect(refused.body.status).toBe('error');
    expect(refused.body.error?.code).toBe('RATE_LIMITED');
    expect(refused.body.error?.message).toMatch(/Rate limit of 3 tool calls per minute reached; retry in \d+ s/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.headers['x-ratelimit-limit']).toBe('3');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.body.context.request_id).toBe('limited-1');
    await expect(fs.access(t.file('f3.txt'))).rejects.toThrow();

    // counted in metrics and written to the audit log
    const metrics = (await request(t.app, 'GET', '/metrics')).raw;
    expect(metricValue(metrics, 'toolgate_rate_limited_total')).toBe(1);
    expect(metricValue(metrics, 'toolgate_tool_errors_total{tool="write_file",code="RATE_LIMITED"}')).toBe(1);
    await t.app.toolgate.audit.flush();
    const [auditFile] = await fs.readdir(t.file('.toolgate/audit'));
    const lines = (await fs.readFile(t.file(`.toolgate/audit/${auditFile}`), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ request_id: 'limited-1', outcome: 'error', error_code: 'RATE_LIMITED', http_status: 429 });
  });

  it('the budget is per token', async () => {
    const a = makeToken('a');
    const b = makeToken('b');
    const t = await app({ TOOLGATE_RATE_LIMIT: '2' }, { tokens: [a.entry, b.entry] });
    await t.call('write_file', { path: 'x.txt', content: '1' }, a.header);
    await t.call('read_file', { path: 'x.txt' }, a.header);
    expect((await t.call('read_file', { path: 'x.txt' }, a.header)).status).toBe(429);
    expect((await t.call('read_file', { path: 'x.txt' }, b.header)).status).toBe(200);
  });

  it('without auth the budget is per client address', async () => {
    const t = await app({ TOOLGATE_RATE_LIMIT: '1' });
    const from = (ip: string) => t.app.inject({ method: 'POST', url: '/v1/tools/write_file', payload: { path: `${ip}.txt`, content: 'x' }, remoteAddress: ip });
    expect((await from('10.0.0.1')).statusCode).toBe(200);
    expect((await from('10.0.0.1')).statusCode).toBe(429);
    expect((await from('10.0.0.2')).statusCode).toBe(200);
  });

  it('without auth an IPv6 client counts by its /64, an IPv4-mapped one as its IPv4 address', async () => {
    const t = await app({ TOOLGATE_RATE_LIMIT: '1' });
    let n = 0;
    const from = (ip: string) => t.app.inject({ method: 'POST', url: '/v1/tools/write_file', payload: { path: `f${n++}.txt`, content: 'x' }, remoteAddress: ip });
    expect((await from('2001:db8:1:2::1')).statusCode).toBe(200);
    expect((await from('2001:DB8:1:2:ffff::9')).statusCode).toBe(429);
    expect((await from('2001:db8:1:3::1')).statusCode).toBe(200);
    expect((await from('10.9.8.7')).statusCode).toBe(200);
    expect((await from('::ffff:10.9.8.7')).statusCode).toBe(429);
  });

  it('keys a client address as @fastify/rate-limit does (its stores hold the counts)', async () => {
    const { normalizeIP } = createRequire(import.meta.url)('@fastify/rate-limit') as { normalizeIP: (ip: string) => string };
    const samples = ['127.0.0.1', 'unknown', 'ABC', '::1', '::', '::ffff:10.1.2.3', '::FFFF:a01:203', '2001:DB8::1', '2001:db8:0:0:1:0:0:1', 'fe80::1%eth0', '1::', '::2:3:4:5:6:7:8', '64:ff9b::192.0.2.33', 'ff02::1'];
    for (let i = 0; i < 500; i++) samples.push(Array.from({ length: 8 }, (_, j) => ((i * 7919 + j * 104729) % (j % 3 === 0 ? 1 : 65536)).toString(16)).join(':'));
    for (const ip of samples) expect(normalizeClientIp(ip), ip).toBe(normalizeIP(ip));
    // The one known difference: ipaddr.js reads the deprecated IPv4-compatible form as IPv4-mapped.
    expect([normalizeClientIp('::192.0.2.33'), normalizeIP('::192.0.2.33')]).toEqual(['192.0.2.33', '::']);
  });

  it('only tool calls spend the budget: the tool list and the probes do not', async () => {
    const t = await app({ TOOLGATE_RATE_LIMIT: '1' });
    for (let i = 0; i < 5; i++) {
      expect((await request(t.app, 'GET', '/v1/tools')).status).toBe(200);
      expect((await request(t.app, 'GET', '/livez')).status).toBe(200);
    }
    expect((await t.call('write_file', { path: 'a.txt', content: 'x' })).status).toBe(200);
    expect((await t.call('write_file', { path: 'b.txt', content: 'x' })).status).toBe(429);
  });

  it('the budget comes back after the window', async () => {
    // A window long enough that the two calls surely fall in it, however busy the machine; then the
    // budget comes back on its own (asked every 100 ms; refused calls do not extend the window).
    const t = await app({ TOOLGATE_RATE_LIMIT: '1', TOOLGATE_RATE_LIMIT_WINDOW_MS: '3000' });
    expect((await t.call('write_file', { path: 'a.txt', content: 'x' })).status).toBe(200);
    expect((await t.call('read_file', { path: 'a.txt' })).status).toBe(429);
    let status = 429;
    for (const deadline = Date.now() + 60_000; status === 429 && Date.now() < deadline; ) {
      await sleep(100);
      status = (await t.call('read_file', { path: 'a.txt' })).status;
    }
    expect(status).toBe(200);
  });

  it('TOOLGATE_RATE_LIMIT=0 switches it off', async () => {
    const t = await app({ TOOLGATE_RATE_LIMIT: '0' });
    for (let i = 0; i < 5; i++) expect((await t.call('write_file', { path: `${i}.txt`, content: 'x' })).status).toBe(200);
    expect((await t.call('read_file', { path: '0.txt' })).headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe('rate limit shared through Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.kill();
  });

  it('two app instances share one budget', async () => {
    const token = makeToken('shared');
    const env = { TOOLGATE_RATE_LIMIT: '5', TOOLGATE_REDIS_URL: redis.url };
    const one = await app(env, { tokens: [token.entry] });
    const two = await app(env, { tokens: [token.entry] });
    expect((await request(one.app, 'GET', '/healthz')).body).toMatchObject({ rate_limit: { store: 'redis', redis: 'ready' } });
    const statuses: number[] = [];
    for (const [i, t] of [one, two, one, two, one].entries()) statuses.push((await t.call('write_file', { path: `n${i}.txt`, content: 'x' }, token.header)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const sixth = await two.call('read_file', { path: 'n1.txt' }, token.header);
    expect(sixth.status).toBe(429);
    expect(sixth.body.error?.code).toBe('RATE_LIMITED');
    expect(sixth.headers['retry-after']).toBeDefined();
    expect((await one.call('read_file', { path: 'n0.txt' }, token.header)).status).toBe(429);
    // another caller has its own budget in the same store
    const other = makeToken('other');
    const three = await app(env, { tokens: [other.entry] });
    expect((await three.call('write_file', { path: 'o.txt', content: 'x' }, other.header)).status).toBe(200);
  });

  it('when Redis goes away: fail open keeps answering, fail closed refuses with RATE_LIMITED', async () => {
    const own = await startRedis();
    const open = await app({ TOOLGATE_RATE_LIMIT: '100', TOOLGATE_REDIS_URL: own.url });
    const closed = await app({ TOOLGATE_RATE_LIMIT: '100', TOOLGATE_REDIS_URL: own.url, TOOLGATE_REDIS_FAILURE_MODE: 'closed' });
    expect((await open.call('write_file', { path: 'a.txt', content: 'x' })).status).toBe(200);
    expect((await closed.call('write_file', { path: 'a.txt', content: 'x' })).status).toBe(200);
    await own.kill();

    for (let i = 0; i < 3; i++) {
      const res = await open.call('write_file', { path: `after-${i}.txt`, content: 'still here' });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('success');
    }
    expect(await fs.readFile(open.file('after-2.txt'), 'utf8')).toBe('still here');
    const health = await request(open.app, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect((health.body as unknown as { rate_limit: { redis: string } }).rate_limit.redis).not.toBe('ready');

    const refused = await closed.call('write_file', { path: 'b.txt', content: 'x' });
    expect(refused.status).toBe(429);
    expect(refused.body.error?.code).toBe('RATE_LIMITED');
    expect(refused.body.error?.message).toMatch(/store is unavailable/);
    expect(refused.headers['retry-after']).toBe('1');
    await expect(fs.access(closed.file('b.txt'))).rejects.toThrow();
  });

  it('an app whose Redis is not there at start still starts (failing open), and uses Redis once it is back', async () => {
    const gone = await startRedis();
    await gone.kill();
    const t = await app({ TOOLGATE_RATE_LIMIT: '1', TOOLGATE_REDIS_URL: gone.url });
    expect((await t.call('write_file', { path: 'a.txt', content: 'x' })).status).toBe(200);
    expect((await t.call('write_file', { path: 'b.txt', content: 'x' })).status).toBe(200);

    const back = await startRedis(gone.port);
    try {
      for (let i = 0; i < 100; i++) {
        const health = (await request(t.app, 'GET', '/healthz')).body as unknown as { rate_limit: { redis: string } };
        if (health.rate_limit.redis === 'ready') break;
        await sleep(100);
      }
      expect((await t.call('write_file', { path: 'c.txt', content: 'x' })).status).toBe(200);
      expect((await t.call('write_file', { path: 'd.txt', content: 'x' })).status).toBe(429);
    } finally {
      await back.kill();
    }
  });
});
