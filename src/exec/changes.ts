// What a command did to the project: a bounded walk (the size tools' walk: .git and node_modules included,
// the state directory and entries the policy hides left out) before and after, compared by kind, size,
// mtime and inode. docs/run-command.md, "files_changed".
import type { WalkEntry, WalkStart } from '../search/walk.js';
import { walkSizes } from '../search/walk.js';
import type { Workspace } from '../workspace/workspace.js';

interface EntryState {
  kind: WalkEntry['kind'];
  size: number;
  mtimeMs: number;
  ino: number;
}

export interface Snapshot {
  entries: Map<string, EntryState>;
  /** Bytes of the regular files seen. */
  bytes: number;
  /** The walk stopped at TOOLGATE_SEARCH_MAX_FILES entries or its time limit: the comparison is partial. */
  truncated: boolean;
}

export interface FileChange {
  path: string;
  change: 'created' | 'changed' | 'removed';
  kind: WalkEntry['kind'];
  size: number | null;
}

/** Changes listed in one answer; past it `files_changed_truncated`. */
export const MAX_CHANGES_LISTED = 1000;

export async function snapshot(ws: Workspace, root: WalkStart, signal: AbortSignal): Promise<Snapshot> {
  const entries = new Map<string, EntryState>();
  let bytes = 0;
  const walk = await walkSizes(ws, root, signal, (e) => {
    const st = e.stat;
    if (!st) return;
    if (e.kind === 'file') bytes += st.size;
    entries.set(e.relFromStart, { kind: e.kind, size: st.size, mtimeMs: st.mtimeMs, ino: st.ino });
  });
  return { entries, bytes, truncated: walk.truncated };
}

/** Only the total of regular-file bytes (the quota poll), within the same bounds. */
export async function projectBytes(ws: Workspace, root: WalkStart, signal: AbortSignal): Promise<number> {
  let bytes = 0;
  await walkSizes(ws, root, signal, (e) => {
    if (e.kind === 'file' && e.stat) bytes += e.stat.size;
  });
  return bytes;
}

export function compare(before: Snapshot, after: Snapshot): FileChange[] {
  const out: FileChange[] = [];
  for (const [p, a] of after.entries) {
    const b = before.entries.get(p);
    if (!b) out.push({ path: p, change: 'created', kind: a.kind, size: a.kind === 'file' ? a.size : null });
    else if (b.kind !== a.kind || (a.kind !== 'directory' && (b.size !== a.size || b.mtimeMs !== a.mtimeMs || b.ino !== a.ino))) {
      out.push({ path: p, change: 'changed', kind: a.kind, size: a.kind === 'file' ? a.size : null });
    }
  }
  // A walk that stopped early has not seen everything: what it missed is not "removed".
  if (!after.truncated) {
    for (const [p, b] of before.entries) if (!after.entries.has(p)) out.push({ path: p, change: 'removed', kind: b.kind, size: null });
  }
  out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  return out;
}
