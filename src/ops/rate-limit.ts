// Rate limit (docs/operations.md: 100 tool calls a minute per caller by default) with @fastify/rate-limit's stores:
// in memory, or in Redis (TOOLGATE_REDIS_URL) so that replicas share one budget. The check runs as an
// executor before-hook, so every door (REST now, MCP and WebSocket later) spends the same budget and a
// refusal is an ordinary RATE_LIMITED envelope that the audit log and the metrics see.
// Key: the token id, or the client address without auth.
// Failed authentications are limited per client address with the same store (TOOLGATE_AUTH_FAIL_LIMIT):
// the failures are counted there, and a blocked address is remembered locally so that refusing it costs
// neither a hash nor a store round trip.
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { ToolError } from '../envelope.js';
import type { BeforeHook, CallInfo } from '../tools/execute.js';

export interface RateLimiter {
  /** Executor before-hook: spends one call of the caller's budget, or throws RATE_LIMITED; null when TOOLGATE_RATE_LIMIT=0. */
  check: BeforeHook | null;
  /** Failed authentications per client address; null when TOOLGATE_AUTH_FAIL_LIMIT=0. */
  authFailures: AuthFailureLimiter | null;
  /** `memory` or `redis` (`/healthz`). */
  store: 'memory' | 'redis';
  /** Redis connection state (`ready`, `reconnecting`…), null for the memory store. */
  redisStatus(): string | null;
}

export interface AuthFailureLimiter {
  /** Seconds until the address may authenticate again, 0 when it may now (a local lookup, no I/O). */
  blockedFor(clientIp: string): number;
  /** Counts one failed authentication of the address; at the limit, blocks it until its window ends. */
  fail(clientIp: string): Promise<void>;
}

/** Blocked addresses remembered at most; past it the oldest go first (their failures stay counted in the store). */
const MAX_BLOCKED = 10_000;

interface LimiterRequest {
  rateKey: string;
  routeOptions: { config: Record<string, never> };
}

export function rateKeyOf(call: Pick<CallInfo, 'actor' | 'clientIp'>): string {
  if (call.actor) return `token:${call.actor}`;
  return `ip:${fastifyRateLimit.normalizeIP(call.clientIp ?? 'unknown')}`;
}

/**
 * Registers the plugin (no route of its own is limited) and returns the checks; null when both are off
 * (the failed-authentication limit is off without auth, where nothing can fail).
 */
export async function setupRateLimit(app: FastifyInstance, config: Config, authEnabled: boolean): Promise<RateLimiter | null> {
  const authFailLimit = authEnabled ? config.authFailLimit : 0;
  if (config.rateLimit === 0 && authFailLimit === 0) return null;
  const failOpen = config.redisFailureMode === 'open';
  let redis: Redis | null = null;
  if (config.redisUrl) {
    // Loaded only when configured: ioredis is the heaviest module of the start-up.
    const { Redis } = await import('ioredis');
    redis = new Redis(config.redisUrl, {
      // Fail fast instead of queueing calls while Redis is away: the failure mode decides, not a hang.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      commandTimeout: 1000,
      retryStrategy: (times) => Math.min(100 * times, 2000),
      lazyConnect: true,
    });
    let lastWarn = 0;
    redis.on('error', (err: Error) => {
      // Connection errors repeat while Redis is down: log one a minute at most, never the URL (password).
      if (Date.now() - lastWarn < 60_000) return;
      lastWarn = Date.now();
      app.log.warn({ err: { message: err.message } }, `rate-limit store (Redis) unavailable; failing ${failOpen ? 'open' : 'closed'}`);
    });
    const client = redis;
    await client.connect().catch(() => {
      app.log.warn('rate-limit store (Redis) not reachable at start; will keep retrying');
    });
    app.addHook('onClose', async () => {
      client.disconnect();
    });
  }

  await app.register(fastifyRateLimit, {
    global: false,
    max: config.rateLimit,
    timeWindow: config.rateLimitWindowMs,
    skipOnError: failOpen,
    nameSpace: 'toolgate-rate-',
    keyGenerator: (req) => (req as unknown as LimiterRequest).rateKey,
    ...(redis && { redis }),
  });
  return {
    check: config.rateLimit > 0 ? toolCallCheck(app) : null,
    authFailures: authFailLimit > 0 ? authFailureLimiter(app, authFailLimit, config.authFailWindowMs) : null,
    store: redis ? 'redis' : 'memory',
    redisStatus: () => redis?.status ?? null,
  };
}

function toolCallCheck(app: FastifyInstance): BeforeHook {
  const limit = app.createRateLimit();
  return async (call) => {
    const req: LimiterRequest = { rateKey: rateKeyOf(call), routeOptions: { config: {} } };
    let result;
    try {
      result = await limit(req as unknown as FastifyRequest);
    } catch {
      // Only reachable when failing closed: the store is down and the budget cannot be checked.
      if (call.responseHeaders) call.responseHeaders['retry-after'] = '1';
      throw new ToolError('RATE_LIMITED', 'The rate-limit store is unavailable, so calls are refused for now (TOOLGATE_REDIS_FAILURE_MODE=closed); retry in a few seconds.');
    }
    if (result.isAllowed) return;
    const headers = call.responseHeaders;
    if (headers) {
      headers['x-ratelimit-limit'] = String(result.max);
      headers['x-ratelimit-remaining'] = String(result.remaining);
      headers['x-ratelimit-reset'] = String(result.ttlInSeconds);
    }
    if (result.isExceeded) {
      const after = Math.max(1, result.ttlInSeconds);
      if (headers) {
        headers['x-ratelimit-remaining'] = '0';
        headers['retry-after'] = String(after);
      }
      throw new ToolError('RATE_LIMITED', `Rate limit of ${result.max} tool calls per ${describeWindow(result.timeWindow)} reached; retry in ${after} s.`, {
        limit: result.max,
        window_ms: result.timeWindow,
        retry_after_s: after,
      });
    }
  };
}

function authFailureLimiter(app: FastifyInstance, max: number, windowMs: number): AuthFailureLimiter {
  const limit = app.createRateLimit({ max, timeWindow: windowMs });
  const blockedUntil = new Map<string, number>();
  const keyOf = (ip: string) => `authfail:${fastifyRateLimit.normalizeIP(ip)}`;
  return {
    blockedFor(clientIp) {
      const key = keyOf(clientIp);
      const until = blockedUntil.get(key);
      if (until === undefined) return 0;
      const left = until - Date.now();
      if (left > 0) return Math.ceil(left / 1000);
      blockedUntil.delete(key);
      return 0;
    },
    async fail(clientIp) {
      const rateKey = keyOf(clientIp);
      let result;
      try {
        result = await limit({ rateKey, routeOptions: { config: {} } } as unknown as FastifyRequest);
      } catch {
        // The store is down (failing closed): this attempt is refused anyway, it just goes uncounted.
        return;
      }
      if (result.isAllowed || result.remaining > 0) return;
      if (blockedUntil.size >= MAX_BLOCKED) {
        const now = Date.now();
        for (const [k, until] of blockedUntil) if (until <= now) blockedUntil.delete(k);
        if (blockedUntil.size >= MAX_BLOCKED) blockedUntil.delete(blockedUntil.keys().next().value as string);
      }
      blockedUntil.set(rateKey, Date.now() + Math.max(1, result.ttl));
    },
  };
}

function describeWindow(ms: number): string {
  if (ms === 60_000) return 'minute';
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
