// Real processes for the process-level tests: the server (src/main.ts) and the `toolgate` command
// (src/cli.ts), run from their build in dist/ (vitest's global set-up builds it when stale), as
// production runs them: a start takes a fraction of what tsx's loader needs to compile every module.
import { spawn, type ChildProcess } from 'node:child_process';
import { compiled, REPO } from '../compiled.js';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  output(): string;
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function baseEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TOOLGATE_')) clean[k] = v;
  return { ...clean, ...env };
}

export async function startServer(env: Record<string, string>, args: string[] = [], entry = 'src/main.ts'): Promise<ServerProcess> {
  const child = spawn(process.execPath, [compiled(entry), ...args], { cwd: REPO, env: baseEnv({ TOOLGATE_PORT: '0', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  // Generous: a guard against a server that never prints, not a measure of how fast it starts.
  const waitForOutput = async (pattern: RegExp, timeoutMs = 120_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(out)) {
      if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}) before printing ${pattern}:\n${out}`);
      if (Date.now() > deadline) throw new Error(`server did not print ${pattern} in ${timeoutMs} ms:\n${out}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  await waitForOutput(/Server listening at http:\/\/127\.0\.0\.1:\d+/);
  const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
  return { child, url: `http://127.0.0.1:${port}`, port, output: () => out, waitForOutput, exited };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (src/main.ts or src/cli.ts), with optional standard input. */
export async function run(entry: string, args: string[], env: Record<string, string> = {}, stdin?: string): Promise<CliResult> {
  const child = spawn(process.execPath, [compiled(entry), ...args], { cwd: REPO, env: baseEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(stdin ?? '');
  // 'close', not 'exit': the exit can come before the last output is read from the pipes (a fast child).
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  return { code, stdout, stderr };
}

export const cli = (args: string[], env: Record<string, string> = {}, stdin?: string) => run('src/cli.ts', args, env, stdin);
