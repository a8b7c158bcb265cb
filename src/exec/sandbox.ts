// One command in bubblewrap (docs/run-command.md, "Isolation"): new user, PID, IPC, UTS, network and cgroup
// namespaces, an empty environment plus PATH, HOME, LANG and the caller's checked variables, the project
// read-write at /workspace with the state directory and the service's secrets masked, a fresh /tmp, the
// system directories read-only, and rlimits set by prlimit inside before the command starts. The whole tree
// dies with the bwrap process (--die-with-parent, PID 1 of the namespace), which is killed at the time limit,
// on cancel and at shutdown.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { existsSync, lstatSync, mkdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { E } from '../errors.js';
import { toPosixRel } from '../workspace/sandbox.js';
import { isInside } from '../workspace/workspace.js';
import { hasPidsCgroup, makeRunCgroups, planCgroups, removeCgroups } from './cgroup.js';
import { connectNetwork, egressRules, LAUNCHER_STDIO, findNetworkTools, findOnPath, NET_FILES, SANDBOX_PATH, writeNetFiles, type NetworkTools } from './network.js';
import { layRunDir, removeRunDir, type RunDir } from './overlay.js';
import type { ExecSettings } from './settings.js';

/** Where the project is seen inside the sandbox. */
export const WORKSPACE_MOUNT = '/workspace';
const SANDBOX_UID = '1000';

/** Top-level system directories: a symlink (merged /usr) is recreated as one, a directory bound read-only. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/**
 * The few files of /etc programs need to start (the dynamic linker's cache, alternatives, certificates,
 * locale and time zone); never the whole /etc (shadow, the host's configuration).
 */
const ETC_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/ssl', '/etc/ca-certificates', '/etc/localtime', '/etc/nsswitch.conf', '/etc/os-release', '/etc/debian_version'];

export interface SandboxSpec {
  /** The run's directory: the overlay's layers over the project, and bwrap's arguments. */
  run: RunDir;
  /** Direct mode: the project itself, bound read-write at /workspace (no overlay is mounted). */
  direct?: string | undefined;
  /** Directories below the root hidden by an empty read-only tmpfs (the state directory, what the policy hides). */
  maskDirs: readonly Buffer[];
  /** Files below the root hidden by /dev/null (the tokens file, the policy, what the policy hides). */
  maskFiles: readonly Buffer[];
  /** Working directory inside the sandbox (/workspace or below). */
  cwd: string;
  env: Readonly<Record<string, string>>;
  argv: readonly string[];
}

/**
 * bwrap's options for one run, NUL-separated (read with --args, so that a masked name of any bytes can be
 * named and the sandbox's /proc/1/cmdline shows none of them). The project is the overlay mounted at
 * `merged` by the launcher; the command line itself (prlimit, the command) follows on bwrap's argv.
 */
export function bwrapOptions(exec: ExecSettings, spec: SandboxSpec): Buffer {
  const l = exec.limits;
  const a: (string | Buffer)[] = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  // With the network on, bwrap starts inside the run's own network namespace, already wired and filtered
  // (the launcher below); never the service's.
  if (!(exec.network && exec.netTools)) a.push('--unshare-net');
  a.push('--uid', SANDBOX_UID, '--gid', SANDBOX_UID, '--hostname', 'sandbox');
  a.push('--die-with-parent', '--new-session', '--disable-userns', '--cap-drop', 'ALL');
  a.push('--clearenv', '--setenv', 'PATH', SANDBOX_PATH, '--setenv', 'HOME', '/tmp', '--setenv', 'LANG', 'C.UTF-8');
  for (const [k, v] of Object.entries(spec.env)) a.push('--setenv', k, v);
  a.push('--ro-bind', '/usr', '/usr');
  for (const dir of SYSTEM_DIRS) {
    const st = statOrNull(dir);
    if (!st) continue;
    if (st.isSymbolicLink()) a.push('--symlink', readlinkSync(dir), dir);
    else if (st.isDirectory()) a.push('--ro-bind', dir, dir);
  }
  for (const f of ETC_FILES) a.push('--ro-bind-try', f, f);
  if (exec.network && exec.netFilesDir) for (const f of NET_FILES) a.push('--ro-bind', path.join(exec.netFilesDir, f), `/etc/${f}`);
  a.push('--proc', '/proc', '--dev', '/dev');
  a.push('--size', String(l.tmpBytes), '--tmpfs', '/tmp');
  a.push('--bind', spec.direct ?? spec.run.merged, WORKSPACE_MOUNT);
  // A hidden directory is an empty tmpfs made read-only: it takes no memory and names no host path.
  for (const d of spec.maskDirs) a.push('--tmpfs', inside(d), '--remount-ro', inside(d));
  for (const f of spec.maskFiles) a.push('--ro-bind', '/dev/null', inside(f));
  a.push('--chdir', spec.cwd);
  return Buffer.concat(a.flatMap((x) => [typeof x === 'string' ? Buffer.from(x) : x, Buffer.from([0])]));
}

