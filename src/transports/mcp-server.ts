// The MCP server over the pipeline, shared by the HTTP door (src/transports/mcp-http.ts) and `toolgate mcp`
// on stdio: the tools as MCP lists them, a call's envelope as a CallToolResult, approvals asked through
// elicitation. Imported only where MCP is served, so that a start without MCP does not load the SDK.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  type RequestId,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { envelopeSchema, type Envelope } from '../envelope.js';
import type { PolicyService } from '../pipeline/policy-gate.js';
import type { CallerInfo, Pipeline, ToolCallOutcome } from '../pipeline/execute-tool.js';
import { toolAnnotations, type ToolDefinition } from '../tools/define.js';
import type { ConfirmFn, ConfirmRequest } from '../tools/call.js';
import type { ChangeEntry } from '../tools/plan.js';
import { TOOLS } from '../tools/registry.js';
import { loadAttachment, ownerOf } from '../workspace/attachments.js';
import { inputJsonSchema, strictConvertibleJsonSchema } from './function-defs.js';

export const MIB = 1024 * 1024;

/**
 * Decoded image bytes in one result. Model APIs take images up to about 5 MB each and a client forwards the
 * whole result in one message; 3 MiB (4 MiB as base64) keeps a result under both. Past it an image is named in
 * the text instead (attachments stay fetchable with GET /v1/attachments/{id} until they expire).
 */
export const MAX_IMAGE_BYTES_PER_RESULT = 3 * MIB;

/** What a call that waits for a person answers in `data` (any tool, when the policy asks). */
const PendingApprovalData = z.looseObject({
  applied: z.literal(false),
  approval: z.looseObject({ id: z.string(), status: z.string(), expires_at: z.string(), tool: z.string(), path: z.string().nullable(), summary: z.string() }),
});
const APPROVAL_ID = z.string().optional().describe('Repeat of a call that needed approval: the id from data.approval.id, once the user has decided; the other arguments as in the first call.');

// Derived from the tool registry, which never changes: one cache serves every service of the process.
const schemasByTool = new Map<string, { inputSchema: Tool['inputSchema']; outputSchema: Tool['outputSchema'] }>();

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  // Clients validate with their own draft (the SDK's ajv is draft-07): no $schema that would pin another.
  delete out.$schema;
  return out;
}

/**
 * A tool as MCP lists it: input schema (with approval_id for tools that change files), the envelope as output
 * schema, annotations. The input schema is one strict mode takes once a client makes every property required
 * (OpenAI's Agents SDK with convertSchemasToStrict): no oneOf, no keyword strict mode does not support. The
 * arguments are still checked against the tool's own zod schema when the call arrives (the pipeline).
 */
