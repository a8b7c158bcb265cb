// The operations layer around the one execution path: auth at the /v1 door, project resolution, rate
// limit and risk checks as executor before-hooks, audit and metrics as after-hooks, probes and /metrics.
// buildApp calls prepareOperations (before Fastify exists) and registerOperations (after).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { ToolError } from '../envelope.js';
import type { AfterHook, BeforeHook, CallInfo } from '../tools/execute.js';
import type { CallInfoFor } from '../transports/rest.js';
import type { WorkspaceLimits } from '../workspace/workspace.js';
import { AuditLog } from './audit.js';
import { assertRiskAllowed, Authenticator, loadTokens, REDACT_PATHS, type Principal, type TokenEntry } from './auth.js';
import { registerHealth } from './health.js';
import { createMetrics, type Metrics } from './metrics.js';
import { PolicyService } from './policy.js';
import { Projects } from './projects.js';
import { setupRateLimit, type RateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of a /v1 request (null without auth). */
    principal: Principal | null;
  }
}

export interface Operations {
  instanceId: string;
  projects: Projects;
  auth: Authenticator;
  audit: AuditLog;
  /** null when TOOLGATE_METRICS=false. */
  metrics: Metrics | null;
  /** null when TOOLGATE_RATE_LIMIT=0; set by registerOperations. */
  rateLimiter: RateLimiter | null;
  /** TOOLGATE_POLICY and the approval store. */
  policy: PolicyService;
}

export interface PrepareOptions {
  version: string;
  instanceId: string;
  limits: WorkspaceLimits;
  /** Audit lines to this stream; default stdout when TOOLGATE_AUDIT_STDOUT is on. */
  auditStream?: NodeJS.WritableStream | null | undefined;
  /** Tokens given directly (tests), used when no TOOLGATE_TOKENS_FILE is set. */
  tokens?: readonly TokenEntry[] | undefined;
}

/** Everything that needs no Fastify instance: tokens, workspaces, metrics registry, audit writer. */
export async function prepareOperations(config: Config, opts: PrepareOptions): Promise<Operations> {
  const metrics = config.metrics ? createMetrics(opts.version) : null;
  const tokens = config.tokensFile ? await loadTokens(config.tokensFile) : (opts.tokens ?? []);
  const projects = await Projects.open({ config, limits: opts.limits, instanceId: opts.instanceId, observer: metrics?.observer });
  const audit = new AuditLog({
    file: config.audit,
    stream: opts.auditStream !== undefined ? opts.auditStream : config.auditStdout ? process.stdout : null,
    instanceId: opts.instanceId,
    refusalWindowMs: config.authFailWindowMs,
  });
  const policy = await PolicyService.open({ config, projects, audit, metrics });
  return { instanceId: opts.instanceId, projects, auth: new Authenticator(tokens), audit, metrics, rateLimiter: null, policy };
}

/** pino options with the secrets redacted (Authorization, cookies, tokens). */
export function loggerOptions(logger: boolean | Record<string, unknown> | undefined): false | Record<string, unknown> {
  if (!logger) return false;
  const redact = { paths: REDACT_PATHS, censor: '[redacted]' };
  return logger === true ? { redact } : { redact, ...logger };
}

export interface Wiring {
  before: BeforeHook[];
  after: AfterHook[];
  callInfoFor: CallInfoFor;
}

const responseHeaders = new WeakMap<FastifyRequest, Record<string, string>>();

