// Worker threads for work on caller-supplied or fetched content that may take long or allocate without
// end (HTML conversion, office documents, tolerant edit matching). Each job runs under the worker's heap and
// stack limits and a deadline; a worker past its deadline, out of memory or aborted is terminated (a stuck
// parser never yields, so it cannot be asked to stop) and replaced, so the event loop never waits on it.
// docs/operations.md ("Work off the main thread") lists who runs here and with which bounds.
//
// Workers start from source text (Function#toString), as search/pool.ts does, so the same code runs under
// tsx/vitest, from tsc's output and from the esbuild bundle; a job's code must be self-contained and gets
// any package it needs by absolute path (resolved in the main thread with createRequire).
import { performance } from 'node:perf_hooks';
import { Worker, type ResourceLimits, type Transferable } from 'node:worker_threads';

/** Why a job ended without an answer; callers turn each into their own envelope error. */
export type WorkerFailureKind = 'timeout' | 'memory' | 'aborted' | 'crashed';

export class WorkerFailure extends Error {
  constructor(
    readonly kind: WorkerFailureKind,
    message: string,
    /** The abort reason, for kind 'aborted'. */
    readonly reason?: unknown,
  ) {
    super(message);
    this.name = 'WorkerFailure';
  }
}

/** A job's handler threw inside the worker: its message (one line) and the `code` property it carried. */
export class WorkerJobError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly details: Record<string, unknown> | undefined,
  ) {
    super(message);
    this.name = 'WorkerJobError';
  }
}

/** Jobs each named pool has handed to a worker since start (the metric toolgate_worker_jobs_total). */
export const workerJobs = new Map<string, number>();

export interface BoundedPoolOptions {
  /** The pool's label in toolgate_worker_jobs_total (docs/operations.md). */
  name: string;
  /**
   * Source of a function expression `(job) => { result, transfer? } | Promise<…>`. See `handlerSource`; it
   * loads packages with process.getBuiltinModule('node:module').createRequire, never the free `require`,
   * which the bundler rewrites.
   */
  handler: string;
  /** Workers at most; more jobs wait their turn (their deadline runs while they wait). */
  size: number;
  resourceLimits: ResourceLimits;
  /** Keep a worker for the next job (false: a fresh worker per job, nothing of one input meets the next). */
  reuse: boolean;
  /**
   * When a job's time starts: at run() (default; the wait for a worker counts, as for a call's own limit), or
   * when a worker takes it (a limit on the work alone, such as TOOLGATE_REGEX_TIMEOUT_MS).
   */
  timeFrom?: 'call' | 'dispatch';
}

export interface RunOptions {
  /** Time from the call to run() until the answer; past it the worker is terminated (WorkerFailure 'timeout'). */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  transfer?: Transferable[];
}

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; message: string; code?: string; details?: Record<string, unknown> };

interface Job {
  id: number;
  message: unknown;
  transfer: Transferable[];
  deadline: number;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  job: { job: Job; timer: NodeJS.Timeout } | null;
  done: boolean;
}

// esbuild's keepNames (tsx) wraps nested functions in __name(); the worker has no such helper.
function workerSource(handler: string): string {
  return `"use strict";
var __name = (f) => f;
const { parentPort } = require('node:worker_threads');
const handler = (${handler});
parentPort.on('message', async ({ id, job }) => {
  try {
    const out = await handler(job);
    parentPort.postMessage({ id, ok: true, result: out.result }, out.transfer || []);
  } catch (err) {
    const e = err || {};
    // One line, bounded, never a stack: parser messages can be long or carry the input.
    const message = String(e.message !== undefined ? e.message : err).split('\\n')[0].slice(0, 300);
    parentPort.postMessage({ id, ok: false, message, code: typeof e.code === 'string' ? e.code : undefined, details: e.details && typeof e.details === 'object' ? e.details : undefined });
  }
});
`;
}

/** `fn`'s source as a handler: `fn` must be self-contained (no imports, nothing from outside its body). */
export function handlerSource(fn: (...args: never[]) => unknown, ...args: unknown[]): string {
  if (args.length === 0) return fn.toString();
  return `((job) => (${fn.toString()})(job, ${args.map((a) => (typeof a === 'function' ? `(${a.toString()})` : JSON.stringify(a))).join(', ')}))`;
}

