// The MCP door over Streamable HTTP, stateless: one SDK Server for the whole service instead of a Server and a
// transport per POST (building them, the SDK's JSON Schema validator among them, cost more than the call).
// The POST answers as the SDK's stateless transport answers (its checks, status codes and messages, JSON or an
// SSE stream); each request reaches the shared server under an id of its own, since clients reuse ids, and
// its answer goes back with the client's id. docs/mcp.md says what the door keeps per call.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { armSseKeepAlive, DEFAULT_SSE_KEEP_ALIVE_MS } from '@modelcontextprotocol/sdk/server/sseKeepAlive.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ElicitResultSchema,
  ErrorCode,
  isInitializeRequest,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  JSONRPCRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { envelopeJson, ToolError, type Envelope } from '../envelope.js';
import type { CallerInfo, Pipeline } from '../pipeline/execute-tool.js';
import type { PolicyService } from '../pipeline/policy-gate.js';
import type { ToolDefinition } from '../tools/define.js';
import type { ConfirmFn } from '../tools/call.js';
import { httpCaller } from './caller.js';
import { jsonRpcError, toolCallNameOf } from './mcp-messages.js';
import { approvalElicitation, CONTENT_BLOCKS, createMcpServer, decisionOf, runToolCall } from './mcp-server.js';

/**
 * Session ids this door hands out, in place of state: the client declared elicitation in its initialize. The
 * SDK client echoes its session id on every later request, to whichever replica it reaches; this stateless
 * door does not validate it. A client that claims it falsely only makes its own call wait.
 */
const ELICITING_SESSION = 'tg-e1-';
/** The session id of every other client: it keys the client's calls for notifications/cancelled. */
const PLAIN_SESSION = 'tg-s1-';
/** JSON-RPC ids of the elicitation requests this door sends: the answer names its approval on any replica. */
const ANSWER_ID = 'toolgate-approval:';

/** The JSON-RPC id a notifications/cancelled names, or undefined for any other message. */
function cancelledRequestOf(body: unknown): unknown {
  const msg = (Array.isArray(body) ? body[0] : body) as { method?: unknown; params?: { requestId?: unknown } } | null;
  return msg && typeof msg === 'object' && msg.method === 'notifications/cancelled' ? msg.params?.requestId : undefined;
}

/**
 * A call's key among those in flight: the caller (token, else address) and its session, so that two
 * clients at one address (whose JSON-RPC ids coincide) neither cancel nor shadow each other's calls.
 */
function callKey(actor: string | null, ip: string, session: string | string[] | undefined, id: unknown): string {
  return `${actor ?? `ip:${ip}`}\n${typeof session === 'string' ? session : ''}\n${JSON.stringify(id)}`;
}

function isInitialize(body: unknown): boolean {
  return !!body && typeof body === 'object' && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';
}

/** Whether a POST is an initialize whose client can answer form elicitation (an empty capability means form). */
function initializeWithElicitation(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const msg = body as { method?: unknown; params?: { capabilities?: { elicitation?: unknown } } };
  const elicitation = msg.method === 'initialize' ? msg.params?.capabilities?.elicitation : undefined;
  if (!elicitation || typeof elicitation !== 'object') return false;
  return 'form' in elicitation || !('url' in elicitation);
}

/** A client's answer to this door's elicitation: a JSON-RPC response (no method) whose id names an approval. */
function elicitationAnswerOf(body: unknown): { approvalId: string; result: unknown; failed: boolean } | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const msg = body as Record<string, unknown>;
  if ('method' in msg || typeof msg.id !== 'string' || !msg.id.startsWith(ANSWER_ID)) return null;
  if (!('result' in msg) && !('error' in msg)) return null;
  return { approvalId: msg.id.slice(ANSWER_ID.length), result: msg.result, failed: 'error' in msg };
}

/** What the server's handlers need of the POST that carried a request. */
interface PostCall {
  callerFor(signal: AbortSignal): CallerInfo;
  toolsFor(): Promise<readonly ToolDefinition[]>;
  /** How to ask this POST's person about the request with this (server-side) id, when it may be asked. */
  confirmFor?: ((requestId: RequestId) => ConfirmFn) | undefined;
}

