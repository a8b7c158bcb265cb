// The gate in front of every HTTP door (REST, MCP over HTTP, the WebSocket upgrade): the browser guard, then
// the token, checked by the pipeline's authentication before a door reads anything. A door hands the gate's
// admission to the pipeline, so a call is authenticated once (docs/operations.md, "Auth").
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { Config } from '../config.js';
import { bareContext, envelopeJson, errorEnvelope, type ToolError } from '../envelope.js';
import { credentialsOf, type Principal } from '../ops/auth.js';
import { createBrowserGuard } from '../ops/browser-guard.js';
import type { Admission, AuthResult, Pipeline, ToolCallOutcome } from '../pipeline/execute-tool.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of a gated request (null without auth), for the routes that are not tool calls. */
    principal: Principal | null;
    /** The pipeline's admission of a gated request, handed back to it with the call (null before the gate). */
    admission: Admission | null;
  }
  interface FastifyContextConfig {
    /** Set on tool-call routes: the tool's name, or true when the route takes it as its `:tool` parameter. */
    toolCall?: string | true;
    /**
     * The door reads its body before the gate decides (MCP: a refused tools/call is audited with its tool's
     * name) and answers a refusal in its own protocol: its route runs `HttpGate.afterBody`.
     */
    gateAfterBody?: true;
  }
}

/** How a door that is gated after its body answers a refusal. */
export type GateRefusal = (req: FastifyRequest, reply: FastifyReply, error: ToolError, headers: Record<string, string>) => FastifyReply;

/**
 * What the gate found for this request: a door hands it to the pipeline so the token is checked once. Kept on the
 * request (the pipeline accepts only admissions it made), not in a WeakMap: an insert per request cost every call.
 */
export function gateAdmission(req: FastifyRequest): Admission | undefined {
  return req.admission ?? undefined;
}

/** The tool a tool-call route calls (its config names it, or its `:tool` parameter); null for other routes. */
export function toolCallOf(req: FastifyRequest): string | null {
  const toolCall = req.routeOptions.config.toolCall;
  if (typeof toolCall === 'string') return toolCall;
  if (toolCall === true) return (req.params as { tool?: string } | undefined)?.tool ?? null;
  return null;
}

/** A tool call refused before the pipeline ran it (no token, a body that did not parse): its envelope and audit line. */
export function refuseToolCall(pipeline: Pipeline, req: FastifyRequest, reply: FastifyReply, tool: string, error: ToolError): ToolCallOutcome {
  return pipeline.refuse({ authorization: undefined, clientIp: req.ip, requestId: String(req.id) }, tool, error, reply.elapsedTime);
}

export interface GateOptions {
  pipeline: Pipeline;
  /** Tokens are configured: gated routes need one. */
  authEnabled: boolean;
  config: Pick<Config, 'allowedHosts' | 'allowedOrigins' | 'host'>;
}

export interface HttpGate {
  /** The gate as a route's preHandler, for a door gated after its body; `refuse` answers in the door's protocol. */
  afterBody(refuse: GateRefusal): preHandlerHookHandler;
}

export function registerHttpGate(app: FastifyInstance, opts: GateOptions): HttpGate {
  const { pipeline, authEnabled } = opts;

  /** Answers a request the gate refused: the envelope (a tool call's with its audit line), upgrades closed. */
  const refuseAtGate = (req: FastifyRequest, reply: FastifyReply, error: ToolError, headers: Record<string, string> = {}) => {
    const tool = toolCallOf(req);
    const envelope = tool ? refuseToolCall(pipeline, req, reply, tool, error).envelope : errorEnvelope(bareContext(String(req.id)), error);
    for (const [k, v] of Object.entries(headers)) void reply.header(k, v);
    // A refused WebSocket upgrade has no HTTP server behind its socket to end it after the answer: end it
    // here, or it would stay open and hold shutdown.
    if (req.headers.upgrade !== undefined) {
      void reply.header('connection', 'close');
      reply.raw.once('finish', () => req.raw.socket.end());
    }
    return reply.code(error.httpStatus).type('application/json; charset=utf-8').send(envelopeJson(envelope));
  };

  // The browser gate, before any other (docs/operations.md, "Browsers"): a Host the service does not answer
  // to (DNS rebinding) or a foreign page's Origin is refused on every door, the WebSocket upgrade included.
  const browserGuard = createBrowserGuard({ allowedHosts: opts.config.allowedHosts ?? [], allowedOrigins: opts.config.allowedOrigins ?? [], listenHost: opts.config.host });
  app.decorateRequest('principal', null);
  app.decorateRequest('admission', null);

  // Then the token, before the body is read: one hook with Fastify's `done` callback, not async ones, and
  // nothing allocated per request while the token is admitted synchronously.
  app.addHook('onRequest', (req, reply, done) => {
    // Read once: Fastify builds req.routeOptions anew at every read.
    const headers = req.headers;
    if (!isProbe(req)) {
      const refused = browserGuard.check(headers.host, headers.origin);
      if (refused) return void refuseAtGate(req, reply, refused);
    }
    if (!authEnabled) return done();
    const route = req.routeOptions;
    if (route.config.gateAfterBody || !isV1(req, route.url)) return done();
    authenticate(pipeline, req, reply, refuseAtGate, done);
  });

  return {
    // A door gated after its body (MCP) is authenticated by the same function once its body is parsed.
    afterBody: (refuse) => (req, reply, done) => {
      if (!authEnabled) return done();
      authenticate(pipeline, req, reply, refuse, done);
    },
  };
}

/** The pipeline's authentication of a request: its admission kept for the door, or `refuse` answers. */
function authenticate(pipeline: Pipeline, req: FastifyRequest, reply: FastifyReply, refuse: GateRefusal, done: (err?: Error) => void): void {
  const result = pipeline.authenticate(credentialsOf(req.headers), req.ip);
  if (!(result instanceof Promise)) return settle(req, reply, result, refuse, done);
  result.then(
    (r) => settle(req, reply, r, refuse, done),
    (err: unknown) => done(err as Error),
  );
}

function settle(req: FastifyRequest, reply: FastifyReply, result: AuthResult, refuse: GateRefusal, done: () => void): void {
  if (!result.ok) return void refuse(req, reply, result.error, result.headers);
  req.admission = result.admission;
  req.principal = result.principal;
  done();
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
function isV1(req: FastifyRequest, route: string | undefined): boolean {
  if (route !== undefined && (route === '/v1' || route.startsWith('/v1/'))) return true;
  const p = req.url.split('?')[0] ?? '';
  return /^\/+v1(\/|$)/i.test(p);
}
