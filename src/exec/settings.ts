// The operator's command settings (TOOLGATE_EXEC_*) as run_command receives them, built once per app in
// src/pipeline/service.ts limitsOf; the contract is docs/run-command.md.
import type { Config } from '../config.js';
import type { ChildProcess } from 'node:child_process';
import type { NetworkTools } from './network.js';
import { rmSync } from 'node:fs';
import { releaseCgroups, SYSTEM_CGROUP_FS, type CgroupFs, type CgroupPlan } from './cgroup.js';

export interface ExecLimits {
  concurrency: number;
  timeoutS: number;
  cpuS: number;
  memoryBytes: number;
  maxProcesses: number;
  maxFileBytes: number;
  maxOpenFiles: number;
  outputMaxBytes: number;
  tmpBytes: number;
  quotaBytes: number;
  minFreeBytes: number;
}

export interface ExecSettings {
  /** `direct`: the project is bound read-write, no overlay (docs/run-command.md, "Direct mode"). */
  mode: 'off' | 'sandboxed' | 'direct';
  limits: ExecLimits;
  /** TOOLGATE_EXEC_NETWORK: a user-mode network with egress rules instead of an empty network namespace. */
  network: boolean;
  /** Set by the start-up probe with the network on: a directory holding the sandbox's resolv.conf and hosts. */
  netFilesDir: string | null;
  /** The filesystem type the launcher mounts a run's overlay with (tests name one the kernel lacks). */
  overlayFsType: string;
  /** Set by the start-up probe (`sandboxed`): why an overlay cannot be mounted here; run_command is then not offered. */
  overlayMissing: string | null;
  /** Set by the start-up probe: where bwrap is on the service's PATH. */
  bwrap: string | null;
  /** Set by the start-up probe with the network on: where unshare, nft and slirp4netns are. */
  netTools: NetworkTools | null;
  /** Directory names whose trees a command's changes land in without a backup per file (TOOLGATE_EXEC_BULK_DIRS). */
  bulkDirs: readonly string[];
  /** Files the sandbox must never show although they may lie inside a project (tokens, policy). */
  hiddenFiles: readonly string[];
  /** The sandboxes running now: killed at shutdown (one set per app, so one app's close spares another's runs). */
  readonly running: Set<ChildProcess>;
  /** Where cgroups are looked for (the system's; tests give a tree of their own). */
  cgroupFs: CgroupFs;
  /** Set by the start-up probe: the runs' cgroups (pids and memory), or null where none can be made. */
  cgroups: CgroupPlan | null;
  /** Calls between their start and their answer (TOOLGATE_EXEC_CONCURRENCY). */
  active: number;
  /** Set at shutdown: runs killed then say so. */
  closing: boolean;
}

// Fastify's way with decorators: exec/ adds its field to the workspace's limits, which know nothing of it.
declare module '../workspace/workspace.js' {
  interface WorkspaceLimits {
    /** run_command's settings (TOOLGATE_EXEC_*); absent: the tool is off. */
    exec?: ExecSettings;
  }
}

export function execSettingsOf(config: Config): ExecSettings {
  return {
    mode: config.exec,
    network: config.execNetwork,
    netFilesDir: null,
    netTools: null,
    bwrap: null,
    overlayFsType: 'overlay',
    overlayMissing: null,
    limits: {
      concurrency: config.execConcurrency,
      timeoutS: config.execTimeoutS,
      cpuS: config.execCpuS,
      memoryBytes: config.execMemoryBytes,
      maxProcesses: config.execMaxProcesses,
      maxFileBytes: config.execMaxFileBytes,
      maxOpenFiles: config.execMaxOpenFiles,
      outputMaxBytes: config.execOutputMaxBytes,
      tmpBytes: config.execTmpBytes,
      quotaBytes: config.execQuotaBytes,
      minFreeBytes: config.execMinFreeBytes,
    },
    bulkDirs: config.execBulkDirs,
    hiddenFiles: [config.tokensFile, config.policy].filter((f): f is string => typeof f === 'string'),
    running: new Set(),
    cgroupFs: SYSTEM_CGROUP_FS,
    cgroups: null,
    closing: false,
    active: 0,
  };
}

/** Removes what the probe made (app close): the network files and the runs' base cgroups. */
export async function releaseExec(exec: ExecSettings): Promise<void> {
  if (exec.netFilesDir) rmSync(exec.netFilesDir, { recursive: true, force: true });
  if (exec.cgroups) await releaseCgroups(exec.cgroups);
}

/** Kills every sandbox still running (service shutdown): --die-with-parent takes their process trees along. */
export function killAllRuns(exec: ExecSettings): void {
  exec.closing = true;
  for (const child of exec.running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