/** One POST's JSON-RPC requests on the shared server, and where their answers go. */
class Exchange {
  /** The client's id of each request, by the id the shared server knows it by, in the order the POST sent them. */
  readonly ids = new Map<number, RequestId>();
  readonly answers = new Map<number, JSONRPCMessage>();
  /** Until every request is answered, or the client went away. */
  open = true;
  keepAlive: NodeJS.Timeout | undefined;
  readonly settled: Promise<void>;
  private settle!: () => void;

  constructor(
    readonly call: PostCall,
    /** Set for an SSE answer: messages are written to it as they come. */
    readonly stream: ServerResponse | null,
  ) {
    this.settled = new Promise((resolve) => (this.settle = resolve));
  }

  end(): void {
    if (!this.open) return;
    this.open = false;
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.stream?.end();
    this.settle();
  }

  write(message: JSONRPCMessage): void {
    // The framing of the SDK's transport (one `message` event per JSON-RPC message, no event ids: no resumption).
    this.stream?.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
}

/**
 * The transport of the shared server: it receives the requests of every POST under ids of its own and routes
 * what the server sends (answers, progress, the door's own elicitation requests) to the POST they belong to.
 */
class HttpDoorTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private lastId = 0;
  private readonly exchanges = new Map<number, Exchange>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  callOf(requestId: RequestId): PostCall {
    const exchange = typeof requestId === 'number' ? this.exchanges.get(requestId) : undefined;
    if (!exchange) throw new McpError(ErrorCode.ConnectionClosed, 'The request is no longer open.');
    return exchange.call;
  }

  /**
   * Hands a POST's messages to the server in their order. Requests get ids of their own; a notifications/cancelled
   * that names a request of the same POST is renamed with it, other notifications and responses change nothing
   * on a stateless server (the door answers its own elicitation requests and cross-POST cancels before this).
   */
  deliver(exchange: Exchange, messages: readonly JSONRPCMessage[], isRequest: readonly boolean[]): void {
    const mine = new Map<RequestId, number>();
    const out: JSONRPCMessage[] = [];
    for (const [i, message] of messages.entries()) {
      if (isRequest[i] && 'id' in message && 'method' in message) {
        const id = ++this.lastId;
        exchange.ids.set(id, message.id);
        this.exchanges.set(id, exchange);
        mine.set(message.id, id);
        out.push({ ...message, id });
      } else if ('method' in message && message.method === 'notifications/cancelled') {
        const id = mine.get((message.params as { requestId?: RequestId } | undefined)?.requestId ?? '');
        if (id !== undefined) out.push({ ...message, params: { ...message.params, requestId: id } });
      }
    }
    for (const message of out) this.onmessage?.(message);
  }

  /** The client went away before every answer: its requests still running are cancelled, as on any cancel. */
  abandon(exchange: Exchange): void {
    if (!exchange.open) return;
    exchange.end();
    for (const id of exchange.ids.keys()) {
      if (exchange.answers.has(id)) continue;
      this.exchanges.delete(id);
      this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'The client closed the request.' } });
    }
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // The server sends well-formed messages: an answer is what has no method.
    const answer = !('method' in message) && 'id' in message ? message : null;
    const id = answer ? answer.id : options?.relatedRequestId;
    // Stateless: a message that belongs to no request has no stream to go to (there is no GET stream).
    if (id === undefined) return;
    const exchange = typeof id === 'number' ? this.exchanges.get(id) : undefined;
    if (!exchange?.open) throw new Error(`No connection established for request ID: ${String(id)}`);
    if (!answer) {
      // A notification or a request of the server about this request: on its stream; a JSON answer has none.
      if (exchange.stream) exchange.write(message);
      return;
    }
    const mapped = { ...answer, id: exchange.ids.get(id as number) ?? null } as JSONRPCMessage;
    this.exchanges.delete(id as number);
    exchange.answers.set(id as number, mapped);
    if (exchange.stream) exchange.write(mapped);
    if (exchange.answers.size === exchange.ids.size) exchange.end();
  }
}

/**
 * A tools/call the door may answer without the server's dispatch: one JSON-RPC request (not a batch) as the
 * SDK's transport would pass it on, valid for the server's tools/call schema, with no task asked (the server
 * refuses tasks), and a protocol version header the transport accepts. Anything else takes the server's path,
 * which answers it, or its error, as the SDK does.
 */
