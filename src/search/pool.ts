// A small pool of search worker threads (search_files), on the shared bounded pool
// (src/workers/bounded-pool.ts). Each batch of files runs in one worker under a hard time limit; a worker past
// its limit is terminated and replaced, so neither a catastrophic regex nor a stalled file system can hold the
// event loop or a worker for good.
import os from 'node:os';
import { E } from '../errors.js';
import { BoundedPool, WorkerFailure, WorkerJobError } from '../workers/bounded-pool.js';
import { PartKind, type ServiceRuntime } from '../workspace/runtime.js';
import { SEARCH_WORKER_SOURCE, type BatchFiles, type BatchRequest, type SearchSpec } from './worker.js';

export type { BatchFiles, SearchSpec } from './worker.js';

const POOL_SIZE = Math.max(1, Math.min(4, os.availableParallelism()));
/** Each worker's heap: one file of TOOLGATE_MAX_READ_BYTES decoded, and its hits. */
const SEARCH_WORKER_HEAP_MB = 256;

export interface BatchAnswer {
  files: BatchFiles;
  nameHits: number[];
}

/** A batch of a literal search ran past its time limit (a stalled file system): the search stops, truncated. */
export class BatchStalled extends Error {}

// Each service's own (its runtime), closed with it.
const SEARCH_POOL = new PartKind(
  () =>
    new BoundedPool({
      name: 'search',
      handler: SEARCH_WORKER_SOURCE,
      size: POOL_SIZE,
      reuse: true,
      // The limit is the batch's own: waiting for a free worker does not count against it.
      timeFrom: 'dispatch',
      resourceLimits: { maxOldGenerationSizeMb: SEARCH_WORKER_HEAP_MB, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    }),
);

/**
 * Searches the files at `paths` (absolute, from a sandboxed walk) and tests `names`, in a worker of the
 * calling service (`runtime`) under `timeoutMs`.
 */
export async function searchBatch(runtime: ServiceRuntime, spec: SearchSpec, paths: string[], names: string[], timeoutMs: number): Promise<BatchAnswer> {
  try {
    return await runtime.part(SEARCH_POOL).run<BatchAnswer>({ spec, paths, names } satisfies Omit<BatchRequest, 'id'>, { timeoutMs });
  } catch (err) {
    if (err instanceof WorkerJobError) throw E.invalidRegex(err.message);
    // A stuck regex never yields, so the worker could not answer: it was terminated.
    if (err instanceof WorkerFailure && err.kind === 'timeout') throw spec.kind === 'regex' ? E.regexTimeout(timeoutMs) : new BatchStalled();
    if (err instanceof WorkerFailure && err.kind === 'memory') {
      throw E.searchOutOfMemory(SEARCH_WORKER_HEAP_MB);
    }
    throw E.searchWorkerFailed((err as Error)?.message ?? String(err));
  }
}
