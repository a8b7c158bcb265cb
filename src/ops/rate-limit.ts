// Rate limit (docs/operations.md: 100 tool calls a minute per caller by default) with @fastify/rate-limit's stores:
// in memory, or in Redis (TOOLGATE_REDIS_URL) so that replicas share one budget. The check runs as an
// executor before-hook, so every door (REST, MCP, WebSocket) spends the same budget and a
// refusal is an ordinary RATE_LIMITED envelope that the audit log and the metrics see.
// Key: the token id, or the client address without auth.
// Failed authentications are limited per client address with the same store (TOOLGATE_AUTH_FAIL_LIMIT):
// the failures are counted there, and a blocked address is remembered locally so that refusing it costs
// neither a hash nor a store round trip.
import { createRequire } from 'node:module';
import { isIPv6 } from 'node:net';
import type { Redis } from 'ioredis';
import ipaddr from 'ipaddr.js';
import type { Config } from '../config.js';
import { E } from '../errors.js';
import type { BeforeHook, CallInfo } from '../tools/call.js';

export interface RateLimiter {
  /** Executor before-hook: spends one call of the caller's budget, or throws RATE_LIMITED; null when TOOLGATE_RATE_LIMIT=0. */
  check: BeforeHook | null;
  /** Failed authentications per client address; null when TOOLGATE_AUTH_FAIL_LIMIT=0. */
  authFailures: AuthFailureLimiter | null;
  /** `memory` or `redis` (`/healthz`). */
  store: 'memory' | 'redis';
  /** Redis connection state (`ready`, `reconnecting`…), null for the memory store. */
  redisStatus(): string | null;
  /** Drops the Redis connection (app shutdown). */
  close(): void;
}

export interface AuthFailureLimiter {
  /** Seconds until the address may authenticate again, 0 when it may now (a local lookup, no I/O). */
  blockedFor(clientIp: string): number;
  /** Counts one failed authentication of the address; at the limit, blocks it until its window ends. */
  fail(clientIp: string): Promise<void>;
}

/** Blocked addresses remembered at most; past it the oldest go first (their failures stay counted in the store). */
const MAX_BLOCKED = 10_000;

/**
 * The counting half of @fastify/rate-limit: its stores (memory LRU, or the Redis Lua script shared by the
 * replicas) used directly with a key, so the limiter needs no Fastify request and serves every door alike.
 */
interface CounterStore {
  incr(key: string, cb: (err: Error | null, res: { current: number; ttl: number }) => void, timeWindow: number, max: number): void;
}
type StoreClass<A extends unknown[]> = new (...args: A) => CounterStore;
const requireStore = createRequire(import.meta.url);
const LocalStore = requireStore('@fastify/rate-limit/store/LocalStore.js') as StoreClass<[boolean, boolean, number]>;
const RedisStore = requireStore('@fastify/rate-limit/store/RedisStore.js') as StoreClass<[boolean, boolean, Redis, string]>;

/** Where the limiter logs (the app's pino logger, or stderr for `toolgate mcp`). */
export interface LimiterLog {
  warn(obj: object | string, msg?: string): void;
}

interface Count {
  max: number;
  timeWindow: number;
  current: number;
  remaining: number;
  ttlInSeconds: number;
  ttlMs: number;
}

/**
 * Counts one use of `key`'s budget. The memory store answers at once, and so does this (no promise, no tick per
 * call: docs/development.md, "Work done once"); the Redis store answers later, through a promise.
 */
function counter(store: CounterStore, max: number, timeWindow: number, failOpen: boolean): (key: string) => Count | Promise<Count> {
  const countOf = (current: number, ttl: number): Count => ({ max, timeWindow, current, remaining: Math.max(0, max - current), ttlInSeconds: Math.ceil(ttl / 1000), ttlMs: ttl });
  // Failing open counts the call as free; failing closed lets the caller refuse it.
  const failed = (err: unknown): Count => {
    if (!failOpen) throw err;
    return countOf(0, 0);
  };
  return (key) => {
    let answered: { err: Error | null; current: number; ttl: number } | null = null;
    let later: ((a: { err: Error | null; current: number; ttl: number }) => void) | null = null;
    try {
      // The memory store hands back its live entry, which later calls of the same tick keep counting up:
      // copy the numbers in the callback, or concurrent calls all read the last count and are all refused.
      store.incr(
        key,
        (err, res) => {
          const a = err ? { err, current: 0, ttl: 0 } : { err: null, current: res.current, ttl: res.ttl };
          if (later) later(a);
          else answered = a;
        },
        timeWindow,
        max,
      );
    } catch (err) {
      return failed(err);
    }
    const settle = (a: { err: Error | null; current: number; ttl: number }) => (a.err ? failed(a.err) : countOf(a.current, a.ttl));
    if (answered) return settle(answered);
    return new Promise<{ err: Error | null; current: number; ttl: number }>((resolve) => (later = resolve)).then(settle);
  };
}

