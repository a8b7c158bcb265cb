// MCP door (official SDK): Streamable HTTP at POST /mcp, stateless (a server and transport per request, so
// any replica answers a tools/call without a prior session), and the server `toolgate mcp` runs on stdio.
// tools/call goes through the same pipeline as REST; structuredContent is the envelope.
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  type JSONRPCRequest,
  type RequestId,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { envelopeSchema, ToolError, type Envelope } from '../envelope.js';
import type { PolicyService } from '../ops/policy.js';
import type { CallerInfo, Pipeline, ToolCallOutcome } from '../pipeline/execute-tool.js';
import { toolAnnotations, type ToolDefinition } from '../tools/define.js';
import type { ConfirmFn, ConfirmRequest } from '../tools/execute.js';
import type { ChangeEntry } from '../tools/plan.js';
import { TOOLS } from '../tools/registry.js';
import { loadAttachment, ownerOf } from '../workspace/attachments.js';
import { httpCaller } from './caller.js';
import { inputJsonSchema } from './function-defs.js';

const MIB = 1024 * 1024;

/** What a call that waits for a person answers in `data` (any tool, when the policy asks). */
const PendingApprovalData = z.looseObject({
  applied: z.literal(false),
  approval: z.looseObject({ id: z.string(), status: z.string(), expires_at: z.string(), tool: z.string(), path: z.string().nullable(), summary: z.string() }),
});
const APPROVAL_ID = z.string().optional().describe('Repeat of a call that needed approval: the id from data.approval.id, once the user has decided; the other arguments as in the first call.');

const schemasByTool = new Map<string, { inputSchema: Tool['inputSchema']; outputSchema: Tool['outputSchema'] }>();

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  // Clients validate with their own draft (the SDK's ajv is draft-07): no $schema that would pin another.
  delete out.$schema;
  return out;
}

/** A tool as MCP lists it: input schema (with approval_id for tools that change files), the envelope as output schema, annotations. */
export function mcpTool(t: ToolDefinition): Tool {
  let schemas = schemasByTool.get(t.name);
  if (!schemas) {
    schemas = {
      inputSchema: (t.mutates ? jsonSchemaOf(t.input.extend({ approval_id: APPROVAL_ID }), 'input') : inputJsonSchema(t)) as Tool['inputSchema'],
      // Any call may be held for approval by a policy: its data is then the pending answer, not the tool's output.
      outputSchema: jsonSchemaOf(envelopeSchema(z.union([t.output, PendingApprovalData])), 'output') as Tool['outputSchema'],
    };
    schemasByTool.set(t.name, schemas);
  }
  const { title, ...hints } = toolAnnotations(t);
  return { name: t.name, title, description: t.description, ...schemas, annotations: { title, ...hints } };
}

/** Every tool as MCP lists it, for a caller without a policy or token limits. */
export function mcpTools(tools: readonly ToolDefinition[] = TOOLS): Tool[] {
  return tools.map(mcpTool);
}

const MAX_JSON_TEXT = 20_000;

interface PendingApproval {
  id: string;
  status: string;
  tool: string;
  summary: string;
  expires_at: string;
  diff_preview?: string;
}

function pendingApprovalOf(envelope: Envelope): PendingApproval | null {
  const approval = (envelope.data as { approval?: PendingApproval } | null)?.approval;
  return envelope.status === 'partial' && approval?.status === 'pending' ? approval : null;
}

/** Media read_file returns as base64 with its type; an image of it goes to the model as image content. */
function mediaOf(envelope: Envelope): { mediaType: string; base64: string } | null {
  const data = envelope.data as { media_type?: unknown; encoding?: unknown; content?: unknown } | null;
  if (typeof data?.media_type !== 'string' || data.encoding !== 'base64' || typeof data.content !== 'string') return null;
  return { mediaType: data.media_type, base64: data.content };
}