/** bwrap's argv after its options: the command under prlimit. */
export function bwrapCommand(exec: ExecSettings, spec: SandboxSpec): string[] {
  const l = exec.limits;
  const a = ['--', '/usr/bin/prlimit', `--cpu=${l.cpuS}`, `--data=${l.memoryBytes}`, `--fsize=${l.maxFileBytes}`, `--nofile=${l.maxOpenFiles}`, '--core=0'];
  // A pids cgroup bounds the run where there is one (as root there must be: the kernel does not apply
  // RLIMIT_NPROC to root's user namespaces); otherwise RLIMIT_NPROC counts the sandbox's own processes.
  if (!hasPidsCgroup(exec.cgroups)) a.push(`--nproc=${l.maxProcesses}`);
  a.push('--', ...spec.argv);
  return a;
}

function inside(rel: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${WORKSPACE_MOUNT}/`), rel]);
}

function statOrNull(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/** The paths of `candidates` that lie inside the root (and so must be masked there), relative, symlinks resolved. */
export function inRoot(root: string, candidates: readonly string[]): Buffer[] {
  const out: Buffer[] = [];
  for (const c of candidates) {
    let real: string;
    try {
      real = realpathSync(c);
    } catch {
      continue;
    }
    if (real !== root && isInside(root, real)) out.push(Buffer.from(toPosixRel(root, real)));
  }
  return out;
}

/**
 * Checks at start that a sandbox can be made here and how the process count is bounded; returns the cause
 * when it cannot (the service then refuses to start: it never runs a command without its isolation).
 */
export async function probeSandbox(exec: ExecSettings): Promise<string | null> {
  if (process.platform !== 'linux') return `bubblewrap needs Linux (this is ${process.platform})`;
  for (const [file, what] of [['/usr/bin/prlimit', 'prlimit (util-linux) sets the limits'], [LAUNCHER_SHELL, 'bash runs the launcher that mounts the overlay'], ['/usr/bin/unshare', 'unshare (util-linux) makes the namespace the overlay is mounted in']]) {
    if (!existsSync(file as string)) return `${file as string} is missing; ${what as string}`;
  }
  if (exec.network) {
    const tools = findNetworkTools(process.env.PATH ?? '');
    if (!Array.isArray(tools)) exec.netTools = tools;
    const missing = Array.isArray(tools) ? tools : [];
    if (missing.length > 0) return `TOOLGATE_EXEC_NETWORK=true needs ${missing.join(', ')} (Debian packages: util-linux, nftables, slirp4netns) to give commands a network whose egress is filtered, and ${missing.length === 1 ? 'it is' : 'they are'} missing; install ${missing.length === 1 ? 'it' : 'them'} or set TOOLGATE_EXEC_NETWORK=false`;
  }
  const bwrap = findOnPath('bwrap', process.env.PATH ?? '');
  if (!bwrap) return 'bwrap (bubblewrap) is not installed';
  exec.bwrap = bwrap;
  const probeDir = path.join(os.tmpdir(), `toolgate-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(path.join(probeDir, 'project'), { recursive: true });
  try {
    const { plan, why } = planCgroups(exec.cgroupFs);
    exec.cgroups = plan;
    if (process.getuid?.() === 0 && !hasPidsCgroup(plan)) {
      return `the service runs as root, where the kernel does not apply RLIMIT_NPROC, and no pids cgroup can be created to bound the processes of a command (${why || 'no pids controller'}); give the service a delegated cgroup or run it as a non-root user`;
    }
    // The layers need a file system with user xattrs, as the state directory: the probe's lie beside an empty project.
    const run = await layRunDir(path.join(probeDir, 'run'), path.join(probeDir, 'project'));
    let direct = exec.mode === 'direct';
    const probe = async (network: boolean, argv: string[]): Promise<RunOutcome> =>
      runSandboxed({ ...exec, network }, { run, ...(direct && { direct: path.join(probeDir, 'project') }), maskDirs: [], maskFiles: [], cwd: WORKSPACE_MOUNT, env: {}, argv }, { timeoutMs: 10_000, stdin: undefined, signal: new AbortController().signal });
    const trial = async (): Promise<string | null> => {
      try {
        const r = await probe(false, ['/bin/sh', '-c', 'exit 0']);
        return r.exitCode === 0 ? null : `exit ${String(r.exitCode)}: ${r.stderr.text.trim().slice(0, 300) || 'no message'}`;
      } catch (e) {
        return (e as Error).message;
      }
    };
    const failed = await trial();
    if (failed !== null && !direct) {
      // Is it the overlay? A run without one tells: then the sandbox works, and only the overlay is missing.
      direct = true;
      if ((await trial()) === null) {
        exec.overlayMissing = `an overlay cannot be mounted in a user namespace here (Linux 5.11+ with overlayfs): ${failed}`;
        return null;
      }
      direct = false;
    }
    if (failed !== null) return `bwrap could not create the sandbox (${failed}) (bubblewrap missing, user namespaces disabled or refused by a seccomp profile; docs/run-command.md)`;
    if (exec.network) return await probeNetwork(exec, probe);
    return null;
  } finally {
    await removeRunDir(probeDir);
  }
}

