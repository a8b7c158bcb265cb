// Helpers of the MCP tests: the SDK Client over the app's /mcp and over `toolgate mcp` on stdio.
import path from 'node:path';
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type { Envelope } from '../../src/envelope.js';
import { compiled } from '../compiled.js';
import { listenOn } from '../helpers.js';

export const REPO = path.resolve(import.meta.dirname, '../..');

export async function mcpUrl(app: FastifyInstance): Promise<string> {
  return `${await listenOn(app)}/mcp`;
}

/**
 * The SDK client over Streamable HTTP. `transport` adds transport options (a `fetch` that sends some
 * messages to another replica); `setup` runs before connecting, like stdioClient's.
 */
export async function httpClient(
  url: string,
  headers: Record<string, string> = {},
  options?: ClientOptions,
  transport: Omit<StreamableHTTPClientTransportOptions, 'requestInit'> = {},
  setup?: (c: Client) => void,
): Promise<Client> {
  const c = new Client({ name: 'toolgate-test', version: '1.0.0' }, options);
  setup?.(c);
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { ...transport, requestInit: { headers } }));
  return c;
}

/**
 * `toolgate mcp --root <root>` as a child process with `env` on top of this one's. `setup` runs before
 * connecting, for handlers that must exist when the client initializes (elicitation).
 */
export async function stdioClient(root: string, env: Record<string, string>, options?: ClientOptions, setup?: (c: Client) => void): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [compiled('src/cli.ts'), 'mcp', '--root', root],
    env: { ...(process.env as Record<string, string>), TOOLGATE_AUDIT_STDOUT: 'false', ...env },
    cwd: REPO,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'toolgate-test', version: '1.0.0' }, options);
  setup?.(client);
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

export const envelopeOf = (r: unknown) => (r as CallToolResult).structuredContent as unknown as Envelope;
export const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
export const contentOf = (r: unknown) => (r as CallToolResult).content;
