// A small pool of search worker threads (search_files). Each batch of files runs in one worker under a hard
// time limit; a worker past its limit is terminated and replaced, so neither a catastrophic regex nor a
// stalled file system can hold the event loop or a worker for good.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { ToolError } from '../envelope.js';
import { RegexTimeout } from './regex.js';
import { searchWorkerMain, type BatchFiles, type BatchReply, type BatchRequest, type SearchSpec } from './worker.js';

export type { BatchFiles, SearchSpec } from './worker.js';

// esbuild's keepNames (tsx) wraps nested functions in __name(); the worker has no such helper.
const WORKER_SOURCE = `"use strict";\nvar __name = (f) => f;\n(${searchWorkerMain.toString()})();\n`;
const POOL_SIZE = Math.max(1, Math.min(4, os.availableParallelism()));

export interface BatchAnswer {
  files: BatchFiles;
  nameHits: number[];
}

/** A batch of a literal search ran past its time limit (a stalled file system): the search stops, truncated. */
export class BatchStalled extends Error {}

interface Job {
  request: Omit<BatchRequest, 'id'>;
  timeoutMs: number;
  resolve(a: BatchAnswer): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  job: { id: number; job: Job; timer: NodeJS.Timeout } | null;
}

class SearchPool {
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private nextId = 1;

  run(request: Omit<BatchRequest, 'id'>, timeoutMs: number): Promise<BatchAnswer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, timeoutMs, resolve, reject });
      this.pump();
    });
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true }), job: null };
    slot.worker.unref();
    slot.worker.on('message', (reply: BatchReply) => this.settle(slot, reply));
    slot.worker.on('error', (err) => this.drop(slot, new ToolError('EXECUTION_ERROR', `Search worker failed: ${err.message}`)));
    slot.worker.on('exit', () => this.drop(slot, new ToolError('EXECUTION_ERROR', 'Search worker exited.')));
    this.slots.push(slot);
    return slot;
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => s.job === null) ?? (this.slots.length < POOL_SIZE ? this.spawn() : null);
      if (!slot) return;
      const job = this.queue.shift() as Job;
      const id = this.nextId++;
      const timer = setTimeout(() => {
        // A stuck regex never yields, so the worker cannot answer: terminate it and start afresh.
        this.drop(slot, job.request.spec.kind === 'regex' ? new RegexTimeout(job.timeoutMs) : new BatchStalled());
        void slot.worker.terminate();
      }, job.timeoutMs);
      slot.job = { id, job, timer };
      slot.worker.postMessage({ ...job.request, id } satisfies BatchRequest);
    }
  }

  private settle(slot: Slot, reply: BatchReply): void {
    const cur = slot.job;
    if (!cur || cur.id !== reply.id) return;
    clearTimeout(cur.timer);
    slot.job = null;
    if (reply.ok) cur.job.resolve({ files: reply.files, nameHits: reply.nameHits });
    else cur.job.reject(new ToolError('INVALID_REGEX', `Invalid regex pattern: ${reply.error}`));
    this.pump();
  }

  /** Removes a worker from the pool (timed out, crashed or exited), failing its job. */
  private drop(slot: Slot, err: unknown): void {
    const i = this.slots.indexOf(slot);
    if (i === -1) return;
    this.slots.splice(i, 1);
    const cur = slot.job;
    slot.job = null;
    if (cur) {
      clearTimeout(cur.timer);
      cur.job.reject(err);
    }
    this.pump();
  }
}

const pool = new SearchPool();

/** Searches the files at `paths` (absolute, from a sandboxed walk) and tests `names`, in a worker under `timeoutMs`. */
export function searchBatch(spec: SearchSpec, paths: string[], names: string[], timeoutMs: number): Promise<BatchAnswer> {
  return pool.run({ spec, paths, names }, timeoutMs);
}