export class BoundedPool {
  readonly #options: BoundedPoolOptions;
  readonly #source: string;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: BoundedPoolOptions) {
    this.#options = options;
    this.#source = workerSource(options.handler);
  }

  run<R>(message: unknown, options: RunOptions): Promise<R> {
    const { signal } = options;
    if (this.#closed) return Promise.reject(new WorkerFailure('aborted', 'The service closed.'));
    if (signal?.aborted) return Promise.reject(new WorkerFailure('aborted', 'The call was aborted.', signal.reason));
    return new Promise<R>((resolve, reject) => {
      const job: Job = {
        id: this.#nextId++,
        message,
        transfer: options.transfer ?? [],
        deadline: performance.now() + options.timeoutMs,
        timeoutMs: options.timeoutMs,
        signal,
        onAbort: () => this.#abort(job),
        resolve: resolve as (v: unknown) => void,
        reject,
      };
      signal?.addEventListener('abort', job.onAbort, { once: true });
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** Its owner (a service) closes: waiting jobs fail, running workers are stopped, and no job is taken any more. */
  close(): void {
    this.#closed = true;
    const closed = new WorkerFailure('aborted', 'The service closed.');
    for (const job of this.#queue.splice(0)) {
      this.#finish(job);
      job.reject(closed);
    }
    for (const slot of [...this.#slots]) this.#drop(slot, closed);
  }

  #spawn(): Slot {
    const worker = new Worker(this.#source, { eval: true, resourceLimits: this.#options.resourceLimits });
    const slot: Slot = { worker, job: null, done: false };
    worker.unref();
    worker.on('message', (reply: Reply) => this.#settle(slot, reply));
    worker.on('error', (err: Error & { code?: string }) =>
      this.#drop(
        slot,
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new WorkerFailure('memory', 'The worker ran out of its memory limit.')
          : new WorkerFailure('crashed', `The worker failed (${String(err.message).split('\n')[0]?.slice(0, 200)}).`),
      ),
    );
    worker.on('exit', (code) => this.#drop(slot, new WorkerFailure('crashed', `The worker stopped unexpectedly (exit code ${code}).`)));
    this.#slots.push(slot);
    return slot;
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const slot = this.#slots.find((s) => s.job === null) ?? (this.#slots.length < this.#options.size ? this.#spawn() : null);
      if (!slot) return;
      const job = this.#queue.shift() as Job;
      const left = this.#options.timeFrom === 'dispatch' ? job.timeoutMs : job.deadline - performance.now();
      if (left <= 0) {
        this.#finish(job);
        job.reject(this.#timeout(job));
        continue;
      }
      const timer = setTimeout(() => this.#drop(slot, this.#timeout(job)), left);
      slot.job = { job, timer };
      workerJobs.set(this.#options.name, (workerJobs.get(this.#options.name) ?? 0) + 1);
      try {
        slot.worker.postMessage({ id: job.id, job: job.message }, job.transfer);
      } catch (err) {
        clearTimeout(timer);
        slot.job = null;
        this.#finish(job);
        job.reject(err);
      }
    }
  }

  #timeout(job: Job): WorkerFailure {
    return new WorkerFailure('timeout', `The work took longer than its ${job.timeoutMs} ms limit and was stopped.`);
  }

  #finish(job: Job): void {
    job.signal?.removeEventListener('abort', job.onAbort);
  }

  #settle(slot: Slot, reply: Reply): void {
    const cur = slot.job;
    if (!cur || cur.job.id !== reply.id) return;
    clearTimeout(cur.timer);
    slot.job = null;
    this.#finish(cur.job);
    const answer = () => (reply.ok ? cur.job.resolve(reply.result) : cur.job.reject(new WorkerJobError(reply.message, reply.code, reply.details)));
    if (this.#options.reuse) answer();
    // A single-use worker answers once it is gone: the caller may then count the memory it held as free
    // (the office readers release their memory budget on the answer).
    else void this.#retire(slot).then(answer, answer);
    this.#pump();
  }

  #abort(job: Job): void {
    const waiting = this.#queue.indexOf(job);
    const reason = job.signal?.reason;
    if (waiting !== -1) {
      this.#queue.splice(waiting, 1);
      job.reject(new WorkerFailure('aborted', 'The call was aborted.', reason));
      return;
    }
    const slot = this.#slots.find((s) => s.job?.job === job);
    if (slot) this.#drop(slot, new WorkerFailure('aborted', 'The call was aborted.', reason));
  }

  /** Takes a worker out of the pool after its job, without failing anything. */
  #retire(slot: Slot): Promise<number> {
    const i = this.#slots.indexOf(slot);
    if (i !== -1) this.#slots.splice(i, 1);
    slot.done = true;
    return slot.worker.terminate();
  }

  /** Removes a worker (timed out, aborted, out of memory, crashed or exited), failing its job. */
  #drop(slot: Slot, err: unknown): void {
    if (slot.done) return;
    slot.done = true;
    const i = this.#slots.indexOf(slot);
    if (i !== -1) this.#slots.splice(i, 1);
    const cur = slot.job;
    slot.job = null;
    void slot.worker.terminate();
    if (cur) {
      clearTimeout(cur.timer);
      this.#finish(cur.job);
      cur.job.reject(err);
    }
    this.#pump();
  }
}