/** One networked run of a command that checks its interface is up: the whole path a command's network takes. */
async function probeNetwork(exec: ExecSettings, probe: (network: boolean, argv: string[]) => Promise<RunOutcome>): Promise<string | null> {
  const dir = path.join(os.tmpdir(), `toolgate-net-${process.pid}-${randomBytes(4).toString('hex')}`);
  writeNetFiles(dir);
  exec.netFilesDir = dir;
  try {
    const r = await probe(true, ['/bin/sh', '-c', 'grep -q "tap0:" /proc/net/dev']);
    if (r.exitCode === 0) return null;
    return `TOOLGATE_EXEC_NETWORK=true: a probe run did not get its network (${r.stoppedBy ?? `exit ${String(r.exitCode)}`}): ${r.stderr.text.trim().slice(0, 300) || 'no message'}`;
  } catch (e) {
    return `TOOLGATE_EXEC_NETWORK=true: ${(e as Error).message} (slirp4netns and nft must be able to work in a new user namespace; docs/run-command.md, "Network")`;
  }
}

export interface CapturedOutput {
  text: string;
  /** Bytes the command wrote in all. */
  bytes: number;
  /** Bytes left out between the head and the tail (0 when all is kept). */
  omitted: number;
}

/** Keeps the first and the last `max / 2` bytes of a stream and counts what lies between: memory stays bounded. */
export class HeadTail {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;
  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const headMax = Math.ceil(this.max / 2);
    if (this.headBytes < headMax) {
      const take = Math.min(headMax - this.headBytes, chunk.length);
      this.head.push(chunk.subarray(0, take));
      this.headBytes += take;
      chunk = chunk.subarray(take);
      if (chunk.length === 0) return;
    }
    const tailMax = this.max - headMax;
    this.tail.push(Buffer.from(chunk));
    this.tailBytes += chunk.length;
    while (this.tailBytes - (this.tail[0]?.length ?? 0) >= tailMax && this.tail.length > 1) this.tailBytes -= (this.tail.shift() as Buffer).length;
    if (this.tailBytes > tailMax) {
      const first = this.tail[0] as Buffer;
      this.tail[0] = first.subarray(this.tailBytes - tailMax);
      this.tailBytes = tailMax;
    }
  }

  result(): CapturedOutput {
    const omitted = this.total - this.headBytes - this.tailBytes;
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    return { text: omitted > 0 ? `${head}\n[… ${omitted} bytes left out …]\n${tail}` : head + tail, bytes: this.total, omitted };
  }
}

