// `toolgate mcp`: the MCP server on stdin/stdout, with the settings of `toolgate serve` (variables and flags).
// stdout carries JSON-RPC only: logs and audit lines that `serve` prints go to stderr here.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildApp, VERSION } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { parseSettingFlags, UsageError } from './serve.js';
import { stdioCaller } from './transports/mcp.js';
import { createMcpServer, toolsForCaller } from './transports/mcp-server.js';

export async function runMcpStdio(argv: readonly string[]): Promise<void> {
  let app;
  try {
    const config = loadConfig(process.env, parseSettingFlags(argv));
    app = await buildApp(config, {
      logger: { level: config.logLevel, stream: process.stderr },
      auditStream: config.auditStdout ? process.stderr : null,
    });
  } catch (err) {
    const usage = err instanceof ConfigError || err instanceof UsageError;
    process.stderr.write(`toolgate: ${usage ? '' : 'failed to start: '}${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(usage ? 2 : 1);
  }
  const { pipeline, policy, config } = app.toolgate;
  const server = createMcpServer({
    version: VERSION,
    pipeline,
    callerFor: (signal) => stdioCaller(signal),
    toolsFor: () => toolsForCaller(pipeline, policy, stdioCaller(undefined)),
    // One client holds this connection, so it can be asked: as long as a REST caller may wait (Prefer: wait).
    elicitWaitMs: config.approvalMaxWaitS * 1000,
  });
  const transport = new StdioServerTransport();
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    // Calls in flight finish and the audit is flushed before the process ends.
    await server.close().catch(() => undefined);
    await app.close();
    process.exit(0);
  };
  transport.onclose = () => void close();
  process.stdin.once('end', () => void close());
  process.once('SIGTERM', () => void close());
  process.once('SIGINT', () => void close());
  await server.connect(transport);
}
