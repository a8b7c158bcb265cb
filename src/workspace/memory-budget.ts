// A service's budget for the bytes tools hold in memory at once (file contents loaded whole and the
// copies made of them). Callers wait first in, first out for their share, so 32 concurrent edits of 1 MiB
// files queue instead of all holding their buffers at once; one call larger than the whole budget still
// runs, alone. TOOLGATE_MEMORY_BUDGET_BYTES sets the size; the service's runtime (runtime.ts) holds the budget.
import { PartKind, type ServiceRuntime } from './runtime.js';
import type { Workspace } from './workspace.js';

interface Waiter {
  bytes: number;
  grant(): void;
}

/** Why a wait for memory ended early: the call was aborted (its time limit, a closed connection). */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

export class MemoryBudget {
  #held = 0;
  #holders = 0;
  readonly #queue: Waiter[] = [];

  constructor(readonly limit: number) {}

  /** Bytes granted and not yet released. */
  get held(): number {
    return this.#held;
  }

  /** Callers waiting for their share. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Waits for `bytes` (first in, first out) and returns the release function, to be called exactly once.
   * A request over the limit is granted when nothing else is held. An abort of `signal` while waiting
   * leaves the queue and rejects with the signal's reason.
   */
  acquire(bytes: number, signal?: AbortSignal): Promise<() => void> {
    const want = Math.max(0, Math.ceil(bytes));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.#queue.indexOf(waiter);
        if (i === -1) return;
        this.#queue.splice(i, 1);
        reject(abortReason(signal as AbortSignal));
        this.#pump(); // a large request that left may unblock the ones behind it
      };
      const waiter: Waiter = {
        bytes: want,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#releaser(want));
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      this.#pump();
    });
  }

  #fits(bytes: number): boolean {
    return this.#holders === 0 || this.#held + bytes <= this.limit;
  }

  #pump(): void {
    // Strict FIFO: a large request at the head is not overtaken by small ones behind it (it would starve).
    while (this.#queue.length > 0 && this.#fits((this.#queue[0] as Waiter).bytes)) {
      const w = this.#queue.shift() as Waiter;
      this.#held += w.bytes;
      this.#holders++;
      w.grant();
    }
  }

  #releaser(bytes: number): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#held -= bytes;
      this.#holders--;
      this.#pump();
    };
  }
}

/** A service's budgets, one per limit (its workspaces share one; a workspace opened with other limits has its own). */
const BUDGETS = new PartKind(() => new Map<number, MemoryBudget>());

/** The budget of `limit` bytes of the service whose runtime this is. */
export function memoryBudgetOf(runtime: ServiceRuntime, limit: number): MemoryBudget {
  const budgets = runtime.part(BUDGETS);
  let b = budgets.get(limit);
  if (!b) {
    b = new MemoryBudget(limit);
    budgets.set(limit, b);
  }
  return b;
}

/** Runs fn while holding `bytes` of the budget of the service that opened `ws` (TOOLGATE_MEMORY_BUDGET_BYTES). */
export async function withMemory<T>(ws: Workspace, bytes: number, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  const release = await memoryBudgetOf(ws.runtime, ws.limits.memoryBudgetBytes).acquire(bytes, signal);
  try {
    return await fn();
  } finally {
    release();
  }
}