export type StopReason = 'timeout' | 'cancelled' | 'quota_exceeded' | 'shutdown';

export interface RunOptions {
  timeoutMs: number;
  stdin: string | undefined;
  signal: AbortSignal;
  /** Output as it comes (streaming doors), at most STREAM_BUDGET_BYTES per run. */
  onOutput?: ((stream: 'stdout' | 'stderr', text: string) => void) | undefined;
  /** Polled about every second while the command runs: a reason to stop it, or null. */
  check?: () => Promise<StopReason | null>;
  /**
   * Called once the command has ended by itself, before its overlay is unmounted: `mergedView` is the
   * command's final view of the project (src/exec/overlay.ts reads it to find removals).
   */
  afterExit?: (mergedView: string) => Promise<void>;
}

export interface RunOutcome {
  exitCode: number | null;
  signal: string | null;
  stdout: CapturedOutput;
  stderr: CapturedOutput;
  durationMs: number;
  stoppedBy: StopReason | null;
}

/** Output one run streams to its caller; past it only the answer's head and tail tell the rest. */
export const STREAM_BUDGET_BYTES = 1024 * 1024;

/** The launcher's shell (Debian's bash is essential): dash cannot close descriptors above 9. */
export const LAUNCHER_SHELL = '/bin/bash';

/**
 * The launcher, root of the run's own user and mount namespace (and network namespace with the network on):
 * closes every descriptor the service inherited (only 0–2 and its own pipes 3–6 stay, and bwrap gets 0–2 and
 * its arguments), installs the egress rules and waits for the network (fds 3 and 4, src/exec/network.ts),
 * mounts the overlay from inside the run's directory, runs bwrap, reports its status on fd 5 and keeps the
 * overlay mounted until the service has read the command's changes (a line or EOF on fd 6).
 * $1 the run's directory, $2 the egress rules or '', $3 nft, $4 the overlay's filesystem type ('' in direct
 * mode: nothing is mounted), then bwrap and its argv.
 */
const LAUNCHER = `for f in /proc/$$/fd/*; do n=\${f##*/}; case $n in [0-6]) ;; *) eval "exec $n>&-" ;; esac; done
dir=$1 rules=$2 nft=$3 fstype=$4
shift 4
if [ -n "$rules" ]; then
  printf '%s' "$rules" | "$nft" -f - || exit 125
  echo ready >&3 || exit 125
  read -r go <&4 || exit 125
fi
exec 3>&- 4<&-
cd "$dir" || exit 125
if [ -n "$fstype" ]; then
  mount -n -t "$fstype" overlay -o lowerdir=lower,upperdir=upper,workdir=work,userxattr merged || exit 125
fi
cd / || exit 125
unset PWD OLDPWD
bwrap=$1
shift
"$bwrap" --args 7 "$@" 7<"$dir/args" 5>&- 6<&-
st=$?
echo "$st" >&5
exec 5>&-
read -r go <&6
exit "$st"`;

