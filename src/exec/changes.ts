// What a command did to the project: a bounded walk (the size tools' walk: .git and node_modules included,
// the state directory and entries the policy hides left out) before and after, compared by kind, size,
// mtime and inode. docs/run-command.md, "files_changed".
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import type { WalkEntry, WalkStart } from '../search/walk.js';
import { walkSizes } from '../search/walk.js';
import type { Workspace } from '../workspace/workspace.js';

interface EntryState {
  kind: WalkEntry['kind'];
  size: number;
  mtimeMs: number;
  ino: number;
  mode: number;
  /** Host path, for clearing set-ID bits; never shown. */
  abs: string;
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
    entries.set(e.relFromStart, { kind: e.kind, size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, mode: st.mode, abs: e.abs });
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

const SET_ID = 0o6000;

/**
 * Clears the set-user-ID and set-group-ID bits of the files a command created or changed: inside its user
 * namespace the command owns the project's files, and a set-ID file it leaves would run with the owner's
 * rights (root, where the service runs as root) for whoever executes it outside. Returns their paths.
 */
export async function clearSetIdBits(before: Snapshot, after: Snapshot): Promise<string[]> {
  const cleared: string[] = [];
  for (const [p, a] of after.entries) {
    if (a.kind !== 'file' || (a.mode & SET_ID) === 0) continue;
    const b = before.entries.get(p);
    if (b && b.ino === a.ino && b.mode === a.mode && b.mtimeMs === a.mtimeMs) continue;
    try {
      const fd = await fs.open(a.abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
      try {
        const st = await fd.stat();
        if (st.isFile() && st.ino === a.ino) await fd.chmod(st.mode & 0o777 & ~SET_ID);
      } finally {
        await fd.close();
      }
      cleared.push(p);
    } catch {
      // Gone or replaced meanwhile.
    }
  }
  return cleared;
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