export function rateKeyOf(call: Pick<CallInfo, 'actor' | 'clientIp'>): string {
  if (call.actor) return `token:${call.actor}`;
  return `ip:${normalizeClientIp(call.clientIp ?? 'unknown')}`;
}

/**
 * A client address as a budget key, as @fastify/rate-limit's normalizeIP makes it (an IPv6 address counts by
 * its /64, an IPv4-mapped one as its IPv4 address), with ipaddr.js, which the service loads anyway: the plugin's
 * own parser (ip-address) cost every start 4 ms. One difference: ipaddr.js reads the deprecated `::a.b.c.d`
 * as IPv4-mapped, so such an address counts as a.b.c.d rather than in one bucket with every other of its kind.
 */
export function normalizeClientIp(ip: string): string {
  if (!isIPv6(ip)) return ip.toLowerCase();
  const address = ipaddr.IPv6.parse(ip);
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
  return ipaddr.IPv6.networkAddressFromCIDR(`${ip}/64`).toString();
}

/**
 * The store and the checks; null when both are off (the failed-authentication limit is off without auth,
 * where nothing can fail). Needs no Fastify instance, so `toolgate mcp` over stdio gets the same limits.
 */
export async function setupRateLimit(config: Config, authEnabled: boolean, log: LimiterLog): Promise<RateLimiter | null> {
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
      log.warn({ err: { message: err.message } }, `rate-limit store (Redis) unavailable; failing ${failOpen ? 'open' : 'closed'}`);
    });
    await redis.connect().catch(() => {
      log.warn('rate-limit store (Redis) not reachable at start; will keep retrying');
    });
  }
  const store = redis ? new RedisStore(false, false, redis, 'toolgate-rate-') : new LocalStore(false, false, 5000);
  const client = redis;
  return {
    check: config.rateLimit > 0 ? toolCallCheck(counter(store, config.rateLimit, config.rateLimitWindowMs, failOpen)) : null,
    authFailures: authFailLimit > 0 ? authFailureLimiter(counter(store, authFailLimit, config.authFailWindowMs, false)) : null,
    store: redis ? 'redis' : 'memory',
    redisStatus: () => redis?.status ?? null,
    close: () => client?.disconnect(),
  };
}

function toolCallCheck(count: (key: string) => Count | Promise<Count>): BeforeHook {
  const storeDown = (call: CallInfo): never => {
    // Only reachable when failing closed: the store is down and the budget cannot be checked.
    if (call.responseHeaders) call.responseHeaders['retry-after'] = '1';
    throw E.rateStoreDown();
  };
  const spend = (call: CallInfo, result: Count): void => {
    const headers = call.responseHeaders;
    if (headers) {
      headers['x-ratelimit-limit'] = String(result.max);
      headers['x-ratelimit-remaining'] = String(result.remaining);
      headers['x-ratelimit-reset'] = String(result.ttlInSeconds);
    }
    if (result.current > result.max) {
      const after = Math.max(1, result.ttlInSeconds);
      if (headers) {
        headers['x-ratelimit-remaining'] = '0';
        headers['retry-after'] = String(after);
      }
      throw E.rateLimited(result.max, describeWindow(result.timeWindow), after, result.timeWindow);
    }
  };
  // Synchronous with the memory store: the pipeline then awaits nothing (src/pipeline/lifecycle.ts, step 7).
  return (call) => {
    let result: Count | Promise<Count>;
    try {
      result = count(rateKeyOf(call));
    } catch {
      return storeDown(call);
    }
    if (!(result instanceof Promise)) return spend(call, result);
    return result.then(
      (r) => spend(call, r),
      () => storeDown(call),
    );
  };
}

function authFailureLimiter(count: (key: string) => Count | Promise<Count>): AuthFailureLimiter {
  const blockedUntil = new Map<string, number>();
  const keyOf = (ip: string) => `authfail:${normalizeClientIp(ip)}`;
  return {
    blockedFor(clientIp) {
      // Asked before every authentication: nothing blocked needs no key (normalizing an address is a regex or two).
      if (blockedUntil.size === 0) return 0;
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
        result = await count(rateKey);
      } catch {
        // The store is down (failing closed): this attempt is refused anyway, it just goes uncounted.
        return;
      }
      if (result.remaining > 0) return;
      if (blockedUntil.size >= MAX_BLOCKED) {
        const now = Date.now();
        for (const [k, until] of blockedUntil) if (until <= now) blockedUntil.delete(k);
        if (blockedUntil.size >= MAX_BLOCKED) blockedUntil.delete(blockedUntil.keys().next().value as string);
      }
      blockedUntil.set(rateKey, Date.now() + Math.max(1, result.ttlMs));
    },
  };
}

function describeWindow(ms: number): string {
  if (ms === 60_000) return 'minute';
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
