// buildApp(config) -> a ready Fastify instance (no listen), so tests drive it with inject or a port.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { defaultInstanceId, type Config } from './config.js';
import { E } from './errors.js';
import { bareContext, errorEnvelope, shortenText, ToolError, type Envelope } from './envelope.js';
import type { CgroupFs } from './exec/cgroup.js';
import type { AuditLog } from './ops/audit.js';
import type { Authenticator, TokenEntry } from './ops/auth.js';
import type { Metrics } from './ops/metrics.js';
import { lazyRequestLogger, loggerOptions, registerHttpOperations } from './ops/operations.js';
import type { Projects } from './ops/projects.js';
import type { Pipeline } from './pipeline/execute-tool.js';
import type { PolicyService } from './pipeline/policy-gate.js';
import { openService } from './pipeline/service.js';
import type { AfterHook, BeforeHook } from './tools/call.js';
import { registerAttachments } from './transports/attachments.js';
import { registerApprovals } from './transports/approvals.js';
import { registerConsole } from './transports/console.js';
import { registerDocs } from './transports/docs.js';
import { refuseToolCall, registerHttpGate, toolCallOf } from './transports/http-gate.js';
import { registerMcp } from './transports/mcp.js';
import { registerRest, sendEnvelope } from './transports/rest.js';
import { registerWebSocket } from './transports/ws.js';
import { VERSION } from './version.js';
import type { Resolver } from './web/fetch.js';
import type { Workspace } from './workspace/workspace.js';

export { VERSION };


export interface Toolgate {
  config: Config;
  /** The single workspace (single-project mode); null in multi-project mode (see projects). */
  workspace: Workspace | null;
  /** Workspaces by project (lazily opened in multi-project mode). */
  projects: Projects;
  auth: Authenticator;
  audit: AuditLog;
  /** null when TOOLGATE_METRICS=false; `metrics.approvals` counts approval outcomes. */
  metrics: Metrics | null;
  /** TOOLGATE_POLICY and the approval requests. */
  policy: PolicyService;
  /** executeTool for every door (auth, project, policy, rate limit, audit, metrics). */
  pipeline: Pipeline;
  /** Set when SIGTERM arrived: /readyz answers 503. */
  shuttingDown: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    toolgate: Toolgate;
  }
}

export interface BuildOptions {
  /** pino options or false; default: no logging (tests). */
  logger?: boolean | Record<string, unknown>;
  before?: BeforeHook[];
  after?: AfterHook[];
  /** Where audit lines go besides the file; default stdout when TOOLGATE_AUDIT_STDOUT is on, null for none. */
  auditStream?: NodeJS.WritableStream | null;
  /** Bearer tokens given directly (tests); TOOLGATE_TOKENS_FILE wins. */
  tokens?: readonly TokenEntry[];
  /** Where open descriptors are named (tests of a machine without /proc); default /proc/self/fd. */
  fdDir?: string;
  /** Where run_command looks for cgroups (tests of another host's layout); default /sys/fs/cgroup. */
  cgroupFs?: CgroupFs;
  /** The filesystem type run_command's overlay is mounted with (tests of a kernel without overlayfs). */
  overlayFsType?: string;
  /** Where web_fetch and web_search resolve host names (tests of DNS failures); default the system resolver. */
  resolver?: Resolver;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** An envelope for errors that happen before a tool is known (routing, body parsing). */
export function bareErrorEnvelope(req: FastifyRequest, err: ToolError): Envelope {
  return errorEnvelope(bareContext(String(req.id)), err);
}

function toEnvelopeError(err: FastifyError): ToolError {
  if (err instanceof ToolError) return err;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return E.bodyOverLimit();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return E.bodyNotJsonMediaType();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return E.bodyEmpty();
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return E.bodyNotJson();
    default:
      break;
  }
  if ((err as { validation?: unknown }).validation) return E.requestInvalid(err.message);
  if (err.statusCode === 400 || (err instanceof SyntaxError && 'body' in err)) return E.bodyNotJson();
  if (err.statusCode === 413) return E.bodyOverSizeLimit();
  if (err.statusCode === 415) return E.bodyNotJsonMediaType();
  return E.requestFailed();
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a control character in a header value such as
 * X-Request-Id, a malformed request line, headers over the limit): answered with the envelope instead of
 * Fastify's bare `{"error":"Bad Request"}`, then the connection is closed as Node would.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const e =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? E.headersOverLimit()
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? E.requestTimedOut()
        : E.requestNotHttp();
  const requestId = randomUUID();
  const body = JSON.stringify(errorEnvelope(bareContext(requestId), e));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${e.httpStatus} ${STATUS_CODES[e.httpStatus] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** Router refusals Fastify answers itself unless asked: a path segment over maxParamLength, a URL that does not decode. */
function frameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const url = shortenText(req.url.split('?')[0] ?? '', 100);
  const e =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? E.routeNameTooLong(url)
      : err.code === 'FST_ERR_BAD_URL'
        ? E.urlNotDecodable(url)
        : E.routeUnroutable(url);
  void reply.header('x-request-id', String(req.id));
  return sendEnvelope(reply, e.httpStatus, bareErrorEnvelope(req, e));
}

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
const zodCompilers = { buildValidator: () => validatorCompiler, buildSerializer: () => serializerCompiler } as unknown as CompilersFactory;

