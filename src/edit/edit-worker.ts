// The edit engine's entry in a worker thread (src/edit/off-thread.ts sends large files here). Engine errors
// come back as an answer, not a throw: the pool keeps one line of a thrown message, and NO_MATCH or
// MULTIPLE_MATCHES carry several lines and their details, which the caller rethrows unchanged.
import { ToolError } from '../errors.js';
import { applyEdits, type ApplyOptions, type EditOutcome, type EditRequest } from './engine.js';
import { PatchError } from './patch-error.js';
import { patchPathKey, planPatch, type PlannedFile } from './patch-plan.js';
import type { PatchOp } from './patch-v4a.js';

export type EditJob =
  | { kind: 'edits'; text: string; edits: EditRequest[]; opts: ApplyOptions }
  /** texts: current text per patchPathKey (null: no file); places: where each path of the patch lands. */
  | { kind: 'patch'; ops: PatchOp[]; texts: Map<string, string | null>; places: Map<string, string> };

export interface SerializedError {
  code: string;
  message: string;
  details: Record<string, unknown> | undefined;
  /** A PatchError's code (the caller maps it as patch-error.ts does). */
  patch?: boolean;
}

export type EditAnswer = { ok: true; outcome: EditOutcome } | { ok: true; plan: PlannedFile[] } | { ok: false; error: SerializedError };

export function handleEditJob(job: EditJob): { result: EditAnswer } {
  try {
    if (job.kind === 'edits') return { result: { ok: true, outcome: applyEdits(job.text, job.edits, job.opts) } };
    const plan = planPatch(
      job.ops,
      (path) => job.texts.get(patchPathKey(path)) ?? null,
      (path) => job.places.get(path) ?? patchPathKey(path),
    );
    return { result: { ok: true, plan } };
  } catch (err) {
    if (err instanceof ToolError) return { result: { ok: false, error: { code: err.code, message: err.message, details: err.details } } };
    if (err instanceof PatchError) return { result: { ok: false, error: { code: err.code, message: err.message, details: err.details, patch: true } } };
    throw err;
  }
}