export function directCallOf(body: unknown, version: string | string[] | undefined): { id: RequestId; params: CallToolRequest['params'] } | null {
  if (Array.isArray(body) || (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version)))) return null;
  const plain = plainToolCall(body);
  if (plain) return plain;
  const request = JSONRPCRequestSchema.safeParse(body);
  if (!request.success) return null;
  const call = CallToolRequestSchema.safeParse(request.data);
  if (!call.success || call.data.params.task !== undefined) return null;
  return { id: request.data.id, params: call.data.params };
}

/**
 * The tools/call most clients send, taken without the SDK's schemas (docs/development.md, "Work done once"): the
 * keys jsonrpc "2.0", an id (a string or a safe integer), method and params; params with a name and, if any, plain
 * object arguments, nothing else. Those schemas take such a request and return its values unchanged; any other
 * shape (a _meta, a task, another key) is theirs to read (null).
 */
function plainToolCall(body: unknown): { id: RequestId; params: CallToolRequest['params'] } | null {
  if (!isPlainRecord(body)) return null;
  for (const key in body) if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return null;
  const { id, params } = body;
  if (body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !(typeof id === 'string' || Number.isSafeInteger(id)) || !isPlainRecord(params)) return null;
  for (const key in params) if (key !== 'name' && key !== 'arguments') return null;
  if (typeof params.name !== 'string' || (params.arguments !== undefined && !isPlainRecord(params.arguments))) return null;
  return { id: id as RequestId, params: params as CallToolRequest['params'] };
}

/** An object JSON gave (not an array, not null), whose prototype is Object's as zod's record asks. */
function isPlainRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * A tools/call result as mcpResult makes it, checked without the SDK's result schema: text blocks (type and text
 * only), the envelope as a plain structuredContent, isError. The schema takes it and returns it unchanged; any other
 * result (an image, a key more) is checked by the schema (null).
 */
function plainResult(result: CallToolResult): CallToolResult | null {
  for (const key in result) if (key !== 'content' && key !== 'structuredContent' && key !== 'isError') return null;
  if (!Array.isArray(result.content) || typeof result.isError !== 'boolean' || !isPlainRecord(result.structuredContent)) return null;
  for (const block of result.content) {
    if (!isPlainRecord(block) || block.type !== 'text' || typeof block.text !== 'string') return null;
    for (const key in block) if (key !== 'type' && key !== 'text') return null;
  }
  return result;
}

/**
 * The JSON text of a direct answer, as JSON.stringify writes it. A read's text block is the envelope's text, a blank
 * line and the file's content, which structuredContent carries too: the content's JSON text (kilobytes of escaping)
 * is made once for both (envelopeJson's parts).
 */
