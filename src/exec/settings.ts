// The operator's command settings (TOOLGATE_EXEC_*) as run_command receives them, built once per app in
// src/app.ts limitsOf; the contract is docs/run-command.md.
import type { Config } from '../config.js';
import type { ChildProcess } from 'node:child_process';
import type { NetworkTools } from './network.js';
import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import path from 'node:path';

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
  mode: 'off' | 'sandboxed';
  limits: ExecLimits;
  /** TOOLGATE_EXEC_NETWORK: a user-mode network with egress rules instead of an empty network namespace. */
  network: boolean;
  /** Set by the start-up probe with the network on: a directory holding the sandbox's resolv.conf and hosts. */
  netFilesDir: string | null;
  /** Set by the start-up probe with the network on: where unshare, nft and slirp4netns are. */
  netTools: NetworkTools | null;
  /** Files the sandbox must never show although they may lie inside a project (tokens, policy). */
  hiddenFiles: readonly string[];
  /** The sandboxes running now: killed at shutdown (one set per app, so one app's close spares another's runs). */
  readonly running: Set<ChildProcess>;
  /** Set by the start-up probe: how the process count is bounded (a pids cgroup directory as root, else rlimit). */
  pidsCgroup: string | null;
  /** Calls between their start and their answer (TOOLGATE_EXEC_CONCURRENCY). */
  active: number;
  /** Set at shutdown: runs killed then say so. */
  closing: boolean;
}

export function execSettingsOf(config: Config): ExecSettings {
  return {
    mode: config.exec,
    network: config.execNetwork,
    netFilesDir: null,
    netTools: null,
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
    hiddenFiles: [config.tokensFile, config.policy].filter((f): f is string => typeof f === 'string'),
    running: new Set(),
    pidsCgroup: null,
    closing: false,
    active: 0,
  };
}

/**
 * Removes the pids cgroup the probe made (app close), once the runs' own cgroups are gone: the kernel
 * refuses to remove a cgroup that still has processes or children, so it is tried a few times.
 */
export async function releaseExec(exec: ExecSettings): Promise<void> {
  if (exec.netFilesDir) rmSync(exec.netFilesDir, { recursive: true, force: true });
  const base = exec.pidsCgroup;
  if (!base) return;
  for (let i = 0; i < 50; i++) {
    try {
      for (const e of readdirSync(base, { withFileTypes: true })) if (e.isDirectory()) rmdirSync(path.join(base, e.name));
      rmdirSync(base);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
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
