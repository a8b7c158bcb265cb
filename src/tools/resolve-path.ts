// How a call's path argument becomes a resolved path: in the call's workspace, or `[id]/path` in another
// project's. The executor resolves every tool's paths with it; the policy re-resolves approved files with it.
import { asLocalToolPath } from '../workspace/path-syntax.js';
import { resolveInWorkspace, type HandleScope, type ResolveOptions } from '../workspace/sandbox.js';
import type { CallInfo } from './call.js';

const CROSS_PROJECT = /^\[([^\]]*)\]\/(.*)$/s;

/**
 * `[id]/path` names another project in multi-project mode only (single-project mode has no projects, so there it
 * is a directory); `./[id]/path` is always local. A local path reported back is written so that it reads back.
 */
export async function resolveToolPath(call: CallInfo, input: string, opts: ResolveOptions | undefined, scope: HandleScope) {
  const m = call.workspaceFor ? CROSS_PROJECT.exec(input) : null;
  if (!m || !call.workspaceFor) {
    const local = await resolveInWorkspace(call.ws, input, opts, scope);
    if (local.rel.startsWith('[')) local.rel = asLocalToolPath(local.rel);
    return local;
  }
  const projectId = m[1] as string;
  const other = await call.workspaceFor(projectId);
  const resolved = await resolveInWorkspace(other, m[2] === '' ? '.' : (m[2] as string), opts, scope);
  resolved.rel = `[${projectId}]/${resolved.rel}`;
  return resolved;
}
