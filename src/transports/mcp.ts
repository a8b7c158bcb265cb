// MCP door (official SDK): Streamable HTTP at POST /mcp, stateless (any replica answers a tools/call without a
// prior session), and the server `toolgate mcp` runs on stdio. tools/call goes through the same pipeline as
// REST; structuredContent is the envelope. This module registers the routes only: the SDK and the door
// (src/transports/mcp-http.ts) are imported at the first POST, so a service that is never asked over MCP
// does not load them (docs/mcp.md).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PolicyService } from '../ops/policy.js';
import type { CallerInfo, Pipeline } from '../pipeline/execute-tool.js';

export const MIB = 1024 * 1024;

/**
 * Decoded image bytes in one result. Model APIs take images up to about 5 MB each and a client forwards the
 * whole result in one message; 3 MiB (4 MiB as base64) keeps a result under both. Past it an image is named in
 * the text instead (attachments stay fetchable with GET /v1/attachments/{id} until they expire).
 */
export const MAX_IMAGE_BYTES_PER_RESULT = 3 * MIB;

/** The longest an HTTP call waits for its person's answer: 30 s, as over WebSocket. */
const MAX_ELICIT_WAIT_S = 30;

/** A JSON-RPC error with no id, as the door answers a request it refuses before reading it. */
export function jsonRpcError(message: string, data?: Record<string, unknown>) {
  return { jsonrpc: '2.0', error: { code: -32001, message, ...(data && { data }) }, id: null };
}

export interface McpHttpOptions {
  pipeline: Pipeline;
  /** Lists each caller's tools (tools/list answers like GET /v1/tools) and holds the shared approval store. */
  policy: PolicyService;
  version: string;
  /** Longest wait for an elicitation answer, in seconds (default: TOOLGATE_APPROVAL_MAX_WAIT_S, at most 30). */
  elicitWaitS?: number;
}

/** What the door (src/transports/mcp-http.ts) is built from once it is first needed. */
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
  app.post('/mcp', { schema: { hide: true } }, async (req, reply) => (await loadDoor())(req, reply));

  // Stateless: no server-sent stream to open (GET) and no session to end (DELETE). A client sends them with its
  // session id; the SDK client takes the 405 as "no stream" (the spec allows it).
  const notAllowed = { schema: { hide: true } };
  const refuse = (_req: unknown, reply: FastifyReply) =>
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
