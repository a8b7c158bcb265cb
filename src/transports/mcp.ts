// MCP door (official SDK): Streamable HTTP at POST /mcp, stateless (a server and transport per request, so
// any replica answers a tools/call without a prior session), and the server `toolgate mcp` runs on stdio.
// tools/call goes through the same pipeline as REST; structuredContent is the envelope.
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { envelopeSchema, type Envelope } from '../envelope.js';
import type { PolicyService } from '../ops/policy.js';
import type { CallerInfo, Pipeline, ToolCallOutcome } from '../pipeline/execute-tool.js';
import { toolAnnotations, type ToolDefinition } from '../tools/define.js';
import type { ConfirmFn } from '../tools/execute.js';
import { TOOLS } from '../tools/registry.js';
import { loadAttachment, ownerOf } from '../workspace/attachments.js';
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

/**
 * Asks the person at an MCP client through elicitation (form mode): accept with "approve" or "reject" decides,
 * decline rejects, cancel, an error or no answer within `maxWaitMs` (or before the request expires) decides
 * nothing and the call stays pending.
 */
export function elicitationConfirm(server: Server, maxWaitMs: number): ConfirmFn {
  return async (request, signal) => {
    const timeout = Math.min(maxWaitMs, Date.parse(request.expires_at) - Date.now());
    if (!(timeout > 0)) return null;
    const where = request.path === null ? '' : ` on ${request.path}`;
    const diff = request.diff_preview === '' ? '' : `\n\n${request.diff_preview}${request.diff_truncated ? '\n(diff cut short)' : ''}`;
    try {
      const answer = await server.elicitInput(
        {
          mode: 'form',
          message: `Approve this change? ${request.summary}\n${request.tool}${where}, risk ${request.risk} (${request.risk_level}); request ${request.id}.${diff}`,
          requestedSchema: {
            type: 'object',
            properties: {
              decision: { type: 'string', title: 'Decision', oneOf: [{ const: 'approve', title: 'Approve' }, { const: 'reject', title: 'Reject' }] },
              reason: { type: 'string', title: 'Reason', description: 'Optional; the model reads it when you reject.' },
            },
            required: ['decision'],
          },
        },
        { timeout, ...(signal && { signal }) },
      );
      const reason = typeof answer.content?.reason === 'string' && answer.content.reason.trim() !== '' ? answer.content.reason.trim() : null;
      if (answer.action === 'decline') return { approve: false, reason };
      if (answer.action !== 'accept') return null;
      const decision = answer.content?.decision;
      return decision === 'approve' || decision === 'reject' ? { approve: decision === 'approve', reason } : null;
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
   * Ask the person through elicitation when the client declared it, waiting at most this long (ms); undefined
   * where the door cannot (stateless HTTP, see registerMcp).
   */
  elicitWaitMs?: number | undefined;
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
    if (confirm && server.getClientCapabilities()?.elicitation?.form) caller.confirm = confirm;
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
function toolCallNameOf(body: unknown): string | null {
  const first: unknown = Array.isArray(body) ? body[0] : body;
  if (!first || typeof first !== 'object') return null;
  const msg = first as { method?: unknown; params?: { name?: unknown } };
  return msg.method === 'tools/call' && typeof msg.params?.name === 'string' ? msg.params.name : null;
}

export interface McpHttpOptions {
  pipeline: Pipeline;
  /** Lists each caller's tools (tools/list answers like GET /v1/tools). */
  policy: PolicyService;
  version: string;
}

export async function registerMcp(app: FastifyInstance, opts: McpHttpOptions): Promise<void> {
  const { pipeline } = opts;
  const jsonRpcError = (message: string) => ({ jsonrpc: '2.0', error: { code: -32001, message }, id: null });

  app.post('/mcp', { schema: { hide: true } }, async (req, reply) => {
    // The same tokens as /v1, refused before any JSON-RPC is read.
    const auth = await pipeline.authenticate(req.headers.authorization, req.ip);
    if (!auth.ok) {
      // A refused tools/call gets its audit line, like a refused REST call.
      const tool = toolCallNameOf(req.body);
      if (tool !== null) pipeline.refuse({ authorization: undefined, clientIp: req.ip, requestId: String(req.id) }, tool, auth.error, reply.elapsedTime);
      for (const [k, v] of Object.entries(auth.headers)) void reply.header(k, v);
      return reply.code(auth.error.httpStatus).send(jsonRpcError(auth.error.message));
    }
    const project = req.headers['x-project-id'];
    const switches = req.headers['x-toolgate-switches'];
    const callerFor = (signal: AbortSignal): CallerInfo => ({
      authorization: req.headers.authorization,
      admitted: auth.admission,
      clientIp: req.ip,
      projectId: typeof project === 'string' && project !== '' ? project : undefined,
      switches: typeof switches === 'string' ? switches : undefined,
      requestId: String(req.id),
      signal,
    });
    // No elicitation here: a stateless request does not know the client's capabilities (they came with an
    // initialize on another request, maybe to another replica), and the client would POST its answer to yet
    // another server instance. Such clients get the pending answer and repeat with approval_id.
    const server = createMcpServer({
      version: opts.version,
      pipeline,
      callerFor,
      toolsFor: async () => opts.policy.toolsFor(auth.principal, switches),
    });
    // Stateless: no session id; plain JSON answers instead of an SSE stream (nothing is streamed).
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });

  // Stateless: no server-sent stream to open (GET) and no session to end (DELETE).
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