/** What the model reads: the summary, then the part it acts on (content, hits, diff; the error and what to do). */
export function modelText(envelope: Envelope): string {
  if (envelope.error) {
    const details = envelope.error.details === undefined ? '' : `\nDetails: ${JSON.stringify(envelope.error.details).slice(0, MAX_JSON_TEXT)}`;
    return `Error ${envelope.error.code}: ${envelope.error.message}${details}`;
  }
  const pending = pendingApprovalOf(envelope);
  if (pending) {
    // The envelope's text names the REST routes; a model over MCP needs the one thing it does next.
    const head =
      `Waiting for approval ${pending.id}: ${pending.summary} Nothing was changed. The user approves or rejects this request ` +
      `in toolgate's console (/console) until ${pending.expires_at}. Once the user has decided, call ${pending.tool} again with ` +
      `the same arguments plus "approval_id": "${pending.id}".`;
    return pending.diff_preview ? `${head}\n\n${pending.diff_preview}` : head;
  }
  // Media bytes are no text to read: an image goes as image content, the rest stays in structuredContent.
  if (mediaOf(envelope)) return envelope.text;
  const data = (envelope.data ?? {}) as Record<string, unknown>;
  const parts = [envelope.text];
  if (typeof data.content === 'string') parts.push(data.content);
  else if (typeof data.diff_preview === 'string') parts.push(data.diff_preview === '' ? '(no change)' : data.diff_preview);
  else if (Array.isArray(data.results)) {
    parts.push(
      (data.results as { type: string; path: string; line?: number; column?: number; preview?: string; kind?: string }[])
        .map((r) => (r.type === 'content' ? `${r.path}:${r.line}:${r.column}: ${r.preview}` : `${r.path} (${r.kind})`))
        .join('\n'),
    );
  } else parts.push(JSON.stringify(data).slice(0, MAX_JSON_TEXT));
  return parts.join('\n\n');
}

/**
 * Image types models take as image input; others (EMF, TIFF) stay attachments to fetch.
 */
const MODEL_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/**
 * Decoded image bytes in one result. Model APIs take images up to about 5 MB each and a client forwards the
 * whole result in one message; 3 MiB (4 MiB as base64) keeps a result under both. Past it an image is named in
 * the text instead (attachments stay fetchable with GET /v1/attachments/{id} until they expire).
 */
export const MAX_IMAGE_BYTES_PER_RESULT = 3 * MIB;

type AttachmentLoader = (id: string) => Promise<{ media_type: string; data: Buffer } | null>;
interface AttachmentRefLike {
  id: string;
  name: string;
  media_type: string;
  bytes: number;
}

export async function mcpResult(outcome: ToolCallOutcome, loadAttachment?: AttachmentLoader): Promise<CallToolResult> {
  const { envelope } = outcome;
  const content: CallToolResult['content'] = [{ type: 'text', text: modelText(envelope) }];
  const notShown: string[] = [];
  let budget = MAX_IMAGE_BYTES_PER_RESULT;
  const media = envelope.status === 'error' ? null : mediaOf(envelope);
  if (media && MODEL_IMAGE_TYPES.has(media.mediaType)) {
    const bytes = Buffer.byteLength(media.base64, 'base64');
    if (bytes <= budget) {
      content.push({ type: 'image', data: media.base64, mimeType: media.mediaType });
      budget -= bytes;
    } else notShown.push(`the image (${bytes} bytes)`);
  }
  const attachments = (envelope.data as { attachments?: AttachmentRefLike[] } | null)?.attachments;
  if (envelope.status !== 'error' && Array.isArray(attachments)) {
    for (const ref of attachments) {
      const found = MODEL_IMAGE_TYPES.has(ref.media_type) && ref.bytes <= budget && loadAttachment ? await loadAttachment(ref.id) : null;
      if (found && found.data.length <= budget) {
        content.push({ type: 'image', data: found.data.toString('base64'), mimeType: found.media_type });
        budget -= found.data.length;
      } else notShown.push(`${ref.name} (${ref.media_type}, ${ref.bytes} bytes, attachment id ${ref.id})`);
    }
  }
  if (notShown.length > 0 && content[0]?.type === 'text') {
    content[0].text += `\n\nNot shown as images (over ${MAX_IMAGE_BYTES_PER_RESULT / MIB} MiB of images in one result, or a type models do not take): ${notShown.join('; ')}.`;
  }
  return {
    content,
    structuredContent: envelope as unknown as Record<string, unknown>,
    isError: envelope.status === 'error',
  };
}

