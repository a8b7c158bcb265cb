// The service's version, as /healthz, the MCP handshake and the OpenAPI document report it.
export const VERSION = '0.1.0';
