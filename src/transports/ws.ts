// WebSocket door at /v1/ws (README, "The API"; approvals: docs/approvals.md): `tool_call {call_id, tool_name, arguments, timeout_seconds?}` ->
// `tool_result {call_id, result}` with the envelope. Calls run concurrently on one connection and are
// answered as they finish; every call goes through the pipeline. The token is checked by the /v1 gate
// before the upgrade (Authorization header, or the `toolgate.bearer.<token>` subprotocol for browsers).
// A call that needs approval, from a connection that may decide its own calls, is put to the person at the
// other end as `confirmation_request`; their `confirmation_response` decides it (docs/approvals.md).
import { setMaxListeners } from 'node:events';
import fastifyWebsocket, { type WebSocket } from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { CallerInfo, Pipeline } from '../pipeline/execute-tool.js';
import type { ConfirmFn, ConfirmRequest } from '../tools/call.js';
import { httpCaller } from './caller.js';

/** Calls one connection may have running; more are answered with an error message, not queued. */
export const MAX_IN_FLIGHT = 32;
/** Keep-alive: a ping every interval; a connection that missed the previous pong is closed. */
const PING_INTERVAL_MS = 30_000;
/** Accepted subprotocol, echoed so that a browser that offered it (with its bearer) accepts the upgrade. */
export const WS_SUBPROTOCOL = 'toolgate.v1';
const DEFAULT_TIMEOUT_S = 30;
/**
 * How long a call waits for its confirmation_response unless the call says otherwise (docs/approvals.md: 30 s). The
 * wait is the person's time, not the tool's: `timeout_seconds` limits each run of the tool (the dry run that
 * makes the diff, the run after the approval), and the executor's timer is not running while the gate waits,
 * so a write sent with a 5 s tool limit still leaves its person 30 s to read the diff. It is bounded on its
 * own by `confirmation_timeout_seconds` and TOOLGATE_APPROVAL_MAX_WAIT_S, the cap REST's `Prefer: wait` has.
 */
export const DEFAULT_CONFIRMATION_TIMEOUT_S = 30;

const ToolCallMessage = z.object({
  type: z.literal('tool_call'),
  call_id: z.string().min(1).max(128),
  tool_name: z.string().min(1).max(128),
  arguments: z.record(z.string(), z.unknown()).optional(),
  timeout_seconds: z.number().positive().max(3600).optional(),
  /** Seconds to wait for a confirmation_response when the call needs approval; then it answers pending. */
  confirmation_timeout_seconds: z.number().positive().max(3600).optional(),
  /** This call's policy switches (`memory=on`), in place of the upgrade's X-Toolgate-Switches: browsers cannot set headers. */
  switches: z.string().max(1024).optional(),
  /** The agent turn the call belongs to (docs/api.md, "Turns, checkpoints and rewind"); the executor checks it, so a bad one is an envelope. */
  turn: z.unknown().optional(),
});

// Strict: a misspelt `approve` or a string "true" must not pass as a decision nobody made.
const ConfirmationResponseMessage = z
  .object({
    type: z.literal('confirmation_response'),
    call_id: z.string().min(1).max(128).optional(),
    approval_id: z.string().min(1).max(128).optional(),
    approved: z.boolean(),
    reason: z.string().max(2000).nullable().optional(),
  })
  .strict()
  .refine((m) => m.call_id !== undefined || m.approval_id !== undefined, { message: 'give the call_id (or approval_id) of the confirmation_request', path: ['call_id'] });

/** Stops a call in flight (run_command's process tree is killed; its tool_result then says `cancelled`). */
const CancelMessage = z.object({ type: z.literal('cancel'), call_id: z.string().min(1).max(128) }).strict();

const MESSAGE_SHAPES =
  '{"type":"tool_call","call_id","tool_name","arguments","timeout_seconds"?,"confirmation_timeout_seconds"?,"switches"?,"turn"?}, ' +
  '{"type":"confirmation_response","call_id","approved":true|false,"reason"?} or {"type":"cancel","call_id"}';

export interface WsOptions {
  pipeline: Pipeline;
  /** Largest message accepted (bytes); a larger one closes the connection with 1009. */
  maxMessageBytes: number;
  /** Longest wait for a confirmation_response, seconds (TOOLGATE_APPROVAL_MAX_WAIT_S; 0: never ask in band). */
  confirmMaxWaitS: number;
}