/** Hooks, routes and the per-request call info. Call once, before the transports are registered. */
export async function registerOperations(app: FastifyInstance, ops: Operations, config: Config, version: string): Promise<Wiring> {
  const { auth, projects, audit, metrics } = ops;

  ops.rateLimiter = await setupRateLimit(app, config, auth.enabled);
  const limiter = ops.rateLimiter;
  const authFailures = limiter?.authFailures ?? null;

  app.decorateRequest('principal', null);
  // The per-request hooks take Fastify's `done` callback instead of being async: no promise per hook and request.
  app.addHook('onRequest', (req, reply, done) => {
    if (!auth.enabled || !isV1(req)) return done();
    // A blocked address is refused before its token is hashed, a valid one too: were valid tokens let
    // through, each guess would still be answered (429 wrong, 200 right) and the limit would stop nothing.
    const wait = authFailures?.blockedFor(req.ip) ?? 0;
    if (wait > 0) {
      void reply.header('retry-after', String(wait));
      return done(new ToolError('RATE_LIMITED', `Too many failed authentications from this address; retry in ${wait} s.`, { retry_after_s: wait }));
    }
    try {
      req.principal = auth.authenticate(req.headers.authorization);
    } catch (err) {
      void reply.header('www-authenticate', 'Bearer realm="toolgate"');
      req.log.info({ reason: (err as Error).message }, 'authentication failed');
      if (!authFailures) return done(err as Error);
      // Counted before the answer, so the next attempt already sees the block.
      void authFailures.fail(req.ip).finally(() => done(err as Error));
      return;
    }
    done();
  });
  app.addHook('onSend', (req, reply, payload, done) => {
    // Headers the executor hooks asked for (rate-limit budget), on whatever the door answers.
    const headers = responseHeaders.get(req);
    if (headers) for (const [k, v] of Object.entries(headers)) void reply.header(k, v);
    // While shutting down, an answer ends its keep-alive connection, so close() need not wait for it to idle out.
    if (app.toolgate.shuttingDown) void reply.header('connection', 'close');
    done(null, payload);
  });

  audit.onError = (err) => app.log.error({ err }, 'audit line could not be written');
  ops.policy.startSweeper((err) => app.log.error({ err }, 'approval sweep failed'));
  // Before Fastify waits for the requests in flight: a call waiting for a person must not hold up the shutdown.
  app.addHook('preClose', (done) => {
    ops.policy.stopWaiting();
    done();
  });
  app.addHook('onClose', async () => {
    await ops.policy.close();
    await audit.flush();
    await projects.close();
  });

  if (metrics) {
    app.addHook('onResponse', (req, reply, done) => {
      metrics.recordHttp(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
    app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
    app.addHook('onClose', async () => metrics.registry.clear());
  }

  registerHealth(app, {
    version,
    instanceId: ops.instanceId,
    probeDir: projects.single?.stateDir ?? config.stateDir ?? projects.root ?? config.root,
    rateLimitStore: () => ({ store: limiter?.store ?? 'off', redis: limiter?.redisStatus() ?? null }),
  });

  const authorize: BeforeHook = (call, tool) => assertRiskAllowed(auth.principal(call.actor), tool.name, tool.risk);
  const before: BeforeHook[] = [authorize, ...(limiter?.check ? [limiter.check] : [])];
  const after: AfterHook[] = [...(metrics ? [metrics.recordCall] : []), (call, name, outcome) => audit.record(call, name, outcome)];

  const callInfoFor: CallInfoFor = async (req, urlProject) => {
    const principal = req.principal;
    const header = req.headers['x-project-id'];
    const headerProject = typeof header === 'string' && header !== '' ? header : undefined;
    if (urlProject !== undefined && headerProject !== undefined && urlProject !== headerProject) {
      throw new ToolError('INVALID_PARAM', 'The X-Project-Id header names another project than the URL; send one of them.');
    }
    const ws = await projects.workspaceFor(urlProject ?? headerProject, principal);
    const headers: Record<string, string> = {};
    responseHeaders.set(req, headers);
    const call: CallInfo = {
      ws,
      requestId: String(req.id),
      actor: principal?.id ?? null,
      clientIp: req.ip,
      workspaceFor: projects.multi ? (other: string) => projects.project(other, principal) : undefined,
      responseHeaders: headers,
      switches: req.headers['x-toolgate-switches'],
      waitS: preferWait(req.headers.prefer),
    };
    return call;
  };

  return { before, after, callInfoFor };
}

/** `Prefer: wait=N` (RFC 7240), seconds; undefined when absent or malformed. */
export function preferWait(header: string | string[] | undefined): number | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  const m = text === undefined ? null : /(?:^|[,;\s])wait\s*=\s*"?(\d{1,6})"?/i.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** /v1 requests need a token: by route template, and by raw path for requests no route matched. */
function isV1(req: FastifyRequest): boolean {
  const route = req.routeOptions.url;
  if (route !== undefined && (route === '/v1' || route.startsWith('/v1/'))) return true;
  const p = req.url.split('?')[0] ?? '';
  return /^\/+v1(\/|$)/i.test(p);
}