/** Diff characters an elicitation shows: enough to judge a change, short enough for a client's dialog. */
const MAX_ELICIT_DIFF = 8_000;

/** Every path the call changes, one line each with its operation, before the diffs. */
function changeList(changes: readonly ChangeEntry[]): string {
  if (changes.length === 0) return '';
  const line = (c: ChangeEntry) => {
    const what = c.to !== undefined ? `${c.path} -> ${c.to}` : `${c.path}${c.kind === 'directory' ? '/' : ''}`;
    const counts = c.diff !== '' ? ` (+${c.lines_added}/-${c.lines_removed})` : '';
    return `- ${c.op} ${what}${counts}${c.truncated ? ' (shown cut short)' : ''}`;
  };
  return `\nChanges:\n${changes.map(line).join('\n')}`;
}

/** The form a person answers (stdio and HTTP alike): what would change, and approve or reject with a reason. */
export function approvalElicitation(request: ConfirmRequest): ElicitRequestFormParams {
  const where = request.path === null ? '' : ` on ${request.path}`;
  const cut = request.diff_preview.length > MAX_ELICIT_DIFF;
  const diff = request.diff_preview === '' ? '' : `\n\n${request.diff_preview.slice(0, MAX_ELICIT_DIFF)}${request.diff_truncated || cut ? '\n(diff cut short)' : ''}`;
  return {
    mode: 'form',
    message: `Approve this change? ${request.summary}\n${request.tool}${where}, risk ${request.risk} (${request.risk_level}); request ${request.id}.${changeList(request.changes)}${diff}`,
    requestedSchema: {
      type: 'object',
      properties: {
        decision: { type: 'string', title: 'Decision', oneOf: [{ const: 'approve', title: 'Approve' }, { const: 'reject', title: 'Reject' }] },
        reason: { type: 'string', title: 'Reason', description: 'Optional; the model reads it when you reject.' },
      },
      required: ['decision'],
    },
  };
}

/**
 * The decision in a person's answer: accept with "approve" or "reject" decides, decline rejects; cancel (or an
 * accept without a valid decision) decides nothing and the request stays pending.
 */
export function decisionOf(answer: ElicitResult): { approve: boolean; reason: string | null } | null {
  const reason = typeof answer.content?.reason === 'string' && answer.content.reason.trim() !== '' ? answer.content.reason.trim() : null;
  if (answer.action === 'decline') return { approve: false, reason };
  if (answer.action !== 'accept') return null;
  const decision = answer.content?.decision;
  return decision === 'approve' || decision === 'reject' ? { approve: decision === 'approve', reason } : null;
}

/**
 * Asks the person at an MCP client through elicitation (form mode) on a connection that holds one client
 * (stdio): no answer within `maxWaitMs` (or before the request expires) decides nothing.
 */
export function elicitationConfirm(server: Server, maxWaitMs: number): ConfirmFn {
  return async (request, signal) => {
    const timeout = Math.min(maxWaitMs, Date.parse(request.expires_at) - Date.now());
    if (!(timeout > 0)) return null;
    try {
      return decisionOf(await server.elicitInput(approvalElicitation(request), { timeout, ...(signal && { signal }) }));
    } catch {
      // Timed out, the client went away or answered something else: no decision, the request stays open.
      return null;
    }
  };
}

export interface McpServerOptions {
  version: string;
  pipeline: Pipeline;
  /** The caller of one tools/call (the door's credentials, project, switches). */
  callerFor(signal: AbortSignal): CallerInfo;
  /** The tools this caller may use, as the policy describes them (tools/list); throws an McpError to refuse. */
  toolsFor(): Promise<readonly ToolDefinition[]>;
  /**
   * Ask the person through elicitation when the client declared it on this connection, waiting at most this
   * long (ms); undefined on the stateless HTTP door, which asks through `confirmFor`.
   */
  elicitWaitMs?: number | undefined;
  /** How the door asks its person about the tools/call with this JSON-RPC id (HTTP: on that POST's stream). */
  confirmFor?: ((requestId: RequestId) => ConfirmFn | undefined) | undefined;
}

