// Which workspace a call acts on: the one workspace, or (TOOLGATE_PROJECTS_ROOT) one per project id,
// opened lazily and cached. The project's state directory is `<project>/.toolgate`, or
// `<TOOLGATE_STATE_DIR>/<projectId>` when a state directory is configured.
import fs from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type Config } from '../config.js';
import { E } from '../errors.js';
import { sweepTempFiles } from '../workspace/atomic.js';
import { recoverRewinds } from '../workspace/rewind-journal.js';
import type { ServiceRuntime } from '../workspace/runtime.js';
import { closeWorkspace, openWorkspace, type Workspace, type WorkspaceLimits, type WorkspaceObserver } from '../workspace/workspace.js';
import { allowsProject, type Principal } from './auth.js';

export const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface ProjectsOptions {
  config: Config;
  limits: WorkspaceLimits;
  instanceId: string;
  /** The service's own state (src/workspace/runtime.ts), shared by every workspace it opens. */
  runtime: ServiceRuntime;
  observer?: WorkspaceObserver | undefined;
}

export class Projects {
  /** The workspace in single-project mode; null in multi-project mode. */
  readonly single: Workspace | null;
  readonly root: string | null;
  private readonly opened = new Map<string, Promise<Workspace>>();

  private constructor(
    private readonly opts: ProjectsOptions,
    single: Workspace | null,
  ) {
    this.single = single;
    this.root = opts.config.projectsRoot ?? null;
  }

  static async open(opts: ProjectsOptions): Promise<Projects> {
    const { config } = opts;
    if (config.projectsRoot) {
      const st = await fs.stat(config.projectsRoot).catch(() => null);
      if (!st?.isDirectory()) throw new ConfigError(`TOOLGATE_PROJECTS_ROOT=${config.projectsRoot}: not a directory (create it, with one sub-directory per project).`);
      return new Projects(opts, null);
    }
    const ws = await openWorkspace({
      root: config.root,
      stateDir: config.stateDir,
      allowAbsolute: config.allowAbsolute,
      requireVersion: config.requireVersion,
      limits: opts.limits,
      instanceId: opts.instanceId,
      runtime: opts.runtime,
      observer: opts.observer,
      create: true,
    });
    await sweepTempFiles(ws);
    // A rewind killed half way is finished before the first call (docs/api.md, "Turns, checkpoints and rewind").
    await recoverRewinds(ws);
    return new Projects(opts, ws);
  }

  get multi(): boolean {
    return this.single === null;
  }

  /** Releases the workspaces' root handles (app shutdown, after the calls in flight have ended). */
  async close(): Promise<void> {
    for (const ws of await this.openedWorkspaces()) closeWorkspace(ws);
  }

  /** Every workspace opened so far (for health probes). */
  async openedWorkspaces(): Promise<Workspace[]> {
    if (this.single) return [this.single];
    const settled = await Promise.allSettled(this.opened.values());
    return settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  }

  /**
   * The workspace a request acts on. `projectId` comes from the URL or X-Project-Id; the checks run in
   * this order so that a token learns nothing about projects it may not use: id syntax, token, existence.
   */
  async workspaceFor(projectId: string | undefined, principal: Principal | null): Promise<Workspace> {
    if (this.single) {
      if (projectId !== undefined) {
        throw E.projectsOff(shortId(projectId));
      }
      return this.single;
    }
    if (projectId === undefined) {
      throw E.projectMissing();
    }
    return this.project(projectId, principal);
  }

  /** A project by id, for the request's project and for `[otherId]/path`. */
  async project(projectId: string, principal: Principal | null): Promise<Workspace> {
    if (!PROJECT_ID.test(projectId)) {
      throw E.projectIdInvalid(shortId(projectId));
    }
    if (!allowsProject(principal, projectId)) {
      throw E.projectNotAllowed(principal?.id, projectId);
    }
    if (!this.root) throw E.crossProjectOff();
    let ws = this.opened.get(projectId);
    if (!ws) {
      ws = this.openProject(this.root, projectId);
      this.opened.set(projectId, ws);
      // A project that did not exist (or failed to open) may be created later: do not cache the failure.
      ws.catch(() => this.opened.delete(projectId));
    }
    return ws;
  }

  private async openProject(projectsRoot: string, projectId: string): Promise<Workspace> {
    const { config } = this.opts;
    const root = path.join(projectsRoot, projectId);
    const st = await fs.stat(root).catch(() => null);
    if (!st?.isDirectory()) throw E.projectUnknown(projectId);
    const ws = await openWorkspace({
      id: projectId,
      root,
      stateDir: config.stateDir ? path.join(config.stateDir, projectId) : undefined,
      allowAbsolute: config.allowAbsolute,
      requireVersion: config.requireVersion,
      limits: this.opts.limits,
      instanceId: this.opts.instanceId,
      runtime: this.opts.runtime,
      observer: this.opts.observer,
      create: false,
    });
    await sweepTempFiles(ws);
    // A rewind killed half way is finished before the first call (docs/api.md, "Turns, checkpoints and rewind").
    await recoverRewinds(ws);
    return ws;
  }
}

function shortId(id: string): string {
  const printable = id.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 70 ? `${printable.slice(0, 64)}…` : printable;
}
