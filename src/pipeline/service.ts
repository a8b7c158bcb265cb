// The service without its doors: the sandbox chosen, the operations opened (src/ops/), the policy gate and
// the executor's hooks put together into the one pipeline every door calls. buildApp (src/app.ts) puts the
// HTTP doors in front of it; `toolgate mcp` (src/mcp-stdio.ts) puts stdio in front of it, with no HTTP app.
import { ConfigError, type Config } from '../config.js';
import { E } from '../errors.js';
import { execSettingsOf, killAllRuns, releaseExec } from '../exec/settings.js';
import { probeSandbox } from '../exec/sandbox.js';
import type { CgroupFs } from '../exec/cgroup.js';
import { assertRiskAllowed, type TokenEntry } from '../ops/auth.js';
import { closeOperations, prepareOperations, type Operations, type OpsLog } from '../ops/operations.js';
import type { AfterHook, BeforeHook } from '../tools/call.js';
import type { Resolver } from '../web/fetch.js';
import { webSettingsOf } from '../web/settings.js';
import { ServiceRuntime } from '../workspace/runtime.js';
import { ownFdDir, probeFdDir } from '../workspace/sandbox.js';
import type { WorkspaceLimits } from '../workspace/workspace.js';
import { createPipeline, type Pipeline } from './execute-tool.js';
import { PolicyService } from './policy-gate.js';
import { closeRecords } from '../workspace/checkpoints.js';

export interface ServiceOptions {
  version: string;
  instanceId: string;
  log: OpsLog;
  /** Checks after the risk and observers after the audit (tests; ./lifecycle.ts). */
  before?: readonly BeforeHook[] | undefined;
  after?: readonly AfterHook[] | undefined;
  /** Where audit lines go besides the file; default stdout when TOOLGATE_AUDIT_STDOUT is on, null for none. */
  auditStream?: NodeJS.WritableStream | null | undefined;
  /** Bearer tokens given directly (tests); TOOLGATE_TOKENS_FILE wins. */
  tokens?: readonly TokenEntry[] | undefined;
  /** Where open descriptors are named (tests of a machine without /proc); default /proc/<own pid>/fd (ownFdDir). */
  fdDir?: string | undefined;
  /** Where run_command looks for cgroups (tests of another host's layout); default /sys/fs/cgroup. */
  cgroupFs?: CgroupFs | undefined;
  /** The filesystem type run_command's overlay is mounted with (tests of a kernel without overlayfs); default overlay. */
  overlayFsType?: string | undefined;
  /** Where web_fetch and web_search resolve host names (tests of DNS failures); default the system resolver. */
  resolver?: Resolver | undefined;
}

export interface Service extends Operations {
  config: Config;
  /** TOOLGATE_POLICY and the approval requests. */
  policy: PolicyService;
  /** executeTool for every door (auth, project, policy, rate limit, audit, metrics). */
  pipeline: Pipeline;
  /** The service runs on the weaker path-string check (TOOLGATE_ALLOW_WEAK_SANDBOX). */
  weakSandbox: boolean;
  /** Before the doors wait for the calls in flight: calls waiting for a person answer pending, commands die. */
  stopAccepting(): void;
  /** After the calls in flight have answered: the approval store, rate limiter, audit, lock removals, workspaces, run cgroups, worker pools. */
  close(): Promise<void>;
}

export function limitsOf(config: Config): WorkspaceLimits {
  return {
    maxReadBytes: config.maxReadBytes,
    maxOutputBytes: config.maxOutputBytes,
    maxWriteBytes: config.maxWriteBytes,
    maxEditBytes: config.maxEditBytes,
    lockTimeoutMs: config.lockTimeoutMs,
    regexTimeoutMs: config.regexTimeoutMs,
    backupKeep: config.backupKeep,
    backupMaxBytes: config.backupMaxBytes,
    searchMaxFiles: config.searchMaxFiles,
    searchTimeoutMs: config.searchTimeoutMs,
    memoryBudgetBytes: config.memoryBudgetBytes,
    officeMaxBytes: config.officeMaxBytes,
    patchMaxFiles: config.patchMaxFiles,
    checkpointMaxTurns: config.checkpointMaxTurns,
    checkpointMaxAgeMs: config.checkpointMaxAgeDays * 24 * 3600 * 1000,
    attachmentRetentionMs: config.attachmentRetentionS * 1000,
    web: webSettingsOf(config),
    exec: execSettingsOf(config),
  };
}

