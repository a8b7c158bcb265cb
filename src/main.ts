// Process entry: configuration, listen, graceful shutdown.
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`toolgate: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = {
    level: config.logLevel,
    ...(process.stdout.isTTY && { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }),
  };
  const app = await buildApp(config, { logger });
  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    app.toolgate.shuttingDown = true;
    await app.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
}

main().catch((err: unknown) => {
  process.stderr.write(`toolgate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
