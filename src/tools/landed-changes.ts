// A command's landed changes as its checkpoint record keeps them (docs/api.md, "Turns, checkpoints and rewind"):
// the landing (src/exec/overlay.ts) already kept each replaced or removed file as a backup with its sha256.
import type { LayerChange } from '../exec/overlay.js';
import type { RecordedChange } from '../workspace/checkpoints.js';

const OPS = { created: 'create', changed: 'update', removed: 'delete' } as const;

export function landedChanges(changes: readonly LayerChange[]): RecordedChange[] {
  return changes.flatMap((c) => [
    {
      path: c.path,
      op: OPS[c.change],
      kind: c.kind,
      sha256_before: c.sha256_before ?? null,
      sha256_after: c.version?.sha256 ?? null,
      backup_id: c.backup_id ?? null,
      lines_added: 0,
      lines_removed: 0,
    },
    // Each file of a directory it replaced or removed, with its backup: the checkpoint holds them, and rewind
    // brings them back by id (docs/api.md, "Turns, checkpoints and rewind").
    ...(c.removed_files ?? []).map((f) => ({ path: f.path, op: 'delete' as const, kind: 'file' as const, sha256_before: f.sha256, sha256_after: null, backup_id: f.backup_id, lines_added: 0, lines_removed: 0 })),
  ]);
}
