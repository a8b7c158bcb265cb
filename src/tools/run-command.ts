// run_command: one command (tests, a linter, a build) in the bubblewrap sandbox of src/exec/, with the
// project at /workspace. Off unless the operator sets TOOLGATE_EXEC=sandboxed; the contract is
// docs/run-command.md.
import fs from 'node:fs/promises';
import { z } from 'zod';
import { E } from '../errors.js';
import { TreeTooLarge } from '../exec/fd-walk.js';
import { bindHeld, dropHeld, HeldRunAltered, HeldRunsFull, holdRun, MAX_HELD_RUNS, takeHeld, type HeldRun } from '../exec/held.js';
import { previewChanges } from './command-preview.js';
import { countLayer, entriesChanged, findHidden, LandingConflict, landSteps, layerBytes, makeRunDir, MAX_CHANGES_LISTED, MAX_LAYER_ENTRIES, MAX_TREE_DEPTH, projectEntries, projectStamp, removeRunDir, scanLayer, sweepRunDirs, type Hidden, type LandResult, type LayerChange, type Step } from '../exec/overlay.js';
import { inRoot, runSandboxed, WORKSPACE_MOUNT, type RunOutcome, type StopReason } from '../exec/sandbox.js';
import type { ExecSettings } from '../exec/settings.js';
import { entryOf, type CommandReview, type ResolvedPath } from '../workspace/sandbox.js';
import type { Workspace } from '../workspace/workspace.js';
import { VersionSchema } from './args.js';
import { announce, ChangeEntrySchema, describeChange, type ChangeEntry, type PlannedChange } from './plan.js';
import { ChangesNeedReview, defineTool, type ToolContext, type ToolResult } from './define.js';
import { landedChanges } from './landed-changes.js';

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
/** Entries of a project an approval of a command can bind to (each is hashed at the request and at the repeat). */
const PROJECT_STAMP_MAX_ENTRIES = 1_000_000;

const Input = z
  .strictObject({
    command: z.string().min(1).max(MAX_COMMAND_CHARS).optional().describe('A command line run by /bin/sh -c (pipes, &&, redirections work). Give this or argv.'),
    argv: z.array(z.string().max(MAX_COMMAND_CHARS)).min(1).max(1000).optional().describe('A program and its arguments, run without a shell. Give this or command.'),
    cwd: z.string().default('.').describe('Directory to run in, relative to the project root (seen as /workspace inside).'),
    timeout_s: z.number().int().min(1).optional().describe('Seconds before the command and every process it started are killed (at most the service limit, TOOLGATE_EXEC_TIMEOUT_S).'),
    env: z.array(z.string().max(4096)).max(MAX_ENV).optional().describe('Extra environment variables as NAME=value (names like NAME_1; loader and shell variables such as LD_PRELOAD are refused). The command starts from PATH, HOME=/tmp and LANG only.'),
    stdin: z.string().optional().describe('Text given to the command on its standard input (default: empty).'),
    dry_run: z.boolean().default(false).describe("Run the command, answer its changes[] with diffs, and land nothing (it still runs: decided like any run)."),
  })
  .superRefine((v, ctx) => {
    if ((v.command === undefined) === (v.argv === undefined)) ctx.addIssue({ code: 'custom', message: 'give exactly one of command (a shell line) or argv (an array)', path: ['command'] });
  });