export function directAnswerJson(id: RequestId, result: CallToolResult): string {
  const answer = { result, jsonrpc: '2.0', id };
  const envelope = result.structuredContent as Envelope | undefined;
  const first = result.content[0];
  const content = (envelope?.data as { content?: unknown } | null | undefined)?.content;
  if (!envelope || plainResult(result) === null || first?.type !== 'text' || typeof content !== 'string' || typeof envelope.text !== 'string') return JSON.stringify(answer);
  // The block is `${head}\n\n${content}` (mcpResult marks it): its JSON is the two strings' JSON around an escaped
  // blank line (a surrogate cannot pair across the line breaks, so each side escapes as it does alone).
  const head = envelope.text;
  if (!CONTENT_BLOCKS.has(first)) return JSON.stringify(answer);
  const parts: { contentJson?: string } = {};
  const structured = envelopeJson(envelope, parts);
  if (parts.contentJson === undefined) return JSON.stringify(answer);
  const blocks = [`{"type":"text","text":${JSON.stringify(head).slice(0, -1)}\\n\\n${parts.contentJson.slice(1)}}`];
  for (const block of result.content.slice(1)) blocks.push(JSON.stringify(block));
  return `{"result":{"content":[${blocks.join(',')}],"structuredContent":${structured},"isError":${result.isError ? 'true' : 'false'}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

/** The error answer the SDK's dispatch sends for a handler that threw. */
function errorAnswer(id: RequestId, err: unknown): JSONRPCMessage {
  const e = err as { code?: unknown; message?: unknown; data?: unknown };
  const code = typeof e.code === 'number' && Number.isSafeInteger(e.code) ? e.code : ErrorCode.InternalError;
  const message = typeof e.message === 'string' ? e.message : 'Internal error';
  return { jsonrpc: '2.0', id, error: { code, message, ...(e.data !== undefined && { data: e.data }) } };
}

/** An error the SDK's transport answers before any JSON-RPC is handled, with the same status, code and text. */
function transportError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.code(status).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** What the door is built from once it is first needed. */
export interface McpDoorOptions {
  pipeline: Pipeline;
  policy: PolicyService;
  version: string;
  /** Longest wait for an elicitation answer, in ms (0: nobody is asked). */
  elicitWaitMs: number;
  /** Aborted when the service shuts down: calls waiting for an answer give up (they answer pending). */
  closing: AbortSignal;
}

export type McpPostHandler = (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>;

export function createMcpDoor(opts: McpDoorOptions): McpPostHandler {
  const door = new McpDoor(opts);
  return (req, reply) => door.handle(req, reply);
}

/** The transport's answer to a POST it refuses, or the JSON-RPC messages it carries and which are requests. */
type Parsed = { refused: FastifyReply } | { messages: JSONRPCMessage[]; requests: boolean[] };

/** The door's state: the shared server and its routing transport, and the tool calls in flight on this replica. */
class McpDoor {
  private readonly transport = new HttpDoorTransport();
  /**
   * Tool calls in flight on this replica, by caller and JSON-RPC id: stateless, a client's
   * notifications/cancelled comes on a POST of its own, and is routed here to stop its call (run_command
   * kills its command). Only the same caller (token, else client address) in the same session reaches its
   * own calls.
   */
  private readonly inFlight = new Map<string, AbortController>();

  constructor(private readonly opts: McpDoorOptions) {
    const { transport } = this;
    const server = createMcpServer({
      version: opts.version,
      pipeline: opts.pipeline,
      callerFor: (signal, requestId) => transport.callOf(requestId).callerFor(signal),
      toolsFor: (requestId) => transport.callOf(requestId).toolsFor(),
      confirmFor: (requestId) => transport.callOf(requestId).confirmFor?.(requestId),
    });
    // The transport only routes: connecting starts nothing that runs on its own.
    void server.connect(transport);
  }

  async handle(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const { policy, elicitWaitMs } = this.opts;
    // The gate (./http-gate.ts) admitted the caller before this handler runs.
    const principal = req.principal;
    const cancelled = cancelledRequestOf(req.body);
    const running = cancelled === undefined ? undefined : this.inFlight.get(callKey(principal?.id ?? null, req.ip, req.headers['mcp-session-id'], cancelled));
    if (running) {
      running.abort();
      return reply.code(202).send();
    }
    const answer = elicitationAnswerOf(req.body);
    if (answer) return this.decide(req, reply, answer);
    const refused = transportRefusal(req, reply);
    if (refused) return refused;

    const body = req.body;
    const toolCall = toolCallNameOf(body) !== null;
    // Only a client that declared elicitation can be asked, and only when something may ask and wait.
    const session = req.headers['mcp-session-id'];
    const mayElicit = policy.store !== null && elicitWaitMs > 0;
    const eliciting = mayElicit && typeof session === 'string' && session.startsWith(ELICITING_SESSION) && toolCall;
    // A tools/call that asked for progress (a running command's output) is answered on an SSE stream too.
    const wantsProgress = toolCall && (body as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta?.progressToken !== undefined;
    const version = req.headers['mcp-protocol-version'];
    // Most POSTs are one tools/call answered as JSON: that one skips the server's dispatch (below).
    const direct = toolCall && !eliciting && !wantsProgress ? directCallOf(body, version) : null;
    const parsed: Parsed = direct ? { messages: [], requests: [] } : parseMessages(reply, body, version);
    if ('refused' in parsed) return parsed.refused;

    const base = httpCaller(req);
    const callId = toolCall ? (body as { id?: unknown }).id : undefined;
    if (direct) return this.runDirect(req, reply, direct, base, callId);
    const cancel = this.track(req, reply, callId);

    const call: PostCall = {
      callerFor: (signal) => {
        if (!cancel) return { ...base, signal };
        // Linked by hand: AbortSignal.any costs more per call (Node 20) than the rest of the door.
        if (signal.aborted) cancel.abort(signal.reason);
        else signal.addEventListener('abort', () => cancel.abort(signal.reason), { once: true });
        return { ...base, signal: cancel.signal };
      },
      toolsFor: async () => policy.toolsFor(principal, base.switches),
      confirmFor: eliciting ? this.sseConfirm : undefined,
    };
    if (mayElicit && initializeWithElicitation(body)) void reply.header('mcp-session-id', `${ELICITING_SESSION}${randomUUID()}`);
    else if (isInitialize(body)) void reply.header('mcp-session-id', `${PLAIN_SESSION}${randomUUID()}`);
    if (!eliciting && !wantsProgress) return this.answerJson(reply, call, parsed);
    return this.answerStream(reply, call, parsed);
  }

  /**
   * A person's answer to an elicitation sent by this or another replica: decided in the shared store, as
   * POST /v1/approvals/{id}/approve would (which tokens may decide is checked there), answered 202 as the
   * spec answers a posted response. Cancel or an error decides nothing; the call then answers pending.
   */
  private async decide(req: FastifyRequest, reply: FastifyReply, answer: NonNullable<ReturnType<typeof elicitationAnswerOf>>): Promise<FastifyReply> {
    if (answer.failed) return reply.code(202).send();
    const parsed = ElicitResultSchema.safeParse(answer.result);
    if (!parsed.success) return reply.code(400).send(jsonRpcError('Invalid elicitation result.', { code: 'INVALID_PARAM' }));
    const decision = decisionOf(parsed.data);
    if (decision) {
      try {
        await this.opts.policy.decideRequest(req.principal, answer.approvalId, decision.approve ? 'approved' : 'rejected', decision.reason);
      } catch (err) {
        if (!(err instanceof ToolError)) throw err;
        return reply.code(err.httpStatus).send(jsonRpcError(err.message, { code: err.code }));
      }
    }
    return reply.code(202).send();
  }

  /** The stop of a tools/call this POST carries, kept for a later notifications/cancelled; null when none. */
  private track(req: FastifyRequest, reply: FastifyReply, callId: unknown): AbortController | null {
    const key = this.keyOf(req, callId);
    if (key === null) return null;
    const cancel = new AbortController();
    this.inFlight.set(key, cancel);
    reply.raw.once('close', () => this.inFlight.delete(key));
    return cancel;
  }

  /** The key a tools/call's stop is kept under (see inFlight); null when it has no id or one in flight has it. */
  private keyOf(req: FastifyRequest, callId: unknown): string | null {
    const key = callId === undefined ? null : callKey(req.principal?.id ?? null, req.ip, req.headers['mcp-session-id'], callId);
    return key === null || this.inFlight.has(key) ? null : key;
  }

  /**
   * A single tools/call answered as JSON: what the server would do with it. Run the handler, check the result
   * as its tools/call wrapper does, answer the error as its dispatch does, and nothing when the client went away.
   * The call is kept for a later notifications/cancelled as track keeps it. `caller` is this POST's own: its
   * signal is set here.
   */
  private async runDirect(req: FastifyRequest, reply: FastifyReply, direct: NonNullable<ReturnType<typeof directCallOf>>, caller: CallerInfo, callId: unknown): Promise<FastifyReply | undefined> {
    const stop = new AbortController();
    const key = this.keyOf(req, callId);
    if (key !== null) this.inFlight.set(key, stop);
    // Its signal is made when the pipeline first reads it, which a quick call never does: an AbortSignal per call
    // cost the door more than the rest of its work (docs/development.md, "Work done once").
    caller.abort = stop;
    let gone = false;
    // One listener does track's part too: a response closes once, and each listener of it costs the call.
    reply.raw.on('close', () => {
      if (key !== null) this.inFlight.delete(key);
      if (reply.raw.writableFinished) return;
      gone = true;
      stop.abort(new Error('The client closed the request.'));
    });
    let answer: string;
    try {
      const made = await runToolCall(this.opts.pipeline, caller, direct.params);
      // Checked as the server's tools/call wrapper checks it: the plain result as it is, any other by its schema.
      let result = plainResult(made);
      if (!result) {
        const parsed = CallToolResultSchema.safeParse(made);
        if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${parsed.error.message}`);
        result = parsed.data;
      }
      answer = directAnswerJson(direct.id, result);
    } catch (err) {
      answer = JSON.stringify(errorAnswer(direct.id, err));
    }
    if (gone) {
      reply.hijack();
      return undefined;
    }
    return reply.code(200).type('application/json').send(answer);
  }

  /** Plain JSON, once every request of the POST is answered: one answer, or an array for a batch of several. */
  private async answerJson(reply: FastifyReply, call: PostCall, { messages, requests }: { messages: JSONRPCMessage[]; requests: boolean[] }): Promise<FastifyReply | undefined> {
    const exchange = new Exchange(call, null);
    reply.raw.once('close', () => this.transport.abandon(exchange));
    this.transport.deliver(exchange, messages, requests);
    await exchange.settled;
    if (exchange.answers.size < exchange.ids.size) {
      // The client went away: nothing to answer.
      reply.hijack();
      return undefined;
    }
    const answers = [...exchange.answers.values()];
    return reply
      .code(200)
      .type('application/json')
      .send(JSON.stringify(answers.length === 1 ? answers[0] : answers));
  }

  /** A stream that carries the call's progress or its question to the person, then its answer. */
  private async answerStream(reply: FastifyReply, call: PostCall, { messages, requests }: { messages: JSONRPCMessage[]; requests: boolean[] }): Promise<undefined> {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const exchange = new Exchange(call, res);
    res.once('close', () => this.transport.abandon(exchange));
    exchange.keepAlive = armSseKeepAlive(DEFAULT_SSE_KEEP_ALIVE_MS, () => res.write(': keepalive\n\n'));
    this.transport.deliver(exchange, messages, requests);
    await exchange.settled;
    return undefined;
  }

  /**
   * Asks on the tools/call's own SSE stream with an id that names the approval, not through server.elicitInput:
   * the answer arrives as another POST, maybe at another replica. So the call waits for the decision in the
   * shared store, where that POST puts it.
   */
  private readonly sseConfirm =
    (requestId: RequestId): ConfirmFn =>
    async (request, signal) => {
      const { policy, elicitWaitMs, closing } = this.opts;
      const store = policy.store;
      const timeout = Math.min(elicitWaitMs, Date.parse(request.expires_at) - Date.now());
      if (!store || !(timeout > 0)) return null;
      const ask: JSONRPCRequest = { jsonrpc: '2.0', id: `${ANSWER_ID}${request.id}`, method: 'elicitation/create', params: approvalElicitation(request) };
      try {
        await this.transport.send(ask, { relatedRequestId: requestId });
      } catch {
        // The stream is gone (the client went away): nobody to ask.
        return null;
      }
      const record = await store.waitForDecision(request.id, timeout, signal ? AbortSignal.any([signal, closing]) : closing);
      if (!record || record.status === 'pending') return null;
      // Decided (here, on another replica or in the console): the pipeline's repeat meets that decision.
      return { approve: record.status === 'approved', reason: record.reason };
    };
}

