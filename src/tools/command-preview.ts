// What a command's layer would change, shown as every mutating tool shows its plan (./plan.ts): each file's diff
// from the project's content to the layer's, a removal's content. Read through descriptors; nothing lands.
import fs from 'node:fs/promises';
import { diffWhole } from '../edit/diff.js';
import { childPath, lstatChild } from '../exec/fd-walk.js';
import { DirCache, hashChild, type RunDir, type Step } from '../exec/overlay.js';
import { looksBinary } from '../workspace/encoding.js';
import type { Workspace } from '../workspace/workspace.js';
import { REMOVED_HEAD_BYTES, type PlannedChange } from './plan.js';

/** Bytes of one file a dry run's preview diffs (larger ones are named, not diffed: a diff runs on the event loop). */
const PREVIEW_FILE_BYTES = 256 * 1024;
/** Changes a dry run's preview diffs; the rest are listed with their operation only. */
const PREVIEW_MAX_DIFFS = 200;

/**
 * The planned changes of a layer as every mutating tool shows them (src/tools/plan.ts): each file's diff from the
 * project's content to the layer's, a removal's content, read through descriptors; nothing lands.
 */
export async function previewChanges(ws: Workspace, run: RunDir, steps: readonly Step[]): Promise<PlannedChange[]> {
  const dirs = new DirCache();
  const out: PlannedChange[] = [];
  let diffs = 0;
  try {
    for (const step of steps) {
      if (step.op === 'chmod') continue;
      const kind = step.op === 'mkdir' || step.kind === 'directory' ? 'directory' : 'file';
      if (kind === 'directory') {
        out.push({ op: step.op === 'remove' ? 'delete' : 'create', kind, path: step.rel, sha256Before: null, sha256After: null });
        continue;
      }
      const parent = await dirs.open(ws.root, step.dirRel);
      const old = step.op === 'remove' || (step.op === 'move' && step.replaces) ? await readChild(parent.fd, step.name) : null;
      if (step.op === 'remove') {
        out.push({ op: 'delete', kind, path: step.rel, sha256Before: old?.sha256 ?? null, sha256After: null, ...(old && { removed: { head: old.content.subarray(0, REMOVED_HEAD_BYTES), size: old.size } }) });
        continue;
      }
      if (step.op !== 'move') continue;
      const now = await readChild((await dirs.open(run.upper, step.upperDirRel)).fd, step.name);
      const change: PlannedChange = { op: old ? 'update' : 'create', kind, path: step.rel, sha256Before: old?.sha256 ?? null, sha256After: now?.sha256 ?? null };
      const text = (b: { content: Buffer; size: number } | null) => (b && b.size <= PREVIEW_FILE_BYTES && !looksBinary(b.content) ? b.content.toString('utf8') : null);
      const newText = now?.link ?? text(now);
      const oldText = old?.link ?? text(old);
      if (newText !== null && (old === null || oldText !== null) && diffs++ < PREVIEW_MAX_DIFFS) change.diff = diffWhole(step.rel, oldText, newText);
      out.push(change);
    }
  } finally {
    await dirs.close();
  }
  return out;
}

/** A file's content (at most PREVIEW_FILE_BYTES + 1 of it) and sha256, or a link's target, below a directory descriptor. */
async function readChild(dirFd: number, name: Buffer): Promise<{ content: Buffer; size: number; sha256: string | null; link?: string } | null> {
  const st = await lstatChild(dirFd, name);
  if (!st) return null;
  if (st.isSymbolicLink()) {
    const target = await fs.readlink(childPath(dirFd, name)).catch(() => '');
    return { content: Buffer.alloc(0), size: 0, sha256: null, link: `symbolic link -> ${target}\n` };
  }
  const hashed = await hashChild(dirFd, name, PREVIEW_FILE_BYTES + 1);
  if (!hashed) return null;
  return { content: hashed.head, size: hashed.size, sha256: hashed.sha256 };
}