/**
 * The sandbox acts through directory handles named in /proc/self/fd; where there is none the service refuses
 * to start unless TOOLGATE_ALLOW_WEAK_SANDBOX accepts the weaker check. Returns the directory that names
 * descriptors, or null in the weaker mode; it is this service's alone (its runtime), never the process's.
 */
function chooseSandbox(config: Config, fdDir: string): string | null {
  if (probeFdDir(fdDir)) return fdDir;
  if (!config.allowWeakSandbox) {
    throw new ConfigError(
      `${fdDir} is missing or does not name open descriptors (not Linux, or /proc is not mounted): the sandbox cannot act through directory handles, so a directory swapped for a symlink during a call could redirect it. Mount /proc, or set TOOLGATE_ALLOW_WEAK_SANDBOX=true to accept the weaker check.`,
    );
  }
  return null;
}

/** Opens everything a call needs; a ConfigError or PolicyError stops the start. */
export async function openService(givenConfig: Config, opts: ServiceOptions): Promise<Service> {
  let config = givenConfig;
  const runtime = new ServiceRuntime(chooseSandbox(config, opts.fdDir ?? ownFdDir()));
  const limits = limitsOf(config);
  if (opts.resolver && limits.web) limits.web = { ...limits.web, lookup: opts.resolver };
  const exec = limits.exec;
  if (exec && opts.cgroupFs) exec.cgroupFs = opts.cgroupFs;
  if (exec && opts.overlayFsType) exec.overlayFsType = opts.overlayFsType;
  if (exec && exec.mode !== 'off') {
    // Never a command without its isolation: a sandbox that cannot be made here stops the start.
    const cause = await probeSandbox(exec);
    if (cause) throw new ConfigError(`TOOLGATE_EXEC=${exec.mode}: ${cause}. Fix that, or set TOOLGATE_EXEC=off.`);
    // Without its overlay a command's changes could not be kept, decided or undone: the service runs without
    // run_command and says so, unless the operator chose the direct mode (docs/run-command.md, "Direct mode").
    if (exec.overlayMissing) {
      opts.log.warn({ cause: exec.overlayMissing }, `run_command is not offered: ${exec.overlayMissing}. Set TOOLGATE_EXEC=direct to run commands on the project itself, without backups, undo, review of their changes or conflict checks (docs/run-command.md, "Direct mode").`);
      exec.mode = 'off';
      config = { ...config, exec: 'off' };
    }
  }
  const ops = await prepareOperations(config, { version: opts.version, instanceId: opts.instanceId, limits, runtime, log: opts.log, auditStream: opts.auditStream, tokens: opts.tokens });
  const { auth, audit, metrics, rateLimiter: limiter } = ops;
  const policy = await PolicyService.open({ config, projects: ops.projects, audit, metrics });

  // The steps of every call, in the order they run (./lifecycle.ts).
  const pipeline = createPipeline({
    auth,
    projects: ops.projects,
    audit,
    authFailures: limiter?.authFailures ?? null,
    selfApproveWithoutToken: config.selfApprove,
    logAuthFailure: (reason) => opts.log.info({ reason }, 'authentication failed'),
    steps: {
      offered: (_call, tool) => {
        if (tool.offered && !tool.offered(config)) throw E.toolNotOffered(tool.name);
      },
      risk: (call, tool) => assertRiskAllowed(auth.principal(call.actor), tool.name, tool.risk),
      checks: opts.before ?? [],
      rateLimit: limiter?.check ?? null,
      policy: policy.gate,
      toolTimeoutMs: config.toolTimeoutMs,
      recordFailed: (err) => opts.log.error({ err }, 'checkpoint record not written'),
      metrics: metrics?.recordCall ?? null,
      audit: (call, name, outcome) => audit.record(call, name, outcome),
      observers: opts.after ?? [],
    },
  });
  policy.startSweeper((err) => opts.log.error({ err }, 'approval sweep failed'));

  return {
    ...ops,
    config,
    policy,
    pipeline,
    weakSandbox: runtime.fdDir === null,
    stopAccepting() {
      policy.stopWaiting();
      if (exec) killAllRuns(exec);
    },
    async close() {
      await closeRecords(runtime, await ops.projects.openedWorkspaces());
      await policy.close();
      await closeOperations(ops);
      if (exec) await releaseExec(exec);
      await runtime.close();
    },
  };
}
