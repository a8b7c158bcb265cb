// One workspace root with its state directory and limits; everything in workspace/ takes it as the first argument.
import fs from 'node:fs/promises';
import { closeSync } from 'node:fs';
import path from 'node:path';
import { ToolError } from '../errors.js';
import { openDirHandle } from './sync-first-io.js';
import type { WebSettings } from '../web/settings.js';
import { ServiceRuntime } from './runtime.js';

export interface WorkspaceLimits {
  maxReadBytes: number;
  maxOutputBytes: number;
  maxWriteBytes: number;
  maxEditBytes: number;
  lockTimeoutMs: number;
  regexTimeoutMs: number;
  backupKeep: number;
  backupMaxBytes: number;
  searchMaxFiles: number;
  searchTimeoutMs: number;
  /** Bytes of file content the process's tools hold at once (memory-budget.ts). */
  memoryBudgetBytes: number;
  /** Files one apply_patch may name (TOOLGATE_PATCH_MAX_FILES; its default where a workspace is opened without a config). */
  patchMaxFiles?: number;
  /** Largest office document read_docx / read_excel open (default: zip guard limits only bound it). */
  officeMaxBytes?: number;
  /** How long extracted attachments are kept (attachments.ts). */
  attachmentRetentionMs?: number;
  /** Checkpoints kept per project (TOOLGATE_CHECKPOINT_MAX_TURNS) and their longest age, ms; defaults where a workspace is opened without a config (checkpoints.ts). */
  checkpointMaxTurns?: number;
  checkpointMaxAgeMs?: number;
  /** The web tools' settings; absent in workspaces opened without a config, where DEFAULT_WEB_SETTINGS apply. */
  web?: WebSettings;
  // run_command's settings (`exec`) join this record in src/exec/settings.ts, so that workspace/ imports nothing above it.
}

/** FILE_TOO_LARGE, made by the caller's catalogue entry, when `size` bytes to write are over TOOLGATE_MAX_WRITE_BYTES. */
export function checkWriteSize(ws: Workspace, size: number, tooLarge: (size: number, limit: number) => ToolError): void {
  const limit = ws.limits.maxWriteBytes;
  if (size > limit) throw tooLarge(size, limit);
}

/** Hooks the operations layer attaches to count lock waits (metrics); workspace/ knows nothing of metrics. */
export interface WorkspaceObserver {
  lockWait(seconds: number): void;
}

export interface Workspace {
  /** Project id in multi-project mode, otherwise null. */
  readonly id: string | null;
  /** Real (symlink-free) absolute path of the root. */
  readonly root: string;
  /** The root held open: every path is resolved from this handle, never from the root's path string. */
  readonly rootFd: number;
  /** Real absolute path of the state directory (locks, backups, audit). */
  readonly stateDir: string;
  readonly allowAbsolute: boolean;
  readonly requireVersion: 'overwrite' | 'always' | 'never';
  readonly limits: WorkspaceLimits;
  /** Name of this process in temp-file directories (per replica). */
  readonly instanceId: string;
  /** What the service that opened it owns (sandbox mode, lock queues, caches, worker pools): runtime.ts. */
  readonly runtime: ServiceRuntime;
  observer?: WorkspaceObserver | undefined;
}

export interface OpenWorkspaceOptions {
  id?: string | null;
  root: string;
  stateDir?: string | undefined;
  allowAbsolute: boolean;
  requireVersion: 'overwrite' | 'always' | 'never';
  limits: WorkspaceLimits;
  instanceId: string;
  /** The opening service's runtime; a workspace opened on its own (tests) gets one of its own. */
  runtime?: ServiceRuntime | undefined;
  observer?: WorkspaceObserver | undefined;
  /** Create the root when missing (single-workspace mode); projects must already exist. */
  create?: boolean;
}

export async function openWorkspace(opts: OpenWorkspaceOptions): Promise<Workspace> {
  if (opts.create) await fs.mkdir(opts.root, { recursive: true });
  const root = await fs.realpath(opts.root);
  const wantedState = opts.stateDir ?? path.join(root, '.toolgate');
  await fs.mkdir(wantedState, { recursive: true, mode: 0o700 });
  const stateDir = await fs.realpath(wantedState);
  return {
    id: opts.id ?? null,
    root,
    rootFd: openDirHandle(root),
    stateDir,
    allowAbsolute: opts.allowAbsolute,
    requireVersion: opts.requireVersion,
    limits: opts.limits,
    instanceId: opts.instanceId,
    runtime: opts.runtime ?? new ServiceRuntime(),
    observer: opts.observer,
  };
}

/** Releases the root's handle (app shutdown). */
export function closeWorkspace(ws: Workspace): void {
  try {
    closeSync(ws.rootFd);
  } catch {
    // Already closed.
  }
}

/** True when `child` is `parent` or lies below it, compared on whole path segments. */
export function isInside(parent: string, child: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(path.sep) ? parent : parent + path.sep;
  return child.startsWith(prefix);
}
