// The edit engine on large files runs in a worker (src/workers/bounded-pool.ts): matching, normalising and
// splitting a file of megabytes is linear work that would hold the event loop for tenths of a second, and a
// tolerant match for far longer before its budget ends it. Small files stay on the calling thread: every agent
// step edits one, and a worker costs more than their whole edit. docs/operations.md, "Work off the main thread".
import { fileURLToPath } from 'node:url';
import { E, type ErrorCode } from '../errors.js';
import { BoundedPool, WorkerFailure, WorkerJobError } from '../workers/bounded-pool.js';
import type { EditAnswer, EditJob } from './edit-worker.js';
import { applyEdits, type ApplyOptions, type EditOutcome, type EditRequest } from './engine.js';
import { PatchError, type PatchErrorCode } from './patch-error.js';
import { patchPathKey, planPatch, type PlaceOf, type PlannedFile } from './patch-plan.js';
import type { PatchOp } from './patch-v4a.js';
import { PartKind, type ServiceRuntime } from '../workspace/runtime.js';

/** From this many characters of file text on, the engine runs in a worker: below it the whole edit takes a few ms on the event loop. */
export const OFF_THREAD_CHARS = 256 * 1024;
/** The worker's heap: the file, its line tables and normalised copies, the new text (a 64 MiB file may not fit: FILE_TOO_LARGE). */
export const EDIT_WORKER_HEAP_MB = 384;
/** A last bound if a caller passes no signal; a tool's own limit (its signal) ends the work sooner. */
const BACKSTOP_MS = 10 * 60_000;

/**
 * The edit workers of the calling service (ws.runtime), an abort signal and the time the work may still take
 * (a tool passes its ctx.signal, which fires at the tool's limit).
 */
export interface Bound {
  runtime: ServiceRuntime;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/**
 * Where the worker loads the engine from: tsc's output and the bundle (scripts/bundle.mjs writes
 * dist/edit-worker.js beside dist/serve.js) have edit-worker.js next to this module's file. Run from the
 * TypeScript sources (tsx, vitest), esbuild, a development dependency, bundles it into a data: URL.
 */
async function workerModule(): Promise<string> {
  if (!import.meta.url.endsWith('.ts')) return new URL('./edit-worker.js', import.meta.url).href;
  const name = 'esbuild'; // not a literal: the production bundle must not include esbuild
  const esbuild = (await import(name)) as typeof import('esbuild');
  const out = await esbuild.build({ entryPoints: [fileURLToPath(new URL('./edit-worker.ts', import.meta.url))], bundle: true, write: false, format: 'esm', platform: 'node', target: 'node20', logLevel: 'silent' });
  return `data:text/javascript;base64,${Buffer.from(out.outputFiles[0]?.contents ?? []).toString('base64')}`;
}

/**
 * The worker's handler: imports the engine from `entry` (see workerModule). Written as text: a function's
 * source would carry the test runner's rewrite of import() (vitest), which the worker does not have.
 */
const handlerFor = (entry: string) => `(job) => import(${JSON.stringify(entry)}).then((m) => m.handleEditJob(job))`;

/** One service's edit workers (its ServiceRuntime holds them, EDIT_WORKERS), made at its first large edit. */
class EditWorkers {
  #pool: Promise<BoundedPool> | null = null;
  #closed = false;

  pool(): Promise<BoundedPool> {
    this.#pool ??= workerModule().then(
      (entry) => {
        // A fresh worker per job, two at most: a kept worker would keep the heap its largest file grew.
        const made = new BoundedPool({
          name: 'edit',
          handler: handlerFor(entry),
          size: 2,
          reuse: false,
          resourceLimits: { maxOldGenerationSizeMb: EDIT_WORKER_HEAP_MB, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
        });
        if (this.#closed) made.close();
        return made;
      },
      (err: unknown) => {
        this.#pool = null;
        throw err;
      },
    );
    return this.#pool;
  }

  /** Its service closes: edits still running in a worker are stopped. */
  async close(): Promise<void> {
    this.#closed = true;
    (await this.#pool?.catch(() => null))?.close();
  }
}

const EDIT_WORKERS = new PartKind(() => new EditWorkers());

async function inWorker(job: EditJob, bound: Bound): Promise<EditAnswer> {
  const p = await bound.runtime.part(EDIT_WORKERS).pool();
  const timeoutMs = bound.timeoutMs ?? BACKSTOP_MS;
  try {
    return await p.run<EditAnswer>(job, { timeoutMs, signal: bound.signal });
  } catch (err) {
    if (err instanceof WorkerFailure) {
      if (err.kind === 'aborted') throw err.reason ?? err; // the tool's TIMEOUT, or the client that went away
      if (err.kind === 'timeout') throw E.editTimeout(timeoutMs);
      if (err.kind === 'memory') throw E.editOutOfMemory(EDIT_WORKER_HEAP_MB);
      throw E.editWorkerFailed(err.message);
    }
    if (err instanceof WorkerJobError) throw E.editEngineFailed(err.message);
    throw err;
  }
}

function rethrow(answer: Extract<EditAnswer, { ok: false }>): never {
  const { code, message, details } = answer.error;
  if (answer.error.patch) throw new PatchError(code as PatchErrorCode, message, details);
  throw E.fromEditWorker(code as ErrorCode, message, details);
}

/** applyEdits (engine.ts), in a worker when `text` is large; the same answer and the same ToolErrors. */
export async function applyEditsBounded(text: string, edits: EditRequest[], bound: Bound, opts: ApplyOptions = {}): Promise<EditOutcome> {
  if (text.length < OFF_THREAD_CHARS) return applyEdits(text, edits, opts);
  const answer = await inWorker({ kind: 'edits', text, edits, opts }, bound);
  if (!answer.ok) rethrow(answer);
  return (answer as { outcome: EditOutcome }).outcome;
}

/**
 * planPatch (patch-plan.ts) over texts known up front (keyed by patchPathKey), in a worker when they are
 * large together; the same plan and the same PatchErrors.
 */
export async function planPatchBounded(ops: PatchOp[], texts: Map<string, string | null>, placeOf: PlaceOf, bound: Bound): Promise<PlannedFile[]> {
  let chars = 0;
  for (const t of texts.values()) chars += t?.length ?? 0;
  if (chars < OFF_THREAD_CHARS) return planPatch(ops, (path) => texts.get(patchPathKey(path)) ?? null, placeOf);
  const places = new Map<string, string>();
  for (const op of ops) {
    places.set(op.path, placeOf(op.path));
    if (op.type === 'update' && op.moveTo !== undefined) places.set(op.moveTo, placeOf(op.moveTo));
  }
  const answer = await inWorker({ kind: 'patch', ops, texts, places }, bound);
  if (!answer.ok) rethrow(answer);
  return (answer as { plan: PlannedFile[] }).plan;
}
