// Checks a whole patch against the files' current contents before anything is written: every operation of every
// file must apply, or none does (codex leaves earlier files changed when a later hunk fails; toolgate does not).
import { posix } from 'node:path';
import { applyChunksDetailed, type AppliedHunk } from './patch-apply.js';
import type { PatchOp } from './patch-v4a.js';
import { E } from '../errors.js';

export interface PlannedFile {
  /** The path as the patch wrote it; the caller resolves it in the workspace. */
  path: string;
  /** Update with `*** Move to:`: the new content goes here and `path` is removed. */
  moveTo?: string;
  kind: 'create' | 'update' | 'delete';
  /** null for create. */
  oldContent: string | null;
  /** null for delete. */
  newContent: string | null;
  /** Update only: where each hunk applied and how strictly it matched. */
  hunks?: AppliedHunk[];
}

/** Current text of a file, or null when there is no file at that path. */
export type ReadCurrent = (path: string) => string | null;

/** Where a path of the patch lands, as a relative '/'-separated path: two spellings of one place give one answer. */
export type PlaceOf = (path: string) => string;

/** One spelling per file, so that `a/b.txt` and `./a//b.txt` count as the same path. */
export function patchPathKey(path: string): string {
  const n = posix.normalize(path.replace(/^\.\/+/, ''));
  return n.length > 1 ? n.replace(/\/+$/, '') : n;
}

/**
 * The per-file results of a patch, in patch order, or the first PatchError: NOT_FOUND (update or delete of a
 * missing file), ALREADY_EXISTS (add over a file, move onto a file), INVALID_PATCH (two operations on one path, or
 * a final tree where one path is a file and another lies under it), NO_MATCH / MULTIPLE_MATCHES (a hunk). Reads
 * through `readCurrent` only; writes nothing. `placeOf` (the sandbox's answer, so a symlink on the way counts)
 * defaults to the path as written.
 */
export function planPatch(ops: PatchOp[], readCurrent: ReadCurrent, placeOf: PlaceOf = patchPathKey): PlannedFile[] {
  const owner = new Map<string, number>();
  const claim = (path: string, op: number) => {
    const key = patchPathKey(path);
    const before = owner.get(key);
    if (before !== undefined) {
      throw E.patchFileInTwoOperations(path, before, op);
    }
    owner.set(key, op);
  };
  ops.forEach((op, i) => {
    claim(op.path, i);
    if (op.type === 'update' && op.moveTo !== undefined && patchPathKey(op.moveTo) !== patchPathKey(op.path)) claim(op.moveTo, i);
  });
  refuseFileAboveFile(ops, placeOf);

  return ops.map((op): PlannedFile => {
    const current = readCurrent(op.path);
    if (op.type === 'add') {
      if (current !== null) {
        throw E.patchAddExisting(op.path);
      }
      return { path: op.path, kind: 'create', oldContent: null, newContent: op.contents };
    }
    if (current === null) {
      const verb = op.type === 'delete' ? 'Delete' : 'Update';
      throw E.patchFileMissing(verb, op.path, op.type);
    }
    if (op.type === 'delete') return { path: op.path, kind: 'delete', oldContent: current, newContent: null };
    const applied = applyChunksDetailed(current, op.chunks, op.path);
    if (op.moveTo === undefined || patchPathKey(op.moveTo) === patchPathKey(op.path)) {
      return { path: op.path, kind: 'update', oldContent: current, newContent: applied.content, hunks: applied.hunks };
    }
    // codex overwrites an existing destination; a rename here never replaces a file silently.
    if (readCurrent(op.moveTo) !== null) {
      throw E.patchMoveOntoExisting(op.moveTo, op.path);
    }
    return { path: op.path, moveTo: op.moveTo, kind: 'update', oldContent: current, newContent: applied.content, hunks: applied.hunks };
  });
}

/** How the patch names a file it leaves in the tree, for a message. */
interface KeptFile {
  header: string;
  path: string;
}

/**
 * The files the patch leaves (adds, updates that stay, move destinations; a delete or a move's source frees its
 * path) may not contain one another: 'p' and 'p/x.txt' cannot both be files. Planning refuses such a patch, as
 * the commit would otherwise fail half way with an error no retry can fix.
 */
function refuseFileAboveFile(ops: PatchOp[], placeOf: PlaceOf): void {
  const kept = new Map<string, KeptFile>();
  for (const op of ops) {
    if (op.type === 'delete') continue;
    const moved = op.type === 'update' && op.moveTo !== undefined;
    const path = moved ? (op.moveTo as string) : op.path;
    kept.set(placeOf(path), { header: op.type === 'add' ? 'Add File' : moved ? 'Move to' : 'Update File', path });
  }
  for (const [place, below] of kept) {
    const parts = place.split('/');
    for (let n = 1; n < parts.length; n++) {
      const above = kept.get(parts.slice(0, n).join('/'));
      if (above === undefined) continue;
      throw E.patchFileAboveFile(above.header, above.path, below.header, below.path);
    }
  }
}
