// JSON-RPC shapes both MCP modules read without the SDK: the route module (./mcp.ts), loaded at start, and the
// door (./mcp-http.ts), loaded at the first POST.

/** A JSON-RPC error with no id, as the door answers a request it refuses before reading it. */
export function jsonRpcError(message: string, data?: Record<string, unknown>) {
  return { jsonrpc: '2.0', error: { code: -32001, message, ...(data && { data }) }, id: null };
}

/** The tool a JSON-RPC tools/call names (the first one of a batch), or null. */
export function toolCallNameOf(body: unknown): string | null {
  const first: unknown = Array.isArray(body) ? body[0] : body;
  if (!first || typeof first !== 'object') return null;
  const msg = first as { method?: unknown; params?: { name?: unknown } };
  return msg.method === 'tools/call' && typeof msg.params?.name === 'string' ? msg.params.name : null;
}