/**
 * One MCP server over the pipeline. The low-level Server, not McpServer: the tools are listed with the JSON
 * Schemas of the registry, and the arguments go unvalidated to the pipeline, which answers INVALID_PARAM as an
 * envelope like on every other door instead of a protocol error.
 */
export function createMcpServer(opts: McpServerOptions): Server {
  const { pipeline } = opts;
  const server = new Server({ name: 'toolgate', version: opts.version }, { capabilities: { tools: {} } });
  const confirm = opts.elicitWaitMs === undefined ? undefined : elicitationConfirm(server, opts.elicitWaitMs);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: mcpTools(await opts.toolsFor()) }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const caller = opts.callerFor(extra.signal);
    // Offered only to a client that can answer; the pipeline passes it on only to a caller that may decide its own calls.
    const inBand = confirm && server.getClientCapabilities()?.elicitation?.form ? confirm : opts.confirmFor?.(extra.requestId);
    if (inBand) caller.confirm = inBand;
    // A client that asked for progress gets a running command's output as it comes (docs/run-command.md).
    const progressToken = req.params._meta?.progressToken;
    if (progressToken !== undefined) {
      let n = 0;
      caller.progress = (stream, data) => {
        void extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: ++n, message: `${stream}: ${data}` } }).catch(() => undefined);
      };
    }
    const outcome = await pipeline.executeTool(caller, req.params.name, req.params.arguments ?? {});
    // Attachments are loaded for the same caller and project as the call (the rule of GET /v1/attachments/{id}).
    let resolved: ReturnType<Pipeline['resolveCaller']> | null = null;
    const loadImage: AttachmentLoader = async (id) => {
      resolved ??= pipeline.resolveCaller(caller);
      const call = await resolved.catch(() => null);
      const found = call ? await loadAttachment(call.ws, ownerOf({ actor: call.actor ?? null, clientIp: call.clientIp }), id) : null;
      return found && { media_type: found.ref.media_type, data: found.data };
    };
    return mcpResult(outcome, loadImage);
  });
  return server;
}

/** The tools for a caller's credentials and switches, or a protocol error when the credentials are refused. */
export async function toolsForCaller(pipeline: Pipeline, policy: PolicyService, caller: CallerInfo): Promise<readonly ToolDefinition[]> {
  const auth = await pipeline.authenticate(caller.authorization, caller.clientIp);
  if (!auth.ok) throw new McpError(ErrorCode.InvalidRequest, auth.error.message);
  return policy.toolsFor(auth.principal, caller.switches);
}

/** The tool a JSON-RPC tools/call names (the first one of a batch), or null. */
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

function toolCallNameOf(body: unknown): string | null {
  const first: unknown = Array.isArray(body) ? body[0] : body;
  if (!first || typeof first !== 'object') return null;
  const msg = first as { method?: unknown; params?: { name?: unknown } };
  return msg.method === 'tools/call' && typeof msg.params?.name === 'string' ? msg.params.name : null;
}

/**
 * Session ids this door hands out, in place of state: the client declared elicitation in its initialize. The
 * SDK client echoes its session id on every later request, to whichever replica it reaches; a stateless
 * transport does not validate it. A client that claims it falsely only makes its own call wait.
 */
const ELICITING_SESSION = 'tg-e1-';
/** The session id of every other client: it keys the client's calls for notifications/cancelled. */
const PLAIN_SESSION = 'tg-s1-';
/** JSON-RPC ids of the elicitation requests this door sends: the answer names its approval on any replica. */
const ANSWER_ID = 'toolgate-approval:';
/** The longest an HTTP call waits for its person's answer (SPEC §6: 30 s, as over WebSocket). */
const MAX_ELICIT_WAIT_S = 30;

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

