// WebSocket door at /v1/ws (seed 003): `tool_call {call_id, tool_name, arguments, timeout_seconds?}` ->
// `tool_result {call_id, result}` with the envelope. Calls run concurrently on one connection and are
// answered as they finish; every call goes through the pipeline. The token is checked by the /v1 gate
// before the upgrade (Authorization header, or the `toolgate.bearer.<token>` subprotocol for browsers).
import { setMaxListeners } from 'node:events';
import fastifyWebsocket, { type WebSocket } from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { credentialsOf } from '../ops/auth.js';
import { gateAdmission } from '../ops/operations.js';
import type { Pipeline } from '../pipeline/execute-tool.js';

/** Calls one connection may have running; more are answered with an error message, not queued. */
export const MAX_IN_FLIGHT = 32;
/** Keep-alive: a ping every interval; a connection that missed the previous pong is closed. */
const PING_INTERVAL_MS = 30_000;
/** Accepted subprotocol, echoed so that a browser that offered it (with its bearer) accepts the upgrade. */
export const WS_SUBPROTOCOL = 'toolgate.v1';
const DEFAULT_TIMEOUT_S = 30;

const ToolCallMessage = z.object({
  type: z.literal('tool_call'),
  call_id: z.string().min(1).max(128),
  tool_name: z.string().min(1).max(128),
  arguments: z.record(z.string(), z.unknown()).optional(),
  timeout_seconds: z.number().positive().max(3600).optional(),
});

export interface WsOptions {
  pipeline: Pipeline;
  /** Largest message accepted (bytes); a larger one closes the connection with 1009. */
  maxMessageBytes: number;
}

function send(socket: WebSocket, message: object): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

function errorMessage(code: string, message: string, callId?: string): object {
  return { type: 'error', ...(callId !== undefined && { call_id: callId }), error: { code, message } };
}

export async function registerWebSocket(app: FastifyInstance, opts: WsOptions): Promise<void> {
  await app.register(fastifyWebsocket, {
    options: {
      maxPayload: opts.maxMessageBytes,
      // Never echo the bearer subprotocol; a client that offers subprotocols must offer toolgate.v1 too.
      handleProtocols: (protocols) => (protocols.has(WS_SUBPROTOCOL) ? WS_SUBPROTOCOL : false),
    },
  });

  app.get('/v1/ws', { websocket: true, schema: { hide: true } }, (socket, req) => handleConnection(socket, req, opts.pipeline));
}

function handleConnection(socket: WebSocket, req: FastifyRequest, pipeline: Pipeline): void {
  const inFlight = new Set<string>();
  // Calls still running when the connection ends are stopped (the executor sees the client go away).
  const gone = new AbortController();
  // Every call in flight listens on this one signal.
  setMaxListeners(MAX_IN_FLIGHT + 1, gone.signal);
  const query = req.query as { project?: string } | undefined;
  const header = req.headers['x-project-id'];
  const project = typeof header === 'string' && header !== '' ? header : query?.project || undefined;
  const switches = typeof req.headers['x-toolgate-switches'] === 'string' ? req.headers['x-toolgate-switches'] : undefined;

  let alive = true;
  socket.on('pong', () => (alive = true));
  const ping = setInterval(() => {
    if (!alive) return socket.terminate();
    alive = false;
    socket.ping();
  }, PING_INTERVAL_MS);
  ping.unref();
  socket.on('close', () => {
    clearInterval(ping);
    gone.abort();
  });

  socket.on('message', (raw, isBinary) => {
    let msg: unknown;
    try {
      msg = JSON.parse(isBinary ? Buffer.from(raw as Buffer).toString('utf8') : String(raw));
    } catch {
      return send(socket, errorMessage('INVALID_PARAM', 'The message is not valid JSON; send a JSON object with a type (tool_call).'));
    }
    const type = msg && typeof msg === 'object' ? (msg as { type?: unknown }).type : undefined;
    if (type === 'ping') return send(socket, { type: 'pong' });
    const parsed = ToolCallMessage.safeParse(msg);
    if (!parsed.success) {
      const callId = (msg as { call_id?: unknown } | null)?.call_id;
      const issue = parsed.error.issues[0];
      const what = type === 'tool_call' ? `'${issue?.path.join('.') || 'message'}': ${issue?.message ?? 'invalid'}` : `unknown message type ${JSON.stringify(type ?? null)}`;
      return send(
        socket,
        errorMessage('INVALID_PARAM', `Invalid message (${what}); send {"type":"tool_call","call_id","tool_name","arguments","timeout_seconds"?}.`, typeof callId === 'string' ? callId : undefined),
      );
    }
    const call = parsed.data;
    if (inFlight.has(call.call_id)) return send(socket, errorMessage('INVALID_PARAM', `Call '${call.call_id}' is still running; use a new call_id per call.`, call.call_id));
    if (inFlight.size >= MAX_IN_FLIGHT) return send(socket, errorMessage('RATE_LIMITED', `${MAX_IN_FLIGHT} calls are already running on this connection; wait for a result before sending more.`, call.call_id));
    inFlight.add(call.call_id);
    void pipeline
      .executeTool(
        {
          authorization: credentialsOf(req.headers),
          admitted: gateAdmission(req),
          clientIp: req.ip,
          projectId: project,
          switches,
          requestId: `${String(req.id)}:${call.call_id}`,
          signal: gone.signal,
          timeoutMs: (call.timeout_seconds ?? DEFAULT_TIMEOUT_S) * 1000,
        },
        call.tool_name,
        call.arguments ?? {},
      )
      .then((outcome) => send(socket, { type: 'tool_result', call_id: call.call_id, result: outcome.envelope }))
      .catch(() => send(socket, errorMessage('EXECUTION_ERROR', 'Internal error; the call was not completed.', call.call_id)))
      .finally(() => inFlight.delete(call.call_id));
  });
}
