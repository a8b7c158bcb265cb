// A request's logger is made when the request first logs (src/ops/operations.ts, lazyRequestLogger): the lines it
// writes are the lines Fastify's own per-request child writes, with the request's id, and a request that logs
// nothing makes no child at all.
import Fastify from 'fastify';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { lazyRequestLogger } from '../../src/ops/operations.js';
import { makeApp, type TestApp } from '../helpers.js';
import { captureStream } from './ops-helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Log lines without their time, which differs between two servers. */
function linesOf(text: string): Record<string, unknown>[] {
  return text
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const { time: _, responseTime: __, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return rest;
    });
}

async function serverLines(lazy: boolean): Promise<Record<string, unknown>[]> {
  const out = captureStream();
  const app = Fastify({ logger: { level: 'trace', stream: out.stream }, genReqId: () => 'req-7', ...(lazy && { childLoggerFactory: lazyRequestLogger }) });
  app.get('/quiet', async () => 'quiet');
  app.get('/loud', async (req) => {
    req.log.info({ n: 1 }, 'first');
    req.log.child({ part: 'inner' }).warn('from a child');
    req.log.debug('debug line');
    return req.log.level;
  });
  app.get('/level', { logLevel: 'warn' }, async (req) => {
    req.log.info('not written');
    req.log.error({ err: new Error('boom') }, 'written');
    return req.log.level;
  });
  const answers = [];
  for (const url of ['/quiet', '/loud', '/level', '/missing']) answers.push((await app.inject({ method: 'GET', url })).body);
  await app.close();
  return [...linesOf(out.text()).map((l) => ({ ...l, err: l.err && { message: (l.err as { message: string }).message } })), { answers }];
}

describe('request loggers made when first used', () => {
  it('write what Fastify’s per-request children write, levels and bindings included', async () => {
    expect(await serverLines(true)).toEqual(await serverLines(false));
  });

  it('make no child for a request that does not log', async () => {
    const parent = pino({ level: 'info' }, captureStream().stream);
    const made: unknown[] = [];
    const spy = new Proxy(parent, { get: (target, key) => (key === 'child' ? (...args: unknown[]) => (made.push(args), Reflect.apply(target.child, target, args)) : Reflect.get(target, key)) });
    const quiet = lazyRequestLogger.call(null as never, spy as never, { reqId: 'a' }, {}, {} as never);
    expect(quiet.level).toBe('info');
    expect(made).toHaveLength(0);
    quiet.info('now');
    expect(made).toHaveLength(1);
    quiet.info('again');
    expect(made).toHaveLength(1);
  });

  it('log requests with their id in the app when TOOLGATE_LOG_REQUESTS is on', async () => {
    const logs = captureStream();
    t = await makeApp({ TOOLGATE_LOG_REQUESTS: 'true' }, { logger: { level: 'info', stream: logs.stream } });
    await t.call('read_file', { path: 'missing.txt' }, { 'x-request-id': 'rid-logged' });
    const lines = linesOf(logs.text()).filter((l) => l.reqId === 'rid-logged');
    expect(lines.map((l) => l.msg)).toEqual(['incoming request', 'request completed']);
  });
});
