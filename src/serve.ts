// Running the service as a process (`toolgate serve`, `npm start`): configuration from TOOLGATE_* and
// matching CLI flags, the loopback-without-tokens check, listen, and graceful shutdown on SIGTERM.
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, flagOf, isSwitch, loadConfig, SETTINGS, type Config, type SettingKey } from './config.js';
import { assertSafeBind } from './ops/auth.js';
import { PolicyError } from './policy/policy-error.js';

export class UsageError extends Error {}

const KEYS = Object.keys(SETTINGS) as SettingKey[];

/**
 * Settings given as flags (`--root DIR`, `--port=N`, `--allow-absolute`, `--no-audit`) -> overrides
 * for loadConfig, which validates them like the variables and names the flag in its message.
 */
export function parseSettingFlags(argv: readonly string[]): Partial<Record<SettingKey, string>> {
  const byFlag = new Map(KEYS.map((k) => [flagOf(k), k]));
  const normalized: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [name, inline] = splitFlag(arg);
    const negated = name.startsWith('--no-') ? byFlag.get(`--${name.slice(5)}`) : undefined;
    if (negated !== undefined && isSwitch(negated) && inline === undefined) {
      normalized.push(`${flagOf(negated)}=false`);
      continue;
    }
    const key = byFlag.get(name);
    const next = argv[i + 1];
    if (key !== undefined && isSwitch(key) && inline === undefined && (next === undefined || next.startsWith('--'))) {
      normalized.push(`${name}=true`);
      continue;
    }
    normalized.push(arg);
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: normalized,
      options: Object.fromEntries(KEYS.map((k) => [flagOf(k).slice(2), { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message.split('\n')[0] ?? 'invalid option'} (toolgate serve --help lists the options)`);
  }
  const out: Partial<Record<SettingKey, string>> = {};
  for (const k of KEYS) {
    const v = values[flagOf(k).slice(2)];
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return eq < 0 ? [arg, undefined] : [arg.slice(0, eq), arg.slice(eq + 1)];
}

/** `toolgate serve --help`: every setting with its flag, variable and default. */
export function serveHelp(): string {
  const rows = KEYS.map((k) => {
    const s = SETTINGS[k];
    const flag = isSwitch(k) ? `${flagOf(k)}[=BOOL]` : `${flagOf(k)} VALUE`;
    const def = s.default === undefined ? '' : ` [default: ${s.default}]`;
    return `  ${flag.padEnd(34)} ${s.env}${def}\n      ${s.doc.replace(/`/g, '')}`;
  });
  return `Usage: toolgate serve [options]\n\nEvery option can also be set with its environment variable; a flag wins.\n\n${rows.join('\n')}\n`;
}

export interface Served {
  app: FastifyInstance;
  config: Config;
}

/** Loads the configuration, builds the app and listens; SIGTERM/SIGINT close it gracefully and exit 0. */
export async function serve(overrides: Partial<Record<SettingKey, string>> = {}, env: NodeJS.ProcessEnv = process.env): Promise<Served> {
  const config = loadConfig(env, overrides);
  const logger = {
    level: config.logLevel,
    ...(process.stdout.isTTY && { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }),
  };
  const app = await buildApp(config, { logger });
  try {
    assertSafeBind(config.host, app.toolgate.auth);
  } catch (err) {
    await app.close();
    throw err;
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    // The listener closes before the line says so: app.close() reaches server.close() only after its
    // preClose hooks, a few turns later, and a client that read the line could still connect meanwhile.
    if (app.server.listening) app.server.close();
    app.log.info({ signal }, 'shutting down: no new connections; waiting for calls in flight');
    app.toolgate.shuttingDown = true;
    const force = setTimeout(() => {
      app.log.error(`calls still in flight after ${config.shutdownTimeoutMs} ms (TOOLGATE_SHUTDOWN_TIMEOUT_MS); exiting`);
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    try {
      // Stops accepting, lets requests in flight (and their writes) finish, then runs onClose (audit flush).
      await app.close();
      app.log.info('shut down cleanly');
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'error while shutting down');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new ConfigError(`Port ${config.port} on ${config.host} is already in use (EADDRINUSE): stop the process that holds it, or choose another port with --port N (TOOLGATE_PORT).`);
    }
    throw err;
  }
  logStartup(app, config);
  return { app, config };
}

/** What an operator looks for after start: which policy is in force, and where a person approves. */
function logStartup(app: FastifyInstance, config: Config): void {
  const { policy } = app.toolgate.policy;
  if (policy) {
    const rules = policy.rules.length;
    app.log.info({ policy: policy.file, rules, switches: [...policy.switches.keys()] }, `policy loaded: ${policy.file} (${rules} rule${rules === 1 ? '' : 's'})`);
  } else {
    app.log.info('no policy (TOOLGATE_POLICY unset): no call needs approval');
  }
  const addr = app.server.address();
  const port = addr && typeof addr === 'object' ? addr.port : config.port;
  // A wildcard address is reached on loopback from the same machine; a specific one by itself.
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  app.log.info({ console: `http://${host}:${port}/console` }, `approval console at http://${host}:${port}/console`);
}

/** Process entry shared by `node dist/main.js [flags]` and `toolgate serve [flags]`. */
export async function runServe(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(serveHelp());
    return;
  }
  try {
    await serve(parseSettingFlags(argv));
  } catch (err) {
    // A policy that does not load stops the service: it is never ignored (docs/approvals.md). Its message names file:line:col.
    if (err instanceof ConfigError || err instanceof UsageError || err instanceof PolicyError) {
      process.stderr.write(`toolgate: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`toolgate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
