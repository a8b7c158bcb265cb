// `toolgate mcp`: the MCP server on stdin/stdout, with the settings of `toolgate serve` (variables and flags).
// stdout carries JSON-RPC only: logs and audit lines that `serve` prints go to stderr here.
import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { pino } from 'pino';
import { VERSION } from './version.js';
import { ConfigError, defaultInstanceId, loadConfig } from './config.js';
import { loggerOptions } from './ops/operations.js';
import type { CallerInfo } from './pipeline/execute-tool.js';
import { openService, type Service } from './pipeline/service.js';
import { parseSettingFlags, UsageError } from './serve.js';
import { createMcpServer, toolsForCaller } from './transports/mcp-server.js';

export async function runMcpStdio(argv: readonly string[]): Promise<void> {
  let service: Service;
  // No HTTP app: the pipeline alone, its logs on stderr (stdout is the protocol's).
  let log = pino({ enabled: false });
  try {
    const config = loadConfig(process.env, parseSettingFlags(argv));
    log = pino(loggerOptions({ level: config.logLevel }) || {}, process.stderr);
    service = await openService(config, {
      version: VERSION,
      instanceId: config.instanceId ?? defaultInstanceId(),
      log,
      auditStream: config.auditStdout ? process.stderr : null,
    });
  } catch (err) {
    const usage = err instanceof ConfigError || err instanceof UsageError;
    process.stderr.write(`toolgate: ${usage ? '' : 'failed to start: '}${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(usage ? 2 : 1);
  }
  const { pipeline, policy, config } = service;
  if (service.weakSandbox) log.warn('/proc/self/fd is missing: TOOLGATE_ALLOW_WEAK_SANDBOX accepts the weaker path-string check (a directory swapped for a symlink during a call can redirect it)');
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
    service.stopAccepting();
    await server.close().catch(() => undefined);
    await service.close();
    process.exit(0);
  };
  transport.onclose = () => void close();
  process.stdin.once('end', () => void close());
  process.once('SIGTERM', () => void close());
  process.once('SIGINT', () => void close());
  await server.connect(transport);
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