const Change = z.object({
  path: z.string(),
  change: z.enum(['created', 'changed', 'removed']),
  kind: z.enum(['file', 'directory', 'symlink', 'other']),
  size: z.number().int().nullable(),
  version: VersionSchema.nullable().describe('The file as it landed; null for a removal, a directory or symbolic link, or a path under TOOLGATE_EXEC_BULK_DIRS.'),
  backup_id: z.string().nullable().describe('The backup of what the change replaced or removed (undo_edit and restore_backup bring it back); null when none was kept.'),
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
  files_changed: z.array(Change).describe("Project entries the command created, changed or removed, as they landed (read from the run's overlay layer; .git and node_modules included)."),
  files_changed_truncated: z.boolean().describe('More changes landed than files_changed lists (the first 1000).'),
  changes_discarded: z.number().int().describe('Entries of the command\'s changes thrown away, none landing (it was stopped, or its changes could not all be read); -1 when they could not be counted; 0 when its changes landed.'),
  applied: z.boolean().describe("The command's changes landed (false on a dry run, and when they were discarded)."),
  changes: z.array(ChangeEntrySchema).optional().describe('dry_run only: each change the command made, with its diff (or the content a removal takes), as every mutating tool shows them.'),
  not_landed: z.array(z.object({ path: z.string(), why: z.string() })).describe('Entries the command made that never land: FIFOs, sockets and devices, names that are not UTF-8, reserved paths.'),
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
  summary: 'off unless `TOOLGATE_EXEC=sandboxed`: a shell line (`command`) or `argv` in a bubblewrap sandbox (project at `/workspace`, no network unless `TOOLGATE_EXEC_NETWORK` (then never the service host or the metadata address), paths the policy denies to read hidden, empty environment, time, CPU, memory, process and file-size limits) on a copy-on-write overlay of the project; its changes land after it exits, each decided by the path rules, backed up and undoable like any tool\'s (`dry_run` shows them with diffs and lands nothing; a stopped command lands nothing); `exit_code`, `stdout`/`stderr` head and tail, `files_changed` with versions; needs a token with `execute` ([docs/run-command.md](docs/run-command.md))',
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
  approvalPreview: (input, seen) => ({
    summary: `Run '${escapeControl(commandText(input).slice(0, 200))}' in '${escapeControl(input.cwd)}'.${seen && (seen.asks.length > 0 || seen.more) ? ` It will see ${seen.asks.length}${seen.more ? '+' : ''} path${seen.asks.length === 1 && !seen.more ? '' : 's'} whose reading asks.` : ''}`,
    preview: [
      ...callLines(input),
      ...(seen && (seen.asks.length > 0 || seen.more) ? ['sees paths whose reading asks:', ...seen.asks.map((a) => `  ${escapeControl(a)}`), ...(seen.more ? ['  … and more'] : [])] : []),
    ].join('\n'),
  }),
  // An approval holds for the project as the person saw it: any change since makes the repeat CONFLICT.
  approvalBinding: async (p) => {
    const stamp = await projectStamp(p.ws, { maxEntries: PROJECT_STAMP_MAX_ENTRIES, deadline: Date.now() + p.ws.limits.searchTimeoutMs * 4 }).catch((e: unknown) => {
      if (e instanceof TreeTooLarge) throw E.projectTooLargeToApprove(PROJECT_STAMP_MAX_ENTRIES);
      throw e;
    });
    return { mtime_ms: 0, size_bytes: stamp.entries, sha256: stamp.sha256 };
  },
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

/** The call as a person reads it: where, what, its environment, input and time limit, every character visible. */
function callLines(input: z.output<typeof Input>): string[] {
  return [
    `$ cd ${escapeControl(input.cwd === '.' ? WORKSPACE_MOUNT : `${WORKSPACE_MOUNT}/${input.cwd}`)}`,
    `$ ${escapeControl(commandText(input))}`,
    ...(input.env ?? []).map((e) => `env ${escapeControl(e)}`),
    ...(input.stdin !== undefined ? [`stdin: ${Buffer.byteLength(input.stdin)} bytes`, ...input.stdin.slice(0, 2000).split('\n').map((l) => `| ${escapeControl(l)}`)] : []),
    ...(input.timeout_s !== undefined ? [`timeout: ${input.timeout_s} s`] : []),
  ];
}

async function runOne(ctx: ToolContext, input: z.output<typeof Input>, exec: ExecSettings): Promise<ToolResult<Out>> {
  const { env, root, dir } = await checkBeforeRun(ctx, input, exec);
  const ws = ctx.ws;
  const review = root.commandReview;
  // The approved repeat of a held run lands what the person saw, without running the command again.
  const claimed = review ? await review.claim() : null;
  if (claimed !== null && review) {
    const held = await takeHeld(ws, claimed).catch((e: unknown) => {
      if (e instanceof HeldRunAltered) throw E.heldRunAltered(claimed);
      throw e;
    });
    if (held) return landHeld(ctx, input, dir.realRel, held, exec);
    // The person approved what a run did, not running it again: that run is gone (discarded, or landed).
    if (review.approvalHolds) throw E.heldRunGone(claimed);
  }
  if (exec.mode === 'direct') return runDirect(ctx, input, exec, { env, root, dir });
  const limits = exec.limits;
  const timeoutMs = Math.min(input.timeout_s ?? limits.timeoutS, limits.timeoutS) * 1000;
  const { masked, cwd, argv } = await sandboxOf(ws, exec, input, root, dir);
  const quota = limits.quotaBytes;
  await sweptOnce(ws);
  const run = await makeRunDir(ws);
  const landing: Landing = { result: null, unbackedUp: 0, discarded: null, why: null };
  let kept = false;
  try {
    // The landing moves the layer's files into the project: a layer on another file system could land half.
    if ((await fs.stat(run.upper)).dev !== (await fs.stat(ws.root)).dev) throw E.execStateElsewhere();
    // Date.now() is cut to the millisecond and file times are not: a change made in this millisecond is older
    // than the command, which starts tens of milliseconds later (docs/run-command.md, "What a command changes").
    const startedMs = Date.now() + 1;
    const outcome = await runSandboxed(
      exec,
      { run, maskDirs: masked.dirs, maskFiles: masked.files, cwd, env, argv },
      {
        timeoutMs,
        stdin: input.stdin,
        signal: ctx.signal,
        onOutput: ctx.progress,
        check: async (): Promise<StopReason | null> => {
          const bytes = await layerBytes(run.upper).catch((e: unknown) => (e instanceof TreeTooLarge ? Infinity : 0));
          return (quota > 0 && bytes > quota) || bytes === Infinity ? 'quota_exceeded' : null;
        },
        afterExit: async (mergedView) => {
          if (ctx.signal.aborted) return;
          const scan = await scanLayer(ws, run, mergedView, startedMs, reservedOf(masked), bulkOf(exec)).catch((e: unknown) => {
            if (e instanceof TreeTooLarge) return e;
            throw e;
          });
          if (scan instanceof TreeTooLarge) {
            landing.why = `the command's changes could not all be read (${scan.reason} at ${scan.where}; at most ${MAX_LAYER_ENTRIES} entries, ${MAX_TREE_DEPTH} levels deep)`;
            return;
          }
          refuseDenied(root, scan.result.changes);
          const asking = review && !input.dry_run ? firstAsking(review, scan.result.changes) : null;
          if (review && (review.runFirst || asking)) {
            landing.review = { steps: scan.steps, result: scan.result, asking, planned: await previewChanges(ws, run, scan.steps) };
            return;
          }
          if (input.dry_run) {
            landing.preview = (await previewChanges(ws, run, scan.steps)).map(describeChange);
            landing.result = scan.result;
            return;
          }
          const landed = await landSteps(ws, run, scan.steps, { actor: ctx.caller.actor, bulk: bulkOf(exec) });
          landing.result = scan.result;
          landing.unbackedUp = landed.unbackedUp;
        },
      },
    ).catch((e: unknown) => {
      if (e instanceof LandingConflict) throw E.execChangedMeanwhile(e.paths);
      throw e;
    });
    if (landing.review && !outcome.stoppedBy && review) {
      const { steps, result, asking, planned } = landing.review;
      const token = await holdRun(ws, run, { steps, result, outcome }).catch((e: unknown) => {
        if (e instanceof HeldRunsFull) throw E.tooManyHeldRuns(MAX_HELD_RUNS);
        throw e;
      });
      kept = true;
      throw new ChangesNeedReview(root, asking, planned, heldPreview(input, outcome, result, asking), (id) => bindHeld(ws, token, id), () => dropHeld(ws.stateDir, token));
    }
    if (!landing.result || landing.preview) landing.discarded = await layerEntries(run.upper);
    if (landing.preview) landing.why = 'a dry run lands nothing';
    if (!landing.result && !landing.why && outcome.stoppedBy) landing.why = `the command was stopped (${outcome.stoppedBy})`;
    return commandAnswer(input, dir.realRel, outcome, landing);
  } finally {
    if (!kept) await removeRunDir(run.dir);
  }
}

/**
 * Direct mode (docs/run-command.md, "Direct mode"): the project bound read-write, no overlay, so what the command
 * writes lands as it writes it. files_changed compares two listings of the project; nothing is backed up,
 * decided, checked for conflicts or discarded when the command is stopped.
 */
async function runDirect(ctx: ToolContext, input: z.output<typeof Input>, exec: ExecSettings, checked: { env: Record<string, string>; root: ResolvedPath; dir: ResolvedPath }): Promise<ToolResult<Out>> {
  const { env, root, dir } = checked;
  if (input.dry_run) throw E.directNoDryRun();
  // Nor can it keep a hidden file hidden: renaming its directory would carry it to a path no rule names.
  if (root.commandReview?.changesRuled || root.allowsEntry) throw E.directChangesRuled();
  const ws = ctx.ws;
  const limits = exec.limits;
  const { masked, cwd, argv } = await sandboxOf(ws, exec, input, root, dir);
  const bounds = () => ({ maxEntries: PROJECT_STAMP_MAX_ENTRIES, deadline: Date.now() + ws.limits.searchTimeoutMs * 4 });
  const listing = () => projectEntries(ws, bounds()).catch((e: unknown) => (e instanceof TreeTooLarge ? null : Promise.reject(e)));
  const before = await listing();
  // The project's growth is the volume's: what its free space lost since the start.
  const freeNow = async () => {
    const st = await fs.statfs(ws.root);
    return st.bavail * st.bsize;
  };
  const freeAtStart = await freeNow();
  await sweptOnce(ws);
  const run = await makeRunDir(ws);
  try {
    const outcome = await runSandboxed(
      exec,
      { run, direct: ws.root, maskDirs: masked.dirs, maskFiles: masked.files, cwd, env, argv },
      {
        timeoutMs: Math.min(input.timeout_s ?? limits.timeoutS, limits.timeoutS) * 1000,
        stdin: input.stdin,
        signal: ctx.signal,
        onOutput: ctx.progress,
        check: async (): Promise<StopReason | null> => (limits.quotaBytes > 0 && freeAtStart - (await freeNow()) > limits.quotaBytes ? 'quota_exceeded' : null),
      },
    );
    const after = before ? await listing() : null;
    const changes = before && after ? entriesChanged(before, after) : [];
    const answer = commandAnswer(input, dir.realRel, outcome, { result: { changes, notLanded: [], setIdCleared: [] }, unbackedUp: 0, discarded: null, why: null });
    const unlisted = before && after ? '' : ' Its changes could not be listed: the project is larger than a listing holds.';
    const stopped = outcome.stoppedBy ? ' What it wrote before it was stopped stays.' : '';
    return { ...answer, text: `${answer.text} Direct mode (TOOLGATE_EXEC=direct): its changes landed as it made them, without backups or undo.${stopped}${unlisted}` };
  } finally {
    await removeRunDir(run.dir);
  }
}

/** What the sandbox hides (the state directory, the operator's files, what the policy hides), where it runs, what. */
async function sandboxOf(ws: Workspace, exec: ExecSettings, input: z.output<typeof Input>, root: ResolvedPath, dir: ResolvedPath): Promise<{ masked: { dirs: Buffer[]; files: Buffer[] }; cwd: string; argv: string[] }> {
  const hidden = await hiddenOf(ws, root);
  return {
    masked: { dirs: [...inRoot(ws.root, [ws.stateDir]), ...hidden.dirs], files: [...inRoot(ws.root, exec.hiddenFiles), ...hidden.files] },
    cwd: dir.realRel === '.' ? WORKSPACE_MOUNT : `${WORKSPACE_MOUNT}/${dir.realRel}`,
    argv: input.command !== undefined ? ['/bin/sh', '-c', input.command] : (input.argv as string[]),
  };
}

/** The first change the policy asks about (a change like a write, a removal like a delete); null when none does. */
function firstAsking(review: CommandReview, changes: readonly LayerChange[]): { path: string; op: 'write' | 'delete' } | null {
  for (const c of changes) {
    const op = c.change === 'removed' ? 'delete' : 'write';
    if (review.decide(c.path, op).decision === 'ask') return { path: c.path, op };
  }
  return null;
}

/** Output shown to the person deciding on a held run: head and tail of each stream, every character visible. */
const HELD_OUTPUT_CHARS = 4000;

/** What a person sees of a held run before its changes: the call, how it ended, its output's head and tail. */
function heldPreview(input: z.output<typeof Input>, outcome: RunOutcome, result: LandResult, asking: { path: string; op: 'write' | 'delete' } | null): { summary: string; preview: string } {
  const n = result.changes.length;
  const how = outcome.signal ? `died of ${outcome.signal}` : `exited ${String(outcome.exitCode)}`;
  const why = asking ? `its ${asking.op === 'write' ? 'change to' : 'removal of'} '${escapeControl(asking.path)}' asks` : 'running it asks';
  const stream = (name: string, out: RunOutcome['stdout']): string[] => {
    if (out.bytes === 0) return [`${name}: empty`];
    const text = out.text.length > 2 * HELD_OUTPUT_CHARS ? `${out.text.slice(0, HELD_OUTPUT_CHARS)}\n… ${out.text.length - 2 * HELD_OUTPUT_CHARS} characters left out …\n${out.text.slice(-HELD_OUTPUT_CHARS)}` : out.text;
    return [`${name} (${out.bytes} bytes${out.omitted > 0 ? `, ${out.omitted} left out between head and tail` : ''}):`, ...text.replace(/\n$/, '').split('\n').map((l) => `| ${escapeControl(l)}`)];
  };
  return {
    summary: `Land what '${escapeControl(commandText(input).slice(0, 200))}' in '${escapeControl(input.cwd)}' changed: it ran without landing (${why}), ${how} after ${Math.round(outcome.durationMs)} ms and changed ${n} project entr${n === 1 ? 'y' : 'ies'}. Approving lands exactly these changes; it does not run again.`,
    preview: [...callLines(input), `exit: ${how}`, ...stream('stdout', outcome.stdout), ...stream('stderr', outcome.stderr)].join('\n'),
  };
}

/**
 * The approved repeat of a held run: its plan told to the gate (which checks it is the one approved), then its
 * changes landed as a run's would be, answered with the output the run had.
 */
async function landHeld(ctx: ToolContext, input: z.output<typeof Input>, cwdRel: string, held: HeldRun, exec: ExecSettings): Promise<ToolResult<Out>> {
  const ws = ctx.ws;
  try {
    const planned: PlannedChange[] = await previewChanges(ws, held.run, held.steps);
    await announce(ctx, () => planned);
    const landed = await landSteps(ws, held.run, held.steps, { actor: ctx.caller.actor, bulk: bulkOf(exec) }).catch((e: unknown) => {
      if (e instanceof LandingConflict) throw E.execChangedMeanwhile(e.paths);
      throw e;
    });
    const answer = commandAnswer(input, cwdRel, held.outcome, { result: held.result, unbackedUp: landed.unbackedUp, discarded: null, why: null });
    return { ...answer, text: `${answer.text} It ran when the request was made; its approved changes landed now.` };
  } finally {
    await removeRunDir(held.run.dir);
  }
}

interface Landing {
  /** What landed; null when nothing did. */
  result: LandResult | null;
  /** The run a person decides on: its plan, the change that asks (null: the call asked), its changes with diffs. */
  review?: { steps: Step[]; result: LandResult; asking: { path: string; op: 'write' | 'delete' } | null; planned: PlannedChange[] };
  /** Landed entries without a backup (under TOOLGATE_EXEC_BULK_DIRS). */
  unbackedUp: number;
  /** A dry run: what would have landed, with diffs (nothing did). */
  preview?: ChangeEntry[];
  /** Entries of the layer thrown away (null: the changes landed). */
  discarded: number | null;
  why: string | null;
}

/** The run directories a crashed process of this instance left, removed before this process makes its first. */
// Keyed by workspace, so each service's own (its workspaces are its alone).
const sweeps = new WeakMap<Workspace, Promise<void>>();
function sweptOnce(ws: Workspace): Promise<void> {
  let sweep = sweeps.get(ws);
  if (!sweep) sweeps.set(ws, (sweep = sweepRunDirs(ws)));
  return sweep;
}

/** A path under one of the operator's bulk directories (any segment named so): it lands without backups. */
function bulkOf(exec: ExecSettings): (rel: string) => boolean {
  const names = new Set(exec.bulkDirs);
  return (rel) => names.size > 0 && rel.split('/').some((seg) => names.has(seg));
}

/**
 * The policy decides a command's changes on what they do: each changed or new path like a write, each removal
 * like a delete. One the rules deny stops the landing before its first rename: nothing lands.
 */
function refuseDenied(root: ResolvedPath, changes: readonly LayerChange[]): void {
  if (!root.commandReview) return;
  for (const c of changes) {
    const op = c.change === 'removed' ? 'delete' : 'write';
    const d = root.commandReview.decide(c.path, op);
    if (d.decision === 'deny') throw E.commandChangeDenied(c.path, op, d.message, d.rule);
  }
}

/** Paths the landing never touches: the state directory and every masked path (the command saw none of them). */
function reservedOf(masked: { dirs: Buffer[]; files: Buffer[] }): (rel: string) => boolean {
  const dirs = masked.dirs.map((d) => d.toString('utf8'));
  const files = new Set(masked.files.map((f) => f.toString('utf8')));
  return (rel) => files.has(rel) || dirs.some((d) => rel === d || rel.startsWith(`${d}/`));
}

/** Entries in a run's layer (for the answer when they are discarded); -1 when it could not be counted. */
async function layerEntries(upper: string): Promise<number> {
  try {
    return await countLayer(upper);
  } catch {
    return -1;
  }
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
 * What the policy keeps from this caller, hidden in the sandbox: every entry a read may not see, found at any
 * depth and for any name. Refused when they are too many to hide or the project is too large to walk whole.
 */
async function hiddenOf(ws: Workspace, root: ResolvedPath): Promise<Hidden> {
  if (!root.allowsEntry) return { dirs: [], files: [] };
  let hidden: Hidden;
  try {
    hidden = await findHidden(ws, root.allowsEntry, { maxEntries: ws.limits.searchMaxFiles, deadline: Date.now() + ws.limits.searchTimeoutMs });
  } catch (e) {
    if (e instanceof TreeTooLarge) throw E.hiddenPathsUnknown();
    throw e;
  }
  const count = hidden.dirs.length + hidden.files.length;
  if (count > MAX_HIDDEN) throw E.tooManyHiddenPaths(count, MAX_HIDDEN);
  return hidden;
}

/** What the command did, for the caller (output, exit, what landed) and for the audit log. */
function commandAnswer(input: z.output<typeof Input>, cwdRel: string, outcome: RunOutcome, landing: Landing): ToolResult<Out> {
  const changes = landing.result?.changes ?? [];
  const notLanded = landing.result?.notLanded ?? [];
  const setIdCleared = landing.result?.setIdCleared ?? [];
  const listed = changes.slice(0, MAX_CHANGES_LISTED).map((c) => ({ path: c.path, change: c.change, kind: c.kind, size: c.size, version: c.version ?? null, backup_id: c.backup_id ?? null }));
  const truncated = changes.length > MAX_CHANGES_LISTED;
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
    changes_discarded: landing.discarded ?? 0,
    applied: landing.result !== null && !landing.preview,
    ...(landing.preview && { changes: landing.preview }),
    not_landed: notLanded.slice(0, MAX_CHANGES_LISTED),
  };
  const how = outcome.stoppedBy ? `was stopped (${outcome.stoppedBy})` : outcome.signal ? `died of ${outcome.signal}` : `exited ${String(outcome.exitCode)}`;
  const cut = outcome.stdout.omitted + outcome.stderr.omitted > 0 ? ` Output cut: ${outcome.stdout.omitted + outcome.stderr.omitted} bytes left out between head and tail.` : '';
  const notes =
    (landing.discarded !== null ? ` Nothing of it landed: ${landing.why ?? 'its changes were discarded'}; ${landing.discarded < 0 ? 'its' : landing.discarded} change${landing.discarded === 1 ? '' : 's'} discarded.` : '') +
    (truncated ? ` files_changed lists the first ${MAX_CHANGES_LISTED}.` : '') +
    (landing.unbackedUp > 0 ? ` ${landing.unbackedUp} entr${landing.unbackedUp === 1 ? 'y' : 'ies'} under bulk directories (TOOLGATE_EXEC_BULK_DIRS) landed without backups.` : '') +
    (notLanded.length > 0 ? ` Not landed: ${notLanded.slice(0, 10).map((n) => `${escapeControl(n.path)} (${n.why})`).join(', ')}.` : '') +
    (setIdCleared.length > 0 ? ` Set-user/group-ID bits cleared on: ${setIdCleared.slice(0, 10).join(', ')}.` : '');
  const changed = landing.discarded !== null ? '' : `; ${changes.length} project entr${changes.length === 1 ? 'y' : 'ies'} changed`;
  return {
    data,
    text: `${landing.preview ? `[Dry Run] ${changes.length} project entr${changes.length === 1 ? 'y' : 'ies'} would change. ` : ''}'${escapeControl(text.slice(0, 200))}' ${how} after ${data.duration_ms} ms${changed}.${cut}${notes}`,
    stats: { duration_ms: data.duration_ms, files_changed: changes.length },
    partial: outcome.stoppedBy !== null || cut !== '' || truncated || landing.discarded !== null || notLanded.length > 0,
    pathResolved: cwdRel,
    ...(landing.result && !landing.preview && { changed: landedChanges(changes) }),
    audit: {
      exec: {
        command: text.slice(0, 1000),
        cwd: cwdRel,
        exit_code: outcome.exitCode,
        signal: outcome.signal,
        stopped_by: outcome.stoppedBy,
        duration_ms: data.duration_ms,
        files_changed: listed.slice(0, 100).map((c) => `${c.change[0]} ${c.path}`),
        // Each change with what it replaced and what it left (sha256), as a single-file tool's line has them.
        changes: changes.slice(0, 100).map((c) => ({ path: c.path, change: c.change, sha256_before: c.sha256_before ?? null, sha256_after: c.version?.sha256 ?? null, backup_id: c.backup_id ?? null })),
        files_changed_count: changes.length,
        ...(landing.discarded !== null && { changes_discarded: landing.discarded }),
        ...(setIdCleared.length > 0 && { set_id_cleared: setIdCleared.slice(0, 100) }),
      },
    },
  };
}

/**
 * A line as it is, every control character escaped (\n, \t, \xNN): what a person approves can hold no line
 * that looks like the preview's own (an `env` line, a second `$` line), and no terminal escape.
 */
export function escapeControl(text: string): string {
  // Bidirectional controls too: they reorder what a person reads without showing themselves.
  return text.replace(/[\p{Cc}\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/gu, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
