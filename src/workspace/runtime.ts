// What one service owns and shares with no other service of the process: how the sandbox names entries, and
// the parts its modules keep per service (file-lock queues, checkpoint caches, backup totals, memory budgets,
// office and edit worker pools). Every workspace a service opens reaches it as `ws.runtime`, so two services in
// one process (tests, an embedder) never change each other's behaviour. This module knows none of those parts:
// each module declares its own kind (PartKind), so nothing here imports them.

/** Where Linux names a process's open descriptors; the default of a workspace opened without a service. */
export const DEFAULT_FD_DIR = '/proc/self/fd';

/** A part that holds something to end (worker pools): its `close` runs when the service closes. */
export interface ClosingPart {
  close(): Promise<void> | void;
}

/** A kind of part, made once per service by `make` at its first use. */
export class PartKind<T extends object> {
  constructor(readonly make: () => T) {}
}

export class ServiceRuntime {
  /**
   * Where the kernel names open descriptors; null when the weaker check was accepted because there is none
   * (entries are then named by their real path string, so a concurrent swap can redirect them).
   */
  readonly fdDir: string | null;
  readonly #parts = new Map<PartKind<object>, object>();

  constructor(fdDir: string | null = DEFAULT_FD_DIR) {
    this.fdDir = fdDir;
  }

  /** The service's part of this kind, made at its first use (one Map lookup afterwards). */
  part<T extends object>(kind: PartKind<T>): T {
    let p = this.#parts.get(kind);
    if (!p) {
      p = kind.make();
      this.#parts.set(kind, p);
    }
    return p as T;
  }

  /** At shutdown, after the calls in flight: the parts made so far are closed (their workers stopped). */
  async close(): Promise<void> {
    const parts = [...this.#parts.values()];
    this.#parts.clear();
    await Promise.all(parts.map(async (p) => (p as Partial<ClosingPart>).close?.()));
  }
}