/** The checks of the SDK's stateless transport before any message is read, in its order; null when they pass. */
function transportRefusal(req: FastifyRequest, reply: FastifyReply): FastifyReply | null {
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
    return transportError(reply, 406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  }
  if (!isJsonContentType(req.headers['content-type'])) return transportError(reply, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
  const body = req.body;
  if (body === undefined) return transportError(reply, 400, -32700, 'Parse error: Invalid JSON');
  if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) return transportError(reply, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
  return null;
}

/** The POST's messages as the SDK's transport reads them, with its refusals. */
function parseMessages(reply: FastifyReply, body: unknown, version: string | string[] | undefined): Parsed {
  let messages: JSONRPCMessage[];
  try {
    messages = (Array.isArray(body) ? body : [body]).map((m) => JSONRPCMessageSchema.parse(m));
  } catch {
    return { refused: transportError(reply, 400, -32700, 'Parse error: Invalid JSON-RPC message') };
  }
  const initializing = messages.some((m) => 'method' in m && m.method === 'initialize' && isInitializeRequest(m));
  if (initializing && messages.length > 1) return { refused: transportError(reply, 400, -32600, 'Invalid Request: Only one initialization request is allowed') };
  if (!initializing && version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) {
    return { refused: transportError(reply, 400, -32000, `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`) };
  }
  // Only notifications and responses: 202, as the spec answers them. On a stateless server they change
  // nothing (a cancel of a call in flight was routed before).
  const requests = messages.map((m) => isJSONRPCRequest(m));
  if (!requests.includes(true)) return { refused: reply.code(202).send() };
  return { messages, requests };
}
