// The operations layer: tokens, projects, rate limit, audit and metrics put together into the pipeline
// every door calls (src/pipeline/), the /v1 token gate, probes and /metrics.
// buildApp calls prepareOperations (before Fastify exists) and registerOperations (after).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConfigError, type Config } from '../config.js';
import { bareContext, errorEnvelope, ToolError } from '../envelope.js';
import { createPipeline, type Admission, type AuthResult, type Pipeline } from '../pipeline/execute-tool.js';
import { createExecutor, type AfterHook, type BeforeHook, type Executor } from '../tools/execute.js';
import { locksSettled } from '../workspace/locks.js';
import type { WorkspaceLimits } from '../workspace/workspace.js';
import { AuditLog } from './audit.js';
import { createBrowserGuard } from './browser-guard.js';
import { assertRiskAllowed, Authenticator, credentialsOf, loadTokens, REDACT_PATHS, type Principal, type TokenEntry } from './auth.js';
import { registerHealth } from './health.js';
import { createMetrics, type Metrics } from './metrics.js';
import { PolicyService } from './policy.js';
import { Projects } from './projects.js';
import { setupRateLimit, type RateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of a /v1 request (null without auth), for the routes that are not tool calls. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** Set on tool-call routes: the tool's name, or true when the route takes it as its `:tool` parameter. */
    toolCall?: string | true;
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
  if (config.selfApprove && tokens.length > 0) {
    throw new ConfigError('TOOLGATE_SELF_APPROVE applies only without tokens; with tokens, mark the token that may decide its own calls `self_approve: true` in the tokens file.');
  }
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
  executor: Executor;
  pipeline: Pipeline;
}

export interface ExtraHooks {
  before?: readonly BeforeHook[] | undefined;
  after?: readonly AfterHook[] | undefined;
}

const admissionOf = new WeakMap<FastifyRequest, Admission>();

/** What the /v1 gate found for this request: a door hands it to the pipeline so the token is checked once. */
export function gateAdmission(req: FastifyRequest): Admission | undefined {
  return admissionOf.get(req);
}

/** Hooks, routes and the pipeline every door calls. Call once, before the transports are registered. */
export async function registerOperations(app: FastifyInstance, ops: Operations, config: Config, version: string, extra: ExtraHooks = {}): Promise<Wiring> {
  const { auth, projects, audit, metrics } = ops;

  ops.rateLimiter = await setupRateLimit(config, auth.enabled, app.log);
  const limiter = ops.rateLimiter;
  if (limiter) app.addHook('onClose', async () => limiter.close());

  const authorize: BeforeHook = (call, tool) => assertRiskAllowed(auth.principal(call.actor), tool.name, tool.risk);
  // A tool this service does not offer (run_command with TOOLGATE_EXEC=off) is refused before its risk and policy.
  const offered: BeforeHook = (_call, tool) => {
    if (tool.offered && !tool.offered(config)) throw new ToolError('NOT_FOUND', `Tool '${tool.name}' is not offered by this service (off in its settings; docs/run-command.md for run_command).`);
  };
  const before: BeforeHook[] = [offered, authorize, ...(extra.before ?? []), ...(limiter?.check ? [limiter.check] : [])];
  const after: AfterHook[] = [...(metrics ? [metrics.recordCall] : []), (call, name, outcome) => audit.record(call, name, outcome), ...(extra.after ?? [])];
  // The policy and approvals (./policy.ts) wrap the run of every validated call.
  const executor = createExecutor({ toolTimeoutMs: config.toolTimeoutMs, before, after, gate: ops.policy.gate });
  const pipeline = createPipeline({
    auth,
    projects,
    audit,
    authFailures: limiter?.authFailures ?? null,
    executor,
    selfApproveWithoutToken: config.selfApprove,
    logAuthFailure: (reason) => app.log.info({ reason }, 'authentication failed'),
  });

  /** Answers a request a gate refused: the envelope (a tool call's with its audit line), upgrades closed. */
  const refuseAtGate = (req: FastifyRequest, reply: FastifyReply, error: ToolError, headers: Record<string, string> = {}) => {
    const tool = toolCallOf(req);
    const envelope = tool
      ? pipeline.refuse({ authorization: undefined, clientIp: req.ip, requestId: String(req.id) }, tool, error, reply.elapsedTime).envelope
      : errorEnvelope(bareContext(String(req.id)), error);
    for (const [k, v] of Object.entries(headers)) void reply.header(k, v);
    // A refused WebSocket upgrade has no HTTP server behind its socket to end it after the answer: end it
    // here, or it would stay open and hold shutdown.
    if (req.headers.upgrade !== undefined) {
      void reply.header('connection', 'close');
      reply.raw.once('finish', () => req.raw.socket.end());
    }
    return reply.code(error.httpStatus).type('application/json; charset=utf-8').serializer(JSON.stringify).send(envelope);
  };

  // The browser gate, before any other (docs/operations.md, "Browsers"): a Host the service does not answer
  // to (DNS rebinding) or a foreign page's Origin is refused on every door, the WebSocket upgrade included.
  const browserGuard = createBrowserGuard({ allowedHosts: config.allowedHosts ?? [], allowedOrigins: config.allowedOrigins ?? [], listenHost: config.host });
  // Then the /v1 gate: refuses a missing or wrong token before the body is read (the pipeline checks again per
  // call). One hook with Fastify's `done` callback, not async ones: no promise per hook and request.
  app.decorateRequest('principal', null);
  const admitted = (req: FastifyRequest, reply: FastifyReply, result: AuthResult, done: () => void) => {
    if (!result.ok) return void refuseAtGate(req, reply, result.error, result.headers);
    admissionOf.set(req, result.admission);
    req.principal = result.principal;
    done();
  };
  app.addHook('onRequest', (req, reply, done) => {
    if (!isProbe(req)) {
      const refused = browserGuard.check(req.headers.host, req.headers.origin);
      if (refused) return void refuseAtGate(req, reply, refused);
    }
    if (!auth.enabled || !isV1(req)) return done();
    const result = pipeline.authenticate(credentialsOf(req.headers), req.ip);
    if (!(result instanceof Promise)) return admitted(req, reply, result, done);
    result.then(
      (r) => admitted(req, reply, r, done),
      (err: unknown) => done(err as Error),
    );
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
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
    await audit.close();
    // Released locks whose directories are still being removed (src/workspace/locks.ts).
    await locksSettled();
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

  return { executor, pipeline };
}

/** The tool a tool-call route calls (its config names it, or its `:tool` parameter); null for other routes. */
export function toolCallOf(req: FastifyRequest): string | null {
  const toolCall = req.routeOptions.config.toolCall;
  if (typeof toolCall === 'string') return toolCall;
  if (toolCall === true) return (req.params as { tool?: string } | undefined)?.tool ?? null;
  return null;
}

/**
 * Probes and metrics answer any Host: the kubelet and Prometheus reach a pod by its IP address, which no
 * deployment lists, and these routes change nothing and show no workspace content.
 */
const PROBES = new Set(['/livez', '/readyz', '/healthz', '/metrics']);
function isProbe(req: FastifyRequest): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && PROBES.has(req.url.split('?')[0] ?? '');
}

/** /v1 requests need a token: by route template, and by raw path for requests no route matched. */
function isV1(req: FastifyRequest): boolean {
  const route = req.routeOptions.url;
  if (route !== undefined && (route === '/v1' || route.startsWith('/v1/'))) return true;
  const p = req.url.split('?')[0] ?? '';
  return /^\/+v1(\/|$)/i.test(p);
}