/** A confirmation_request that has not been answered yet, by call_id. */
interface WaitingConfirmation {
  approvalId: string;
  settle(answer: { approve: boolean; reason: string | null } | null): void;
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

  app.get('/v1/ws', { websocket: true, schema: { hide: true } }, (socket, req) => handleConnection(socket, req, opts));
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return `'${issue?.path.join('.') || 'message'}': ${issue?.message ?? 'invalid'}`;
}

function handleConnection(socket: WebSocket, req: FastifyRequest, opts: WsOptions): void {
  const connection = new Connection(socket, req, opts);
  keepAlive(socket, () => connection.close());
  socket.on('message', (raw, isBinary) => connection.receive(raw, isBinary));
}

/** Pings the client every PING_INTERVAL_MS and ends a connection that did not answer the last ping. */
function keepAlive(socket: WebSocket, onClose: () => void): void {
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
    onClose();
  });
}

/** One WebSocket connection: its calls in flight, their cancels and the confirmations they wait for. */
class Connection {
  private readonly inFlight = new Set<string>();
  /** Each call's own stop, for a `cancel` message; the connection's end stops them all through `gone`. */
  private readonly cancels = new Map<string, AbortController>();
  private readonly waiting = new Map<string, WaitingConfirmation>();
  // Calls still running when the connection ends are stopped (the executor sees the client go away).
  private readonly gone = new AbortController();
  private readonly base: CallerInfo;
  private readonly project: string | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly req: FastifyRequest,
    private readonly opts: WsOptions,
  ) {
    // Every call in flight listens on this one signal.
    setMaxListeners(MAX_IN_FLIGHT + 1, this.gone.signal);
    const query = req.query as { project?: string } | undefined;
    this.base = httpCaller(req);
    this.project = this.base.projectId ?? (query?.project || undefined);
  }

  close(): void {
    this.gone.abort();
  }

  receive(raw: unknown, isBinary: boolean): void {
    const { socket } = this;
    let msg: unknown;
    try {
      msg = JSON.parse(isBinary ? Buffer.from(raw as Buffer).toString('utf8') : String(raw));
    } catch {
      return send(socket, errorMessage('INVALID_PARAM', 'The message is not valid JSON; send a JSON object with a type (tool_call, confirmation_response, ping).'));
    }
    const type = msg && typeof msg === 'object' ? (msg as { type?: unknown }).type : undefined;
    const msgCallId = (msg as { call_id?: unknown } | null)?.call_id;
    const replyId = typeof msgCallId === 'string' ? msgCallId : undefined;
    if (type === 'ping') return send(socket, { type: 'pong' });
    if (type === 'cancel') {
      const cancel = CancelMessage.safeParse(msg);
      if (!cancel.success) return send(socket, errorMessage('INVALID_PARAM', `Invalid cancel (${describeIssue(cancel.error)}); send ${MESSAGE_SHAPES}.`, replyId));
      return this.cancel(cancel.data.call_id);
    }
    if (type === 'confirmation_response') {
      const answer = ConfirmationResponseMessage.safeParse(msg);
      if (!answer.success) return send(socket, errorMessage('INVALID_PARAM', `Invalid confirmation_response (${describeIssue(answer.error)}); send ${MESSAGE_SHAPES}.`, replyId));
      return this.answerConfirmation(answer.data);
    }
    const parsed = ToolCallMessage.safeParse(msg);
    if (!parsed.success) {
      const what = type === 'tool_call' ? describeIssue(parsed.error) : `unknown message type ${JSON.stringify(type ?? null)}`;
      return send(socket, errorMessage('INVALID_PARAM', `Invalid message (${what}); send ${MESSAGE_SHAPES}.`, replyId));
    }
    this.call(parsed.data);
  }

  private cancel(callId: string): void {
    const running = this.cancels.get(callId);
    if (!running) return send(this.socket, errorMessage('NOT_FOUND', `No call '${callId}' is running on this connection.`, callId));
    running.abort();
  }

  /** Runs a tool_call through the pipeline and answers its tool_result when it finishes. */
  private call(call: z.output<typeof ToolCallMessage>): void {
    const { socket, inFlight, cancels, base } = this;
    if (inFlight.has(call.call_id)) return send(socket, errorMessage('INVALID_PARAM', `Call '${call.call_id}' is still running; use a new call_id per call.`, call.call_id));
    if (inFlight.size >= MAX_IN_FLIGHT) return send(socket, errorMessage('RATE_LIMITED', `${MAX_IN_FLIGHT} calls are already running on this connection; wait for a result before sending more.`, call.call_id));
    inFlight.add(call.call_id);
    const cancel = new AbortController();
    cancels.set(call.call_id, cancel);
    void this.opts.pipeline
      .executeTool(
        {
          ...base,
          projectId: this.project,
          switches: call.switches ?? base.switches,
          turn: call.turn,
          requestId: `${String(this.req.id)}:${call.call_id}`,
          signal: AbortSignal.any([this.gone.signal, cancel.signal]),
          timeoutMs: (call.timeout_seconds ?? DEFAULT_TIMEOUT_S) * 1000,
          // A running command's output as it comes (docs/run-command.md, "Streaming").
          progress: (stream, data) => send(socket, { type: 'tool_progress', call_id: call.call_id, stream, data }),
          // Offered on every call; the pipeline uses it only for a token that may decide its own calls.
          confirm: this.confirmOver(call.call_id, Math.min(call.confirmation_timeout_seconds ?? DEFAULT_CONFIRMATION_TIMEOUT_S, this.opts.confirmMaxWaitS)),
        },
        call.tool_name,
        call.arguments ?? {},
      )
      .then((outcome) => send(socket, { type: 'tool_result', call_id: call.call_id, result: outcome.envelope }))
      .catch(() => send(socket, errorMessage('EXECUTION_ERROR', 'Internal error; the call was not completed.', call.call_id)))
      .finally(() => {
        inFlight.delete(call.call_id);
        cancels.delete(call.call_id);
      });
  }

  /** Asks the person at the other end about one call and waits up to waitS for their answer; null when none came. */
  private confirmOver(callId: string, waitS: number): ConfirmFn {
    const { socket, waiting } = this;
    return (request, signal) =>
      new Promise((resolve) => {
        if (waitS <= 0 || signal?.aborted || socket.readyState !== socket.OPEN) return resolve(null);
        const settle: WaitingConfirmation['settle'] = (answer) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onClose);
          waiting.delete(callId);
          resolve(answer);
        };
        // The connection closing is "no decision": the request stays pending for the console.
        const onClose = () => settle(null);
        const timer = setTimeout(() => settle(null), waitS * 1000);
        signal?.addEventListener('abort', onClose, { once: true });
        waiting.set(callId, { approvalId: request.id, settle });
        send(socket, { type: 'confirmation_request', call_id: callId, timeout_seconds: waitS, approval: confirmationView(request) });
      });
  }

  private answerConfirmation(answer: z.output<typeof ConfirmationResponseMessage>): void {
    const { socket, waiting } = this;
    const callId = answer.call_id ?? [...waiting].find(([, w]) => w.approvalId === answer.approval_id)?.[0];
    const entry = callId === undefined ? undefined : waiting.get(callId);
    const named = answer.call_id !== undefined ? `call '${answer.call_id}'` : `approval '${answer.approval_id ?? ''}'`;
    if (!entry || callId === undefined) {
      return send(
        socket,
        errorMessage('NOT_FOUND', `No confirmation is waiting for ${named}: it was answered, its wait ran out (the call then answered pending), or none was asked.`, answer.call_id),
      );
    }
    if (answer.approval_id !== undefined && answer.approval_id !== entry.approvalId) {
      return send(socket, errorMessage('INVALID_PARAM', `Call '${callId}' waits for approval '${entry.approvalId}', not '${answer.approval_id}'.`, callId));
    }
    entry.settle({ approve: answer.approved, reason: answer.reason ?? null });
  }
}

/** What the person is shown: the request as the 202 answer's `approval` has it. */
function confirmationView(r: ConfirmRequest): ConfirmRequest {
  return { id: r.id, tool: r.tool, path: r.path, summary: r.summary, diff_preview: r.diff_preview, diff_truncated: r.diff_truncated, changes: r.changes, risk: r.risk, risk_level: r.risk_level, expires_at: r.expires_at };
}