/** Runs one command in the sandbox to its end (or until it is stopped); never throws for the command's own failure. */
export async function runSandboxed(exec: ExecSettings, spec: SandboxSpec, opts: RunOptions): Promise<RunOutcome> {
  if (exec.network && !exec.netTools) throw E.execNetworkMissing();
  writeFileSync(spec.run.args, bwrapOptions(exec, spec), { mode: 0o600 });
  const cgroups = exec.cgroups ? makeRunCgroups(exec.cgroups, exec.limits) : null;
  const argv = launchArgv(exec, spec, cgroups?.procs ?? []);
  const started = performance.now();
  const net = exec.network && exec.netTools ? LAUNCHER_STDIO : (['ignore', 'ignore'] as const);
  const stdio: StdioOptions = ['pipe', 'pipe', 'pipe', ...net, 'pipe', 'pipe'];
  const child = spawn('/bin/sh', argv, { stdio, env: { PATH: SANDBOX_PATH }, cwd: '/' }) as ChildProcess & { stdin: Writable; stdout: Readable; stderr: Readable };
  exec.running.add(child);
  // Started while the service closes (it was still being prepared when killAllRuns went through the running
  // ones): killed at once, as they were, instead of running to its own time limit.
  if (exec.closing) child.kill('SIGKILL');
  const closed = new Promise<{ code: number | null; sig: NodeJS.Signals | null }>((resolve) => {
    child.on('error', () => resolve({ code: null, sig: null }));
    child.on('close', (c, s) => resolve({ code: c, sig: s }));
  });
  const status = readStatus((child.stdio as unknown as Readable[])[5] as Readable);
  const done = (child.stdio as unknown as Writable[])[6] as Writable;
  done.on('error', () => undefined);
  const { out, err } = captureOutput(child, exec.limits.outputMaxBytes, opts.onOutput);
  child.stdin.on('error', () => undefined);
  child.stdin.end(opts.stdin ?? '');

  const watch = new RunWatch(child, opts);
  const network = exec.network && exec.netTools ? await wireNetwork(exec.netTools, child, closed, () => err.result().text) : { slirp: null, error: null };
  const ended = await status;
  const durationMs = performance.now() - started;
  watch.end();
  network.slirp?.kill('SIGKILL');
  if (!watch.stoppedBy && exec.closing) watch.stoppedBy = 'shutdown';
  let afterError: unknown = null;
  try {
    if (ended !== null && !watch.stoppedBy && opts.afterExit && child.pid) await opts.afterExit(`/proc/${child.pid}/root${spec.run.merged}`);
  } catch (e) {
    afterError = e;
  }
  done.end();
  const { code, sig } = await closed;
  exec.running.delete(child);
  if (cgroups) removeCgroups(cgroups.dirs);
  if (afterError) throw afterError;
  // The sandbox itself could not be made (not the command's failure, and never run without it).
  if (network.error && !watch.stoppedBy) throw E.execSandboxFailed(network.error);
  if (ended === null && !watch.stoppedBy) throw E.execSandboxFailed(`the launcher ended without a status (${sig ?? `exit ${String(code)}`}): ${err.result().text.trim().slice(-300) || 'no message'}`);
  const exitCode = ended ?? (sig ? null : code);
  // bwrap answers 128+N when the command died of signal N, as a shell does.
  const signal = ended === null ? (sig ?? null) : ended > 128 && ended < 128 + 65 ? signalName(ended - 128) : null;
  return { exitCode: ended === null && sig ? null : exitCode, signal, stdout: out.result(), stderr: err.result(), durationMs, stoppedBy: watch.stoppedBy };
}

/** The launcher's report on fd 5: bwrap's exit status, or null when the launcher died first (killed, or failed to mount). */
function readStatus(stream: Readable): Promise<number | null> {
  return new Promise((resolve) => {
    let text = '';
    stream.on('data', (c: Buffer) => (text += c.toString()));
    stream.on('error', () => resolve(null));
    stream.on('end', () => resolve(/^\d+\n?$/.test(text) ? Number(text.trim()) : null));
  });
}

/**
 * The argv of /bin/sh for one run. A small shell becomes the launcher (above) in a new user and mount
 * namespace after it made the run the out-of-memory killer's first choice (under memory pressure a command
 * dies before the service) and joined the run's cgroups, so that every process of the run is born inside them.
 */
