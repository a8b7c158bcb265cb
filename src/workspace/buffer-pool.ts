// Buffers for files loaded whole (edit_file), reused from call to call. A fresh buffer per call is garbage
// right after it, and V8 collects such buffers only once tens of MiB of them have piled up; each fresh one
// also has its pages faulted in by the read. Reused buffers keep the resident set at what is in use plus a
// small free list. A buffer goes back only when nothing refers to it any more (no pending write). The free
// list is dropped once no buffer has been taken for a while, so a burst of edits does not leave its buffers
// resident under the loads that follow (bench/README.md, hot spot 7).

/** Sizes worth pooling: smaller ones come from Node's own slab, larger ones are rare and would pin memory. */
const MIN_POOLED = 64 * 1024;
const MAX_POOLED = 8 * 1024 * 1024;
/** Capacities are rounded up to this, so files of similar size share buffers. */
const GRANULE = 64 * 1024;

/** Free buffers are dropped after this long without a take(). */
const IDLE_DROP_MS = 1000;

export class BufferPool {
  readonly #free: Buffer[] = [];
  #freeBytes = 0;
  #lastTake = 0;
  #sweep: NodeJS.Timeout | null = null;

  constructor(
    readonly maxFreeBytes: number,
    readonly idleDropMs = IDLE_DROP_MS,
  ) {}

  /** Bytes held by free buffers. */
  get freeBytes(): number {
    return this.#freeBytes;
  }

  /** A buffer of `size` bytes (contents undefined): a free one that fits, else a new one. */
  take(size: number): Buffer {
    if (size < MIN_POOLED || size > MAX_POOLED) return Buffer.allocUnsafe(size);
    this.#lastTake = Date.now();
    let best = -1;
    for (let i = 0; i < this.#free.length; i++) {
      const cap = (this.#free[i] as Buffer).length;
      // At most twice the size: a small file should not hold on to a large buffer.
      if (cap >= size && cap <= 2 * size && (best === -1 || cap < (this.#free[best] as Buffer).length)) best = i;
    }
    if (best === -1) return Buffer.allocUnsafeSlow(Math.ceil(size / GRANULE) * GRANULE).subarray(0, size);
    const buf = this.#free.splice(best, 1)[0] as Buffer;
    this.#freeBytes -= buf.length;
    return buf.subarray(0, size);
  }

  /** Returns a buffer from take() (or a view of it) once nothing refers to it any more. */
  give(view: Buffer): void {
    const whole = Buffer.from(view.buffer, 0, view.buffer.byteLength);
    if (whole.length < MIN_POOLED || whole.length > MAX_POOLED + GRANULE || view.byteOffset !== 0) return;
    if (this.#freeBytes + whole.length > this.maxFreeBytes) return;
    if (this.#free.some((b) => b.buffer === whole.buffer)) return; // given twice
    this.#free.push(whole);
    this.#freeBytes += whole.length;
    this.#armSweep(this.idleDropMs);
  }

  #armSweep(ms: number): void {
    if (this.#sweep) return;
    this.#sweep = setTimeout(() => {
      this.#sweep = null;
      const idle = Date.now() - this.#lastTake;
      if (idle < this.idleDropMs) return this.#armSweep(this.idleDropMs - idle);
      this.#free.length = 0;
      this.#freeBytes = 0;
    }, ms);
    this.#sweep.unref();
  }
}

/** The process's pool for whole-file reads: spare memory only, whose reuse no service can tell from a new buffer. */
export const fileBuffers = new BufferPool(16 * 1024 * 1024);
