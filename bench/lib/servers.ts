// Child processes under test: toolgate (`node dist/main.js`) and the ceiling servers
// (`node bench/servers/*.mjs`), all started the same way and polled on /readyz.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { BENCH_DIR, options, REPO_DIR } from './options.js';
import { progress, sleep } from './log.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** One GET; resolves with the status (0 when the connection failed). */
export function getStatus(port: number, urlPath: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.setTimeout(5000, () => req.destroy());
  });
}

export interface Server {
  name: string;
  port: number;
  pid: number;
  child: ChildProcess;
  /** Milliseconds from spawn() to the first 200 from /readyz. */
  startMs: number;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  script: string;
  args?: string[];
  env: Record<string, string>;
  nodeArgs?: string[];
  /** stdout and stderr of the child go here (never to the bench's terminal). */
  logFile: string;
  readyPath?: string;
  timeoutMs?: number;
  /** Poll interval of /readyz. */
  pollMs?: number;
}

export async function startServer(opts: StartOptions): Promise<Server> {
  const port = Number(opts.env.PORT ?? opts.env.TOOLGATE_PORT);
  await fs.mkdir(path.dirname(opts.logFile), { recursive: true });
  const log = createWriteStream(opts.logFile, { flags: 'a' });
  await new Promise((resolve) => log.once('open', resolve));
  const t0 = performance.now();
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.script, ...(opts.args ?? [])], {
    cwd: REPO_DIR,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...opts.env },
    stdio: ['ignore', log, log],
  });
  let exited: number | null = null;
  const exitedP = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = code ?? (signal ? 128 : 1);
      resolve();
    });
  });
  const deadline = t0 + (opts.timeoutMs ?? 30_000);
  const readyPath = opts.readyPath ?? '/readyz';
  for (;;) {
    if (exited !== null) {
      log.end();
      const tail = (await fs.readFile(opts.logFile, 'utf8').catch(() => '')).split('\n').slice(-15).join('\n');
      throw new Error(`${opts.name} exited with ${String(exited)} before it was ready; log ${opts.logFile}:\n${tail}`);
    }
    const { status } = await getStatus(port, readyPath);
    if (status === 200) break;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${opts.name} was not ready on :${port}${readyPath} within ${opts.timeoutMs ?? 30_000} ms (log ${opts.logFile})`);
    }
    await sleep(opts.pollMs ?? 5);
  }
  const startMs = performance.now() - t0;
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping) progress(`! ${opts.name} (pid ${String(child.pid)}) exited unexpectedly (${signal ?? `code ${String(code)}`}); its log: ${opts.logFile}`);
  });
  return {
    name: opts.name,
    port,
    pid: child.pid as number,
    child,
    startMs,
    async stop() {
      stopping = true;
      if (exited === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exitedP;
        clearTimeout(timer);
      }
      log.end();
    },
  };
}

/** The toolgate entry point under test (dist/main.js of the working tree, or of a BENCH_REF snapshot). */
let toolgateMain = path.join(REPO_DIR, 'dist', 'main.js');
export function useToolgateMain(main: string): void {
  toolgateMain = main;
}
export const CEILING_SERVER = path.join(BENCH_DIR, 'servers', 'ceiling.mjs');

export interface ToolgateEnv {
  root: string;
  tokensFile: string;
  instanceId: string;
  logLevel: string;
  extra?: Record<string, string>;
}

/** The production settings of the bench: auth via a tokens file, audit and metrics on, a rate limit too high to bite. */
export function toolgateEnv(port: number, e: ToolgateEnv): Record<string, string> {
  return {
    NODE_ENV: 'production',
    TOOLGATE_HOST: '127.0.0.1',
    TOOLGATE_PORT: String(port),
    TOOLGATE_ROOT: e.root,
    TOOLGATE_TOKENS_FILE: e.tokensFile,
    TOOLGATE_RATE_LIMIT: '1000000000',
    TOOLGATE_AUDIT: 'true',
    TOOLGATE_AUDIT_STDOUT: 'true',
    TOOLGATE_METRICS: 'true',
    TOOLGATE_LOG_LEVEL: e.logLevel,
    TOOLGATE_INSTANCE_ID: e.instanceId,
    ...e.extra,
  };
}

/** Node flags of every toolgate the bench starts: the heap limit of the chart's pod (options.toolgateHeapMiB). */
export function toolgateNodeArgs(): string[] {
  return options.toolgateHeapMiB > 0 ? [`--max-old-space-size=${options.toolgateHeapMiB}`] : [];
}

export async function startToolgate(name: string, e: ToolgateEnv, logFile: string, nodeArgs: string[] = [], timeoutMs?: number): Promise<Server> {
  const port = await freePort();
  return startServer({ name, script: toolgateMain, env: toolgateEnv(port, e), logFile, nodeArgs: [...toolgateNodeArgs(), ...nodeArgs], timeoutMs });
}

export async function startCeiling(name: string, mode: 'const' | 'file' | 'file-sync', file: string | null, logFile: string, timeoutMs?: number): Promise<Server> {
  return startCeilingWith(name, { CEILING_MODE: mode, ...(file && { CEILING_FILE: file }) }, logFile, timeoutMs);
}

/** The read floor (CEILING_MODE=guarded-read): the workspace, the sha256 of the bench's token, its own audit file. */
export function startReadFloor(name: string, root: string, tokenSha256: string, auditFile: string, logFile: string): Promise<Server> {
  return startCeilingWith(name, { CEILING_MODE: 'guarded-read', CEILING_ROOT: root, CEILING_TOKEN_SHA256: tokenSha256, CEILING_AUDIT_FILE: auditFile }, logFile);
}

/** The write floor (CEILING_MODE=guarded-write): as the read floor, with a state directory for its locks and backups. */
export function startWriteFloor(name: string, root: string, state: string, tokenSha256: string, auditFile: string, logFile: string): Promise<Server> {
  return startCeilingWith(name, { CEILING_MODE: 'guarded-write', CEILING_ROOT: root, CEILING_STATE: state, CEILING_TOKEN_SHA256: tokenSha256, CEILING_AUDIT_FILE: auditFile, ...(process.env.CEILING_LOCK && { CEILING_LOCK: process.env.CEILING_LOCK }), ...(process.env.CEILING_WRITE_ANSWER && { CEILING_WRITE_ANSWER: process.env.CEILING_WRITE_ANSWER }), ...(process.env.CEILING_META && { CEILING_META: process.env.CEILING_META }) }, logFile);
}

async function startCeilingWith(name: string, env: Record<string, string>, logFile: string, timeoutMs?: number): Promise<Server> {
  const port = await freePort();
  return startServer({
    name,
    script: CEILING_SERVER,
    env: { NODE_ENV: 'production', PORT: String(port), ...env },
    logFile,
    timeoutMs,
  });
}