export interface McpHttpOptions {
  pipeline: Pipeline;
  /** Lists each caller's tools (tools/list answers like GET /v1/tools) and holds the shared approval store. */
  policy: PolicyService;
  version: string;
  /** Longest wait for an elicitation answer, in seconds (default: TOOLGATE_APPROVAL_MAX_WAIT_S, at most 30). */
  elicitWaitS?: number;
}

export async function registerMcp(app: FastifyInstance, opts: McpHttpOptions): Promise<void> {
  const { pipeline, policy } = opts;
  const jsonRpcError = (message: string, data?: Record<string, unknown>) => ({ jsonrpc: '2.0', error: { code: -32001, message, ...(data && { data }) }, id: null });
  const elicitWaitMs = Math.min(opts.elicitWaitS ?? app.toolgate.config.approvalMaxWaitS, MAX_ELICIT_WAIT_S) * 1000;
  // Calls waiting for an answer give up on shutdown (they answer pending) instead of holding up the close.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });

  /**
   * Asks on the tools/call's own SSE stream (relatedRequestId routes the request there) with an id that names
   * the approval, not through server.elicitInput: its numeric id would be awaited by this server instance,
   * and the answer arrives as another POST, maybe at another replica. So the call waits for the decision in
   * the shared store, where that POST puts it.
   */
  const sseConfirm =
    (transport: StreamableHTTPServerTransport, requestId: RequestId): ConfirmFn =>
    async (request, signal) => {
      const store = policy.store;
      const timeout = Math.min(elicitWaitMs, Date.parse(request.expires_at) - Date.now());
      if (!store || !(timeout > 0)) return null;
      const ask: JSONRPCRequest = { jsonrpc: '2.0', id: `${ANSWER_ID}${request.id}`, method: 'elicitation/create', params: approvalElicitation(request) };
      try {
        await transport.send(ask, { relatedRequestId: requestId });
      } catch {
        // The stream is gone (the client went away): nobody to ask.
        return null;
      }
      const record = await store.waitForDecision(request.id, timeout, signal ? AbortSignal.any([signal, closing.signal]) : closing.signal);
      if (!record || record.status === 'pending') return null;
      // Decided (here, on another replica or in the console): the pipeline's repeat meets that decision.
      return { approve: record.status === 'approved', reason: record.reason };
    };

  /**
   * Tool calls in flight on this replica, by caller and JSON-RPC id: stateless, a client's
   * notifications/cancelled comes on a POST of its own, and is routed here to stop its call (run_command
   * kills its command). Only the same caller (token, else client address) in the same session reaches its
   * own calls.
   */
  const inFlight = new Map<string, AbortController>();

  app.post('/mcp', { schema: { hide: true } }, async (req, reply) => {
    // The same tokens as /v1, refused before any JSON-RPC is read.
    const auth = await pipeline.authenticate(req.headers.authorization, req.ip);
    if (auth.ok) {
      const cancelled = cancelledRequestOf(req.body);
      const running = cancelled === undefined ? undefined : inFlight.get(callKey(auth.principal?.id ?? null, req.ip, req.headers['mcp-session-id'], cancelled));
      if (running) {
        running.abort();
        return reply.code(202).send();
      }
    }
    if (!auth.ok) {
      // A refused tools/call gets its audit line, like a refused REST call.
      const tool = toolCallNameOf(req.body);
      if (tool !== null) pipeline.refuse({ authorization: undefined, clientIp: req.ip, requestId: String(req.id) }, tool, auth.error, reply.elapsedTime);
      for (const [k, v] of Object.entries(auth.headers)) void reply.header(k, v);
      return reply.code(auth.error.httpStatus).send(jsonRpcError(auth.error.message));
    }

    // A person's answer to an elicitation sent by this or another replica: decided in the shared store, as
    // POST /v1/approvals/{id}/approve would (which tokens may decide is checked there), answered 202 as the
    // spec answers a posted response. Cancel or an error decides nothing; the call then answers pending.
    const answer = elicitationAnswerOf(req.body);
    if (answer) {
      if (answer.failed) return reply.code(202).send();
      const parsed = ElicitResultSchema.safeParse(answer.result);
      if (!parsed.success) return reply.code(400).send(jsonRpcError('Invalid elicitation result.', { code: 'INVALID_PARAM' }));
      const decision = decisionOf(parsed.data);
      if (decision) {
        try {
          await policy.decideRequest(auth.principal, answer.approvalId, decision.approve ? 'approved' : 'rejected', decision.reason);
        } catch (err) {
          if (!(err instanceof ToolError)) throw err;
          return reply.code(err.httpStatus).send(jsonRpcError(err.message, { code: err.code }));
        }
      }
      return reply.code(202).send();
    }

    const base = httpCaller(req);
    const switches = base.switches;
    const callId = toolCallNameOf(req.body) !== null ? (req.body as { id?: unknown }).id : undefined;
    const key = callId === undefined ? null : callKey(auth.principal?.id ?? null, req.ip, req.headers['mcp-session-id'], callId);
    const cancel = key === null || inFlight.has(key) ? null : new AbortController();
    if (key !== null && cancel) {
      inFlight.set(key, cancel);
      reply.raw.once('close', () => inFlight.delete(key));
    }
    const callerFor = (signal: AbortSignal): CallerInfo => ({ ...base, admitted: auth.admission, signal: cancel ? AbortSignal.any([signal, cancel.signal]) : signal });
    const session = req.headers['mcp-session-id'];
    // Only a client that declared elicitation can be asked, and only when something may ask and wait.
    const mayElicit = policy.store !== null && elicitWaitMs > 0;
    const eliciting = mayElicit && typeof session === 'string' && session.startsWith(ELICITING_SESSION) && toolCallNameOf(req.body) !== null;
    // A tools/call that asked for progress (a running command's output) is answered on an SSE stream too.
    const wantsProgress = toolCallNameOf(req.body) !== null && (req.body as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta?.progressToken !== undefined;
    // Stateless: plain JSON answers, except for a tools/call that may ask its person: an SSE stream carries the question.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !eliciting && !wantsProgress });
    const server = createMcpServer({
      version: opts.version,
      pipeline,
      callerFor,
      toolsFor: async () => policy.toolsFor(auth.principal, switches),
      confirmFor: eliciting ? (requestId) => sseConfirm(transport, requestId) : undefined,
    });
    // The transport writes the head later and keeps headers set here (it sets no session id when stateless).
    if (mayElicit && initializeWithElicitation(req.body)) reply.raw.setHeader('mcp-session-id', `${ELICITING_SESSION}${randomUUID()}`);
    else if (isInitialize(req.body)) reply.raw.setHeader('mcp-session-id', `${PLAIN_SESSION}${randomUUID()}`);
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });

  // Stateless: no server-sent stream to open (GET) and no session to end (DELETE). A client sends them with its
  // session id; the SDK client takes the 405 as "no stream" (the spec allows it).
  const notAllowed = { schema: { hide: true } };
  const refuse = (_req: unknown, reply: import('fastify').FastifyReply) =>
    reply.code(405).header('allow', 'POST').send(jsonRpcError('Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST.'));
  app.get('/mcp', notAllowed, refuse);
  app.delete('/mcp', notAllowed, refuse);
}

/** A caller for the stdio server: the local user, with TOOLGATE_TOKEN when tokens are configured. */
export function stdioCaller(signal: AbortSignal | undefined, env: NodeJS.ProcessEnv = process.env): CallerInfo {
  return {
    authorization: env.TOOLGATE_TOKEN ? `Bearer ${env.TOOLGATE_TOKEN}` : undefined,
    clientIp: '127.0.0.1',
    projectId: env.TOOLGATE_PROJECT || undefined,
    // The policy switches of this session, as X-Toolgate-Switches on HTTP (`memory=on`).
    switches: env.TOOLGATE_SWITCHES || undefined,
    requestId: randomUUID(),
    signal,
  };
}