export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const logger = loggerOptions(opts.logger);
  const app = Fastify({
    logger,
    // Without a logger Fastify makes no child per request; with one, ours is made when a request first logs.
    ...(logger !== false && { childLoggerFactory: lazyRequestLogger }),
    logController: new LogController({ disableRequestLogging: !config.logRequests }),
    // The zod compilers from the start, so Fastify never loads its default ajv and serializer compilers.
    schemaController: { compilersFactory: zodCompilers },
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: false,
    clientErrorHandler: answerClientError,
    frameworkErrors: frameworkError,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  // Auth, projects, rate limit, audit, metrics (src/ops/) under the pipeline and its policy gate (src/pipeline/).
  const service = await openService(config, {
    version: VERSION,
    instanceId: config.instanceId ?? defaultInstanceId(),
    log: app.log,
    before: opts.before,
    after: opts.after,
    auditStream: opts.auditStream,
    tokens: opts.tokens,
    fdDir: opts.fdDir,
    cgroupFs: opts.cgroupFs,
    overlayFsType: opts.overlayFsType,
    resolver: opts.resolver,
  });
  const { pipeline, policy, projects, auth, audit, metrics } = service;
  // Before Fastify waits for the requests in flight: a call waiting for a person must not hold up the shutdown,
  // and commands die with the service, so theirs answer at once.
  app.addHook('preClose', (done) => {
    service.stopAccepting();
    done();
  });
  app.addHook('onClose', async () => service.close());

  if (service.weakSandbox) app.log.warn('/proc/self/fd is missing: TOOLGATE_ALLOW_WEAK_SANDBOX accepts the weaker path-string check (a directory swapped for a symlink during a call can redirect it)');

  app.addHook('onRequest', (req, reply, done) => {
    void reply.header('x-request-id', String(req.id));
    done();
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const e = toEnvelopeError(err);
    if (e.code === 'EXECUTION_ERROR') req.log.error({ err }, 'unhandled error');
    const tool = toolCallOf(req);
    // A tool call whose body did not parse still gets its audit line.
    if (tool) return sendEnvelope(reply, e.httpStatus, refuseToolCall(pipeline, req, reply, tool, e).envelope);
    return sendEnvelope(reply, e.httpStatus, bareErrorEnvelope(req, e));
  });
  app.setNotFoundHandler((req: FastifyRequest, reply: FastifyReply) => {
    const e = E.routeNotFound(req.method, shortenText(req.url.split('?')[0] ?? '', 200));
    return sendEnvelope(reply, 404, bareErrorEnvelope(req, e));
  });

  // The browser guard and the token gate in front of every HTTP door; then probes and /metrics.
  const gate = registerHttpGate(app, { pipeline, authEnabled: auth.enabled, config });
  registerHttpOperations(app, service, config, VERSION);
  app.decorate('toolgate', { config, workspace: projects.single, projects, auth, audit, metrics, policy, pipeline, shuttingDown: false } satisfies Toolgate);

  // Records the routes for the OpenAPI document (built, with Swagger UI, when /docs is first asked for).
  registerDocs(app, { version: VERSION });

  await registerRest(app, { pipeline, toolsFor: (req) => policy.toolsFor(req.principal, req.headers['x-toolgate-switches']) });
  await registerMcp(app, { pipeline, policy, version: VERSION, gate });
  await registerWebSocket(app, { pipeline, maxMessageBytes: config.bodyLimitBytes, confirmMaxWaitS: config.approvalMaxWaitS });
  await registerApprovals(app, { policy, authEnabled: auth.enabled });
  await registerConsole(app);
  await registerAttachments(app, { pipeline });

  await app.ready();
  return app;
}