export function mcpTool(t: ToolDefinition): Tool {
  let schemas = schemasByTool.get(t.name);
  if (!schemas) {
    schemas = {
      inputSchema: strictConvertibleJsonSchema(t.mutates ? jsonSchemaOf(t.input.extend({ approval_id: APPROVAL_ID }), 'input') : inputJsonSchema(t)) as Tool['inputSchema'],
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
  // Joined, not copied: the HTTP door writes this block from its two parts (CONTENT_BLOCKS).
  if (typeof data.content === 'string') return `${envelope.text}\n\n${data.content}`;
  const parts = [envelope.text];
  if (typeof data.diff_preview === 'string') parts.push(data.diff_preview === '' ? '(no change)' : data.diff_preview);
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

type AttachmentLoader = (id: string) => Promise<{ media_type: string; data: Buffer } | null>;
interface AttachmentRefLike {
  id: string;
  name: string;
  media_type: string;
  bytes: number;
}

/**
 * Text blocks that are the envelope's text, a blank line and the file's content (`data.content`, which
 * structuredContent carries too): the HTTP door writes that content's JSON once for both (mcp-http.ts, directAnswerJson).
 */
export const CONTENT_BLOCKS = new WeakSet<object>();

export async function mcpResult(outcome: ToolCallOutcome, loadAttachment?: AttachmentLoader): Promise<CallToolResult> {
  const { envelope } = outcome;
  const text = modelText(envelope);
  const first = { type: 'text' as const, text };
  const media = envelope.status === 'error' ? null : mediaOf(envelope);
  const data = envelope.data as { content?: unknown } | null;
  // modelText's text, blank line and content: the block a read answers with.
  if (typeof data?.content === 'string' && !envelope.error && !media && !pendingApprovalOf(envelope) && text.length === envelope.text.length + 2 + data.content.length) CONTENT_BLOCKS.add(first);
  const content: CallToolResult['content'] = [first];
  const notShown: string[] = [];
  let budget = MAX_IMAGE_BYTES_PER_RESULT;
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
    CONTENT_BLOCKS.delete(first);
    content[0].text += `\n\nNot shown as images (over ${MAX_IMAGE_BYTES_PER_RESULT / MIB} MiB of images in one result, or a type models do not take): ${notShown.join('; ')}.`;
  }
  // Last, the envelope's status, which the text does not say (partial: cut short, or waiting for approval). It also
  // keeps the text from standing alone: LangChain's adapter hands its model a lone text block together with the
  // whole structuredContent (the file a second time), and several blocks as they are (docs/mcp.md).
  if (envelope.status !== 'error') content.push({ type: 'text', text: `Status: ${envelope.status}.` });
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

/** The `_meta` key of a tools/call that names its agent turn. */
export const TURN_META = 'toolgate/turn';

export interface McpServerOptions {
  version: string;
  pipeline: Pipeline;
  /**
   * The caller of one tools/call (the door's credentials, project, switches). `requestId` is the JSON-RPC id
   * the server knows the request by: the HTTP door finds the POST that carried it by it.
   */
  callerFor(signal: AbortSignal, requestId: RequestId): CallerInfo;
  /** The tools the caller of this request may use, as the policy describes them (tools/list); throws an McpError to refuse. */
  toolsFor(requestId: RequestId): Promise<readonly ToolDefinition[]>;
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
  server.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => ({ tools: mcpTools(await opts.toolsFor(extra.requestId)) }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const caller = opts.callerFor(extra.signal, extra.requestId);
    // Offered only to a client that can answer; the pipeline passes it on only to a caller that may decide its own calls.
    const inBand = confirm && server.getClientCapabilities()?.elicitation?.form ? confirm : opts.confirmFor?.(extra.requestId);
    if (inBand) caller.confirm = inBand;
    return runToolCall(pipeline, caller, req.params, extra.sendNotification);
  });
  return server;
}

/**
 * One tools/call through the pipeline, as the server's handler runs it and the HTTP door's direct path
 * (src/transports/mcp-http.ts). `notify` sends the progress a client asked for with `_meta.progressToken`.
 */
export async function runToolCall(
  pipeline: Pipeline,
  caller: CallerInfo,
  params: CallToolRequest['params'],
  notify?: (notification: ServerNotification) => Promise<void>,
): Promise<CallToolResult> {
  // A client that asked for progress gets a running command's output as it comes (docs/run-command.md).
  const progressToken = params._meta?.progressToken;
  if (progressToken !== undefined && notify) {
    let n = 0;
    caller.progress = (stream, data) => {
      void notify({ method: 'notifications/progress', params: { progressToken, progress: ++n, message: `${stream}: ${data}` } }).catch(() => undefined);
    };
  }
  // The agent turn rides in the request's _meta, beside progressToken (docs/api.md, "Turns, checkpoints and rewind").
  const turn = params._meta?.[TURN_META];
  if (turn !== undefined) caller.turn = turn;
  const outcome = await pipeline.executeTool(caller, params.name, params.arguments ?? {});
  // Attachments are loaded for the same caller and project as the call (the rule of GET /v1/attachments/{id}).
  let resolved: ReturnType<Pipeline['resolveCaller']> | null = null;
  const loadImage: AttachmentLoader = async (id) => {
    resolved ??= pipeline.resolveCaller(caller);
    const call = await resolved.catch(() => null);
    const found = call ? await loadAttachment(call.ws, ownerOf({ actor: call.actor ?? null, clientIp: call.clientIp }), id) : null;
    return found && { media_type: found.ref.media_type, data: found.data };
  };
  return mcpResult(outcome, loadImage);
}

/** The tools for a caller's credentials and switches, or a protocol error when the credentials are refused. */
export async function toolsForCaller(pipeline: Pipeline, policy: PolicyService, caller: CallerInfo): Promise<readonly ToolDefinition[]> {
  const auth = await pipeline.authenticate(caller.authorization, caller.clientIp);
  if (!auth.ok) throw new McpError(ErrorCode.InvalidRequest, auth.error.message);
  return policy.toolsFor(auth.principal, caller.switches);
}
