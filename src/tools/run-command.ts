// run_command: one command (tests, a linter, a build) in the bubblewrap sandbox of src/exec/, with the
// project at /workspace. Off unless the operator sets TOOLGATE_EXEC=sandboxed; the contract is
// docs/run-command.md.
import { lstatSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { E } from '../errors.js';
import { clearSetIdBits, compare, MAX_CHANGES_LISTED, projectBytes, snapshot, type FileChange, type Snapshot } from '../exec/changes.js';
import { inRoot, runSandboxed, WORKSPACE_MOUNT, type RunOutcome, type StopReason } from '../exec/sandbox.js';
import type { ExecSettings } from '../exec/settings.js';
import { entryOf, type ResolvedPath } from '../workspace/sandbox.js';
import type { Workspace } from '../workspace/workspace.js';
import { defineTool, type ToolContext, type ToolResult } from './define.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Variables that change how the loader or the shell runs every program (a preloaded library, another
 * library path, a startup script): refused, so that `env` cannot turn a named allowed command into another.
 */
const DENIED_ENV = new Set(['LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'LD_DEBUG', 'LD_PROFILE', 'GCONV_PATH', 'BASH_ENV', 'ENV', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'IFS', 'PATH', 'HOME', 'NODE_OPTIONS', 'PYTHONSTARTUP', 'PERL5OPT', 'RUBYOPT']);
const MAX_ENV = 64;
const MAX_COMMAND_CHARS = 16 * 1024;
const MAX_STDIN_BYTES = 1024 * 1024;
/** Paths one sandbox hides (each is a mount): a walk never enters a hidden directory, so this is a lot. */
const MAX_HIDDEN = 4096;

const Input = z
  .strictObject({
    command: z.string().min(1).max(MAX_COMMAND_CHARS).optional().describe('A command line run by /bin/sh -c (pipes, &&, redirections work). Give this or argv.'),
    argv: z.array(z.string().max(MAX_COMMAND_CHARS)).min(1).max(1000).optional().describe('A program and its arguments, run without a shell. Give this or command.'),
    cwd: z.string().default('.').describe('Directory to run in, relative to the project root (seen as /workspace inside).'),
    timeout_s: z.number().int().min(1).optional().describe('Seconds before the command and every process it started are killed (at most the service limit, TOOLGATE_EXEC_TIMEOUT_S).'),
    env: z.array(z.string().max(4096)).max(MAX_ENV).optional().describe('Extra environment variables as NAME=value (names like NAME_1; loader and shell variables such as LD_PRELOAD are refused). The command starts from PATH, HOME=/tmp and LANG only.'),
    stdin: z.string().optional().describe('Text given to the command on its standard input (default: empty).'),
  })
  .superRefine((v, ctx) => {
    if ((v.command === undefined) === (v.argv === undefined)) ctx.addIssue({ code: 'custom', message: 'give exactly one of command (a shell line) or argv (an array)', path: ['command'] });
  });

const Change = z.object({
  path: z.string(),
  change: z.enum(['created', 'changed', 'removed']),
  kind: z.enum(['file', 'directory', 'symlink', 'other']),
  size: z.number().int().nullable(),
});

const Output = z.object({
  command: z.string().describe('What ran, as one line (argv joined with spaces, for display).'),
  cwd: z.string(),
  exit_code: z.number().int().nullable().describe('The exit status; 128+N when the command died of signal N (as a shell reports it); null when it was killed by the service.'),
  signal: z.string().nullable().describe('The signal the command died of (SIGKILL when the service stopped it).'),
  timed_out: z.boolean(),
  stopped_by: z.enum(['timeout', 'cancelled', 'quota_exceeded', 'shutdown']).nullable().describe('Why the service killed the command, or null when it ended by itself.'),
  stdout: z.string(),
  stderr: z.string(),
  stdout_bytes: z.number().int().describe('Bytes the command wrote to stdout in all.'),
  stderr_bytes: z.number().int(),
  stdout_omitted_bytes: z.number().int().describe('Bytes left out between the head and the tail kept (0: stdout is whole).'),
  stderr_omitted_bytes: z.number().int(),
  duration_ms: z.number().int(),
  files_changed: z.array(Change).describe('Project entries the command created, changed or removed (a walk before and after; .git and node_modules included).'),
  files_changed_truncated: z.boolean().describe('The walk stopped at its entry or time limit, or more changes than listed: files_changed is incomplete.'),
});

type Out = z.output<typeof Output>;

function checkEnv(env: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of env ?? []) {
    const eq = item.indexOf('=');
    if (eq < 0) throw E.envEntryInvalid(item);
    const name = item.slice(0, eq);
    if (!ENV_NAME.test(name)) throw E.envNameInvalid(name);
    if (DENIED_ENV.has(name) || name.startsWith('LD_')) throw E.envNameRefused(name);
    const value = item.slice(eq + 1);
    if (name in out) throw E.envNameTwice(name);
    if (value.includes('\0')) throw E.envValueNul(name);
    out[name] = value;
  }
  return out;
}

/** The command as one display line (audit, approval, answer). */
export function commandText(input: { command?: string | undefined; argv?: readonly string[] | undefined }): string {
  if (input.command !== undefined) return input.command;
  return (input.argv ?? []).map((a) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** Characters of a shell line that is plain words (no quoting, expansion, redirection or control operator). */
const PLAIN_WORDS = /^[A-Za-z0-9_./:=@%+,\s-]+$/;

/**
 * The words policy `commands:` rules match: argv as given, a shell line only when it is plain words. A call
 * with `env` matches no such rule (variables can change what a named command does), so it asks.
 */
export function commandWords(input: { command?: string | undefined; argv?: readonly string[] | undefined; env?: readonly string[] | undefined }): readonly string[] | null {
  if (input.env && input.env.length > 0) return null;
  if (input.argv) return input.argv;
  const line = (input.command ?? '').trim();
  return PLAIN_WORDS.test(line) ? line.split(/\s+/) : null;
}

/** A hidden symbolic link stays: its target is decided by its own path, and /dev/null cannot be bound over a link. */
function notSymlink(p: string): boolean {
  try {
    return !lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function execOf(limits: { exec?: ExecSettings }): ExecSettings {
  const exec = limits.exec;
  if (!exec || exec.mode === 'off') throw E.execOff();
  return exec;
}

export const runCommand = defineTool({
  name: 'run_command',
  title: 'Run command',
  description:
    'Run a command (tests, a linter, a build, a script) in a sandbox: the project is at /workspace (read-write, nothing else is writable but a fresh /tmp), no network unless the operator allows it (and then never the service host), an empty environment plus PATH, HOME=/tmp, LANG and your env, limited time, CPU, memory, processes and file size. Answers exit_code, stdout and stderr (head and tail kept when long), and files_changed: what the command created, changed or removed in the project.',
  risk: 'execute',
  riskLevel: 'high',
  openWorld: false,
  input: Input,
  example: { command: 'ls -la' },
  output: Output,
  offered: (config) => config.exec !== 'off',
  // A command can read the whole project: it is decided like a read as well, and what a read may not see
  // (the walk leaves it out) is hidden inside the sandbox (docs/run-command.md, "Path rules").
  viewing: () => true,
  commandWords: (input) => commandWords(input),
  approvalPreview: (input) => ({
    summary: `Run '${commandText(input).slice(0, 200)}' in '${input.cwd}'.`,
    preview: [
      `$ cd ${input.cwd === '.' ? WORKSPACE_MOUNT : `${WORKSPACE_MOUNT}/${input.cwd}`}`,
      `$ ${commandText(input)}`,
      ...(input.env ?? []).map((e) => `env ${e}`),
      ...(input.stdin !== undefined ? [`stdin: ${Buffer.byteLength(input.stdin)} bytes`, input.stdin.slice(0, 2000)] : []),
      ...(input.timeout_s !== undefined ? [`timeout: ${input.timeout_s} s`] : []),
    ].join('\n'),
  }),
  async run(ctx, input) {
    const exec = execOf(ctx.ws.limits);
    if (exec.active >= exec.limits.concurrency) {
      throw E.execBusy(exec.active, exec.limits.concurrency);
    }
    exec.active++;
    try {
      return await runOne(ctx, input, exec);
    } finally {
      exec.active--;
    }
  },
});

async function runOne(ctx: ToolContext, input: z.output<typeof Input>, exec: ExecSettings): Promise<ToolResult<Out>> {
  const { env, root, dir } = await checkBeforeRun(ctx, input, exec);
  const ws = ctx.ws;
  const limits = exec.limits;
  const timeoutMs = Math.min(input.timeout_s ?? limits.timeoutS, limits.timeoutS) * 1000;
  // The walks must finish even when the call's own signal has fired (the answer says what the command did).
  const walkSignal = new AbortController().signal;
  const { before, hidden } = await snapshotVisible(ws, root, walkSignal);
  const cwd = dir.realRel === '.' ? WORKSPACE_MOUNT : `${WORKSPACE_MOUNT}/${dir.realRel}`;
  const argv = input.command !== undefined ? ['/bin/sh', '-c', input.command] : (input.argv as string[]);
  const quota = limits.quotaBytes;
  const outcome = await runSandboxed(
    exec,
    { root: ws.root, maskDirs: [...inRoot(ws.root, [ws.stateDir]), ...hidden.dirs], maskFiles: [...inRoot(ws.root, exec.hiddenFiles), ...hidden.files.filter(notSymlink)], cwd, env, argv },
    {
      timeoutMs,
      stdin: input.stdin,
      signal: ctx.signal,
      onOutput: ctx.progress,
      ...(quota > 0 && { check: async (): Promise<StopReason | null> => ((await projectBytes(ws, root, walkSignal)) - before.bytes > quota ? 'quota_exceeded' : null) }),
    },
  );
  // The command ran: its answer stands even when the project cannot be walked again (the service is
  // closing its workspace at shutdown); files_changed is then empty and marked incomplete.
  const after = await snapshot(ws, root, walkSignal).catch(() => null);
  const changes = after ? compare(before, after) : [];
  const setIdCleared = after ? await clearSetIdBits(before, after) : [];
  const truncated = before.truncated || !after || after.truncated || changes.length > MAX_CHANGES_LISTED;
  return commandAnswer(input, dir.realRel, outcome, changes, truncated, setIdCleared);
}

/** The checks before anything runs: the input's limits, cwd a directory of this project, free space on its volume. */
async function checkBeforeRun(ctx: ToolContext, input: z.output<typeof Input>, exec: ExecSettings): Promise<{ env: Record<string, string>; root: ResolvedPath; dir: ResolvedPath }> {
  const env = checkEnv(input.env);
  if (input.stdin !== undefined && Buffer.byteLength(input.stdin) > MAX_STDIN_BYTES) throw E.stdinTooLarge(MAX_STDIN_BYTES);
  if (input.argv?.some((a) => a.includes('\0')) || input.command?.includes('\0')) throw E.commandNul();
  const root = await ctx.resolve('.', { allowRoot: true });
  const dir = await ctx.resolve(input.cwd, { allowRoot: true });
  if (dir.ws !== ctx.ws) throw E.cwdOtherProject();
  if (!dir.stat) throw E.cwdNotFound(dir.rel);
  if (!dir.stat.isDirectory()) throw E.cwdNotDirectory(dir.rel);
  const fsStat = await fs.statfs(entryOf(root.dir, '.'));
  const free = fsStat.bavail * fsStat.bsize;
  if (free < exec.limits.minFreeBytes) throw E.volumeTooFull(free, exec.limits.minFreeBytes);
  return { env, root, dir };
}

/**
 * The project before the command, and what the policy keeps from this caller: the entries the walk leaves
 * out, recorded while it walks, then hidden in the sandbox (a directory under an empty tmpfs, a file under
 * /dev/null). Refused when they are too many to hide or cannot all be found.
 */
async function snapshotVisible(ws: Workspace, root: ResolvedPath, walkSignal: AbortSignal): Promise<{ before: Snapshot; hidden: { dirs: string[]; files: string[] } }> {
  const hidden = { dirs: [] as string[], files: [] as string[] };
  const allows = root.allowsEntry;
  const walkRoot = allows
    ? {
        ...root,
        allowsEntry: (realRel: string, isDir: boolean) => {
          const ok = allows(realRel, isDir);
          if (!ok) (isDir ? hidden.dirs : hidden.files).push(path.join(ws.root, realRel));
          return ok;
        },
      }
    : root;
  const before = await snapshot(ws, walkRoot, walkSignal);
  if (hidden.dirs.length + hidden.files.length > MAX_HIDDEN) {
    throw E.tooManyHiddenPaths(hidden.dirs.length + hidden.files.length, MAX_HIDDEN);
  }
  if (allows && before.truncated) {
    throw E.hiddenPathsUnknown();
  }
  return { before, hidden };
}

/** What the command did, for the caller (output, exit, changed files) and for the audit log. */
function commandAnswer(input: z.output<typeof Input>, cwdRel: string, outcome: RunOutcome, changes: FileChange[], truncated: boolean, setIdCleared: string[]): ToolResult<Out> {
  const listed: FileChange[] = changes.slice(0, MAX_CHANGES_LISTED);
  const text = commandText(input);
  const data: Out = {
    command: text,
    cwd: cwdRel,
    exit_code: outcome.exitCode,
    signal: outcome.signal,
    timed_out: outcome.stoppedBy === 'timeout',
    stopped_by: outcome.stoppedBy,
    stdout: outcome.stdout.text,
    stderr: outcome.stderr.text,
    stdout_bytes: outcome.stdout.bytes,
    stderr_bytes: outcome.stderr.bytes,
    stdout_omitted_bytes: outcome.stdout.omitted,
    stderr_omitted_bytes: outcome.stderr.omitted,
    duration_ms: Math.round(outcome.durationMs),
    files_changed: listed,
    files_changed_truncated: truncated,
  };
  const how = outcome.stoppedBy ? `was stopped (${outcome.stoppedBy})` : outcome.signal ? `died of ${outcome.signal}` : `exited ${String(outcome.exitCode)}`;
  const cut = outcome.stdout.omitted + outcome.stderr.omitted > 0 ? ` Output cut: ${outcome.stdout.omitted + outcome.stderr.omitted} bytes left out between head and tail.` : '';
  const walkNote =
    (truncated ? ' files_changed is incomplete (the walk reached its limit).' : '') +
    (setIdCleared.length > 0 ? ` Set-user/group-ID bits cleared on: ${setIdCleared.slice(0, 10).join(', ')}.` : '');
  return {
    data,
    text: `'${text.slice(0, 200)}' ${how} after ${data.duration_ms} ms; ${changes.length} project entr${changes.length === 1 ? 'y' : 'ies'} changed.${cut}${walkNote}`,
    stats: { duration_ms: data.duration_ms, files_changed: changes.length },
    partial: outcome.stoppedBy !== null || cut !== '' || truncated,
    pathResolved: cwdRel,
    audit: {
      exec: {
        command: text.slice(0, 1000),
        cwd: cwdRel,
        exit_code: outcome.exitCode,
        signal: outcome.signal,
        stopped_by: outcome.stoppedBy,
        duration_ms: data.duration_ms,
        files_changed: listed.slice(0, 100).map((c) => `${c.change[0]} ${c.path}`),
        files_changed_count: changes.length,
        ...(setIdCleared.length > 0 && { set_id_cleared: setIdCleared.slice(0, 100) }),
      },
    },
  };
}