function launchArgv(exec: ExecSettings, spec: SandboxSpec, cgroupProcs: readonly string[]): string[] {
  const join = cgroupProcs.map((f) => `echo $$ > '${f.replace(/'/g, `'\\''`)}' && `).join('');
  const networked = exec.network && exec.netTools;
  const unshare = networked ? (exec.netTools as NetworkTools).unshare : '/usr/bin/unshare';
  const ns = ['--user', '--map-root-user', '--mount', ...(networked ? ['--net'] : [])];
  const launcher = [unshare, ...ns, '--', LAUNCHER_SHELL, '--norc', '--noprofile', '-c', LAUNCHER, 'launcher', spec.run.dir, networked ? egressRules() : '', networked ? (exec.netTools as NetworkTools).nft : '', spec.direct === undefined ? exec.overlayFsType : '', exec.bwrap ?? 'bwrap', ...bwrapCommand(exec, spec)];
  return ['-c', `echo 1000 > /proc/self/oom_score_adj && ${join}exec "$@"`, 'sh', ...launcher];
}

/** The run's output kept as head and tail, and streamed to `onOutput` up to STREAM_BUDGET_BYTES. */
function captureOutput(child: ChildProcess & { stdout: Readable; stderr: Readable }, maxBytes: number, onOutput: RunOptions['onOutput']): { out: HeadTail; err: HeadTail } {
  const out = new HeadTail(maxBytes);
  const err = new HeadTail(maxBytes);
  let streamed = 0;
  const forward = (stream: 'stdout' | 'stderr', c: Buffer) => {
    if (!onOutput || streamed >= STREAM_BUDGET_BYTES) return;
    const piece = c.subarray(0, STREAM_BUDGET_BYTES - streamed);
    streamed += piece.length;
    try {
      onOutput(stream, piece.toString('utf8'));
    } catch {
      // A door that cannot send any more must not stop the run.
    }
  };
  child.stdout.on('data', (c: Buffer) => {
    out.push(c);
    forward('stdout', c);
  });
  child.stderr.on('data', (c: Buffer) => {
    err.push(c);
    forward('stderr', c);
  });
  return { out, err };
}

/** What stops a run before its end: its time limit, the call's abort, or the caller's periodic check. */
class RunWatch {
  stoppedBy: StopReason | null = null;
  readonly #child: ChildProcess;
  readonly #signal: AbortSignal;
  readonly #timer: NodeJS.Timeout;
  readonly #poll: NodeJS.Timeout | null;
  readonly #onAbort = () => this.stop(this.#signal.reason instanceof Error && /ran longer/.test(this.#signal.reason.message) ? 'timeout' : 'cancelled');

  constructor(child: ChildProcess, opts: RunOptions) {
    this.#child = child;
    this.#signal = opts.signal;
    this.#timer = setTimeout(() => this.stop('timeout'), opts.timeoutMs);
    if (opts.signal.aborted) this.#onAbort();
    opts.signal.addEventListener('abort', this.#onAbort, { once: true });
    let checking = false;
    this.#poll = opts.check
      ? setInterval(() => {
          if (checking) return;
          checking = true;
          void opts
            .check?.()
            .then((why) => why && this.stop(why))
            .catch(() => undefined)
            .finally(() => (checking = false));
        }, 1000)
      : null;
  }

  stop(why: StopReason): void {
    if (this.stoppedBy) return;
    this.stoppedBy = why;
    this.#child.kill('SIGKILL');
  }

  /** The run has ended: no more stops. */
  end(): void {
    clearTimeout(this.#timer);
    if (this.#poll) clearInterval(this.#poll);
    this.#signal.removeEventListener('abort', this.#onAbort);
  }
}

/** The run's network (src/exec/network.ts); when it cannot be wired the run is killed and the error kept. */
async function wireNetwork(
  tools: NonNullable<ExecSettings['netTools']>,
  child: ChildProcess,
  closed: Promise<unknown>,
  stderrText: () => string,
): Promise<{ slirp: ChildProcess | null; error: string | null }> {
  try {
    return { slirp: await connectNetwork(tools, child, closed, stderrText), error: null };
  } catch (e) {
    child.kill('SIGKILL');
    (child.stdio[4] as Writable | null)?.destroy();
    return { slirp: null, error: (e as Error).message };
  }
}

function signalName(n: number): string | null {
  for (const [name, num] of Object.entries(os.constants.signals)) if (num === n) return name;
  return null;
}

