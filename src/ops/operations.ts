// The operations the pipeline calls (src/pipeline/): tokens, projects, rate limit, audit and metrics, opened
// together before any door exists; and, for the HTTP doors, the probes, /metrics and the shutdown header.
// Nothing here knows the pipeline: it imports only what lies below it.
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import { ConfigError, type Config } from '../config.js';
import { locksSettled } from '../workspace/locks.js';
import type { ServiceRuntime } from '../workspace/runtime.js';
import type { WorkspaceLimits } from '../workspace/workspace.js';
import { AuditLog } from './audit.js';
import { Authenticator, loadTokens, REDACT_PATHS, type TokenEntry } from './auth.js';
import { registerHealth } from './health.js';
import { createMetrics, type Metrics } from './metrics.js';
import { Projects } from './projects.js';
import { setupRateLimit, type LimiterLog, type RateLimiter } from './rate-limit.js';

/** Where the operations log: the app's pino logger, or stderr's for `toolgate mcp`. */
export interface OpsLog extends LimiterLog {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface Operations {
  instanceId: string;
  /** What this service owns and no other shares: sandbox mode, lock queues, caches, worker pools. */
  runtime: ServiceRuntime;
  projects: Projects;
  auth: Authenticator;
  audit: AuditLog;
  /** null when TOOLGATE_METRICS=false. */
  metrics: Metrics | null;
  /** null when TOOLGATE_RATE_LIMIT=0 and no failed-authentication limit applies. */
  rateLimiter: RateLimiter | null;
}

export interface PrepareOptions {
  version: string;
  instanceId: string;
  limits: WorkspaceLimits;
  /** The service's own state (src/workspace/runtime.ts), reached by its workspaces. */
  runtime: ServiceRuntime;
  log: OpsLog;
  /** Audit lines to this stream; default stdout when TOOLGATE_AUDIT_STDOUT is on. */
  auditStream?: NodeJS.WritableStream | null | undefined;
  /** Tokens given directly (tests), used when no TOOLGATE_TOKENS_FILE is set. */
  tokens?: readonly TokenEntry[] | undefined;
}

/** Tokens, workspaces, metrics registry, audit writer and rate limiter: everything a door does not own. */
export async function prepareOperations(config: Config, opts: PrepareOptions): Promise<Operations> {
  const metrics = config.metrics ? createMetrics(opts.version) : null;
  const tokens = config.tokensFile ? await loadTokens(config.tokensFile) : (opts.tokens ?? []);
  if (config.selfApprove && tokens.length > 0) {
    throw new ConfigError('TOOLGATE_SELF_APPROVE applies only without tokens; with tokens, mark the token that may decide its own calls `self_approve: true` in the tokens file.');
  }
  const projects = await Projects.open({ config, limits: opts.limits, instanceId: opts.instanceId, runtime: opts.runtime, observer: metrics?.observer });
  const audit = new AuditLog({
    file: config.audit,
    stream: opts.auditStream !== undefined ? opts.auditStream : config.auditStdout ? process.stdout : null,
    instanceId: opts.instanceId,
    refusalWindowMs: config.authFailWindowMs,
  });
  audit.onError = (err) => opts.log.error({ err }, 'audit line could not be written');
  const auth = new Authenticator(tokens);
  const rateLimiter = await setupRateLimit(config, auth.enabled, opts.log);
  return { instanceId: opts.instanceId, runtime: opts.runtime, projects, auth, audit, metrics, rateLimiter };
}

/** Ends what the operations hold open, after the calls in flight have answered. */
export async function closeOperations(ops: Operations): Promise<void> {
  await ops.rateLimiter?.close();
  await ops.audit.close();
  // Released locks whose directories are still being removed (src/workspace/locks.ts).
  await locksSettled(ops.runtime);
  await ops.projects.close();
  ops.metrics?.registry.clear();
}

/** pino options with the secrets redacted (Authorization, cookies, tokens). */
export function loggerOptions(logger: boolean | Record<string, unknown> | undefined): false | Record<string, unknown> {
  if (!logger) return false;
  const redact = { paths: REDACT_PATHS, censor: '[redacted]' };
  return logger === true ? { redact } : { redact, ...logger };
}

/**
 * A request's logger, made when the request first logs (Fastify's childLoggerFactory). Fastify makes a pino child
 * for every request, its bindings serialized, and most requests never log: request logging is off by default
 * (docs/development.md, "Work done once"). Once made it is the child Fastify would have made, so lines are alike.
 */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, opts) => new LazyChildLogger(logger, bindings, opts) as unknown as FastifyBaseLogger;

type ChildArgs = Parameters<FastifyBaseLogger['child']>;
type LogArgs = Parameters<FastifyBaseLogger['info']>;

/** Its methods are the prototype's: nothing is made per request but the object itself. */
class LazyChildLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: ChildArgs[0],
    private readonly opts: NonNullable<ChildArgs[1]>,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.opts));
  }

  get level(): string {
    return this.made?.level ?? this.opts.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...args: LogArgs): void {
    this.logger.fatal(...args);
  }
  error(...args: LogArgs): void {
    this.logger.error(...args);
  }
  warn(...args: LogArgs): void {
    this.logger.warn(...args);
  }
  info(...args: LogArgs): void {
    this.logger.info(...args);
  }
  debug(...args: LogArgs): void {
    this.logger.debug(...args);
  }
  trace(...args: LogArgs): void {
    this.logger.trace(...args);
  }
  silent(...args: LogArgs): void {
    this.logger.silent(...args);
  }
  child(...args: ChildArgs): FastifyBaseLogger {
    return this.logger.child(...args);
  }
}

/** The HTTP side of the operations: probes, /metrics with its request counts, and the shutdown's Connection: close. */
export function registerHttpOperations(app: FastifyInstance, ops: Operations, config: Config, version: string): void {
  const { projects, metrics, rateLimiter: limiter } = ops;
  app.addHook('onSend', (_req, reply, payload, done) => {
    // While shutting down, an answer ends its keep-alive connection, so close() need not wait for it to idle out.
    if (app.toolgate.shuttingDown) void reply.header('connection', 'close');
    done(null, payload);
  });

  if (metrics) {
    app.addHook('onResponse', (req, reply, done) => {
      metrics.recordHttp(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
    app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  }

  registerHealth(app, {
    version,
    instanceId: ops.instanceId,
    probeDir: projects.single?.stateDir ?? config.stateDir ?? projects.root ?? config.root,
    rateLimitStore: () => ({ store: limiter?.store ?? 'off', redis: limiter?.redisStatus() ?? null }),
  });
}
