// MCP door (official SDK): Streamable HTTP at POST /mcp, stateless (a server and transport per request, so
// any replica answers a tools/call without a prior session), and the server `toolgate mcp` runs on stdio.
// tools/call goes through the same pipeline as REST; structuredContent is the envelope.
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { envelopeSchema, type Envelope } from '../envelope.js';
import type { CallerInfo, Pipeline, ToolCallOutcome } from '../pipeline/execute-tool.js';
import { toolAnnotations, type ToolDefinition } from '../tools/define.js';
import { TOOLS } from '../tools/registry.js';
import { inputJsonSchema } from './function-defs.js';

let toolList: Tool[] | null = null;

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  // Clients validate with their own draft (the SDK's ajv is draft-07): no $schema that would pin another.
  delete out.$schema;
  return out;
}

/** Every tool as MCP lists it: input schema, the envelope as output schema, and its annotations. */
export function mcpTools(): Tool[] {
  toolList ??= TOOLS.map((t: ToolDefinition) => {
    const { title, ...hints } = toolAnnotations(t);
    return {
      name: t.name,
      title,
      description: t.description,
      inputSchema: inputJsonSchema(t) as Tool['inputSchema'],
      outputSchema: jsonSchemaOf(envelopeSchema(t.output), 'output') as Tool['outputSchema'],
      annotations: { title, ...hints },
    };
  });
  return toolList;
}

const MAX_JSON_TEXT = 20_000;

/** What the model reads: the summary, then the part it acts on (content, hits, diff; the error and what to do). */
export function modelText(envelope: Envelope): string {
  if (envelope.error) {
    const details = envelope.error.details === undefined ? '' : `\nDetails: ${JSON.stringify(envelope.error.details).slice(0, MAX_JSON_TEXT)}`;
    return `Error ${envelope.error.code}: ${envelope.error.message}${details}`;
  }
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

export function mcpResult(outcome: ToolCallOutcome): CallToolResult {
  const { envelope } = outcome;
  return {
    content: [{ type: 'text', text: modelText(envelope) }],
    structuredContent: envelope as unknown as Record<string, unknown>,
    isError: envelope.status === 'error',
  };
}

/**
 * One MCP server over the pipeline. The low-level Server, not McpServer: the tools are listed with the JSON
 * Schemas of the registry, and the arguments go unvalidated to the pipeline, which answers INVALID_PARAM as an
 * envelope like on every other door instead of a protocol error.
 */
export function createMcpServer(version: string, callerFor: (signal: AbortSignal) => CallerInfo, pipeline: Pipeline): Server {
  const server = new Server({ name: 'toolgate', version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: mcpTools() }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const outcome = await pipeline.executeTool(callerFor(extra.signal), req.params.name, req.params.arguments ?? {});
    return mcpResult(outcome);
  });
  return server;
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
    const server = createMcpServer(opts.version, callerFor, pipeline);
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
export function stdioCaller(signal: AbortSignal, env: NodeJS.ProcessEnv = process.env): CallerInfo {
  return {
    authorization: env.TOOLGATE_TOKEN ? `Bearer ${env.TOOLGATE_TOKEN}` : undefined,
    clientIp: '127.0.0.1',
    projectId: env.TOOLGATE_PROJECT || undefined,
    requestId: randomUUID(),
    signal,
  };
}
