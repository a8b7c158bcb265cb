// MCP door (official SDK): Streamable HTTP at POST /mcp, stateless (any replica answers a tools/call without a
// prior session), and the server `toolgate mcp` runs on stdio. tools/call goes through the same pipeline as
// REST; structuredContent is the envelope. This module registers the routes only: the SDK and the door
// (src/transports/mcp-http.ts) are imported at the first POST, so a service that is never asked over MCP
// does not load them (docs/mcp.md).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Pipeline } from '../pipeline/execute-tool.js';
import type { PolicyService } from '../pipeline/policy-gate.js';
import { refuseToolCall, type GateRefusal, type HttpGate } from './http-gate.js';
import type { McpPostHandler } from './mcp-http.js';
import { jsonRpcError, toolCallNameOf } from './mcp-messages.js';

/** The longest an HTTP call waits for its person's answer: 30 s, as over WebSocket. */
const MAX_ELICIT_WAIT_S = 30;

export interface McpHttpOptions {
  pipeline: Pipeline;
  /** Lists each caller's tools (tools/list answers like GET /v1/tools) and holds the shared approval store. */
  policy: PolicyService;
  version: string;
  /** The HTTP gate: /mcp is authenticated after its body is read, so a refused tools/call is audited by name. */
  gate: HttpGate;
  /** Longest wait for an elicitation answer, in seconds (default: TOOLGATE_APPROVAL_MAX_WAIT_S, at most 30). */
  elicitWaitS?: number;
}

export async function registerMcp(app: FastifyInstance, opts: McpHttpOptions): Promise<void> {
  const elicitWaitMs = Math.min(opts.elicitWaitS ?? app.toolgate.config.approvalMaxWaitS, MAX_ELICIT_WAIT_S) * 1000;
  // Registered now: no hook can be added once the app is ready, and the door is built later.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  let door: Promise<McpPostHandler> | undefined;
  const loadDoor = (): Promise<McpPostHandler> =>
    (door ??= import('./mcp-http.js').then(
      (m) => m.createMcpDoor({ pipeline: opts.pipeline, policy: opts.policy, version: opts.version, elicitWaitMs, closing: closing.signal }),
      (err: unknown) => {
        // A failed import is tried again at the next POST instead of failing every later one the same way.
        door = undefined;
        throw err;
      },
    ));
  // The same tokens as /v1, refused before any JSON-RPC is handled; a refused tools/call gets its audit line.
  const refuseCaller: GateRefusal = (req, reply, error, headers) => {
    const tool = toolCallNameOf(req.body);
    if (tool !== null) refuseToolCall(opts.pipeline, req, reply, tool, error);
    for (const [k, v] of Object.entries(headers)) void reply.header(k, v);
    return reply.code(error.httpStatus).send(jsonRpcError(error.message));
  };
  app.post('/mcp', { schema: { hide: true }, config: { gateAfterBody: true }, preHandler: opts.gate.afterBody(refuseCaller) }, async (req, reply) => (await loadDoor())(req, reply));

  // Stateless: no server-sent stream to open (GET) and no session to end (DELETE). A client sends them with its
  // session id; the SDK client takes the 405 as "no stream" (the spec allows it).
  const notAllowed = { schema: { hide: true } };
  const refuse = (_req: unknown, reply: FastifyReply) =>
    reply.code(405).header('allow', 'POST').send(jsonRpcError('Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST.'));
  app.get('/mcp', notAllowed, refuse);
  app.delete('/mcp', notAllowed, refuse);
}
