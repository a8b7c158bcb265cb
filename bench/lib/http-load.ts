// HTTP load with autocannon used programmatically. Latencies are taken from autocannon's per-response
// event (sub-millisecond floats) instead of its integer-millisecond histogram, so p50/p99 are exact.
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';
import { progress } from './log.js';
import { percentile } from './stats.js';

export interface LoadResult {
  /** 2xx responses per second over the run. */
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
  /** 2xx answers the spec's `flag` picked out (e.g. truncated searches). */
  flagged: number;
  elapsedS: number;
  /** The first non-2xx answer (status and start of the body), to report what went wrong. */
  firstFailure: string | null;
}

/** A request of the load: a pre-serialized body, and what to do when its answer came. */
export interface LoadRequest {
  body: string;
  onDone?: (ok: boolean) => void;
}

export interface LoadSpec {
  port: number;
  path: string;
  headers: Record<string, string>;
  connections: number;
  /** Seconds of counted load after `rampS` seconds of uncounted load; or `amount` requests in all (all counted). */
  durationS?: number;
  rampS?: number;
  amount?: number;
  /** A fixed body, or a factory called for every request (file leases for writes and edits). */
  body?: string;
  next?: () => LoadRequest;
  timeoutS?: number;
  /** Marks 2xx answers worth counting apart (their body is inspected, so only use it where needed). */
  flag?: (body: string) => boolean;
}

interface LeaseContext {
  pending?: LoadRequest;
}

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const doneAt: number[] = [];
    let firstFailure: string | null = null;
    let flagged = 0;
    const onResponse = (status: number, body: string, context: object) => {
      const c = context as LeaseContext;
      const ok = status >= 200 && status < 300;
      c.pending?.onDone?.(ok);
      if (ok && spec.flag?.(body)) flagged++;
      if (!ok && firstFailure === null) firstFailure = `${status} ${body.slice(0, 300)}`;
      c.pending = undefined;
    };
    const request: autocannon.Request = spec.next
      ? {
          setupRequest: (req, context) => {
            const r = (spec.next as () => LoadRequest)();
            (context as LeaseContext).pending = r;
            return { ...req, body: r.body };
          },
          onResponse,
        }
      : { body: spec.body ?? '{}', onResponse };
    const started = performance.now();
    const timed = spec.amount === undefined;
    const rampS = timed ? (spec.rampS ?? 0) : 0;
    const windowStart = started + rampS * 1000;
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${spec.port}${spec.path}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...spec.headers },
        connections: spec.connections,
        pipelining: 1,
        ...(timed ? { duration: rampS + (spec.durationS ?? 3) } : { amount: spec.amount }),
        timeout: spec.timeoutS ?? 60,
        requests: [request],
      },
      (err, result) => {
        if (err) return reject(err);
        // Only answers completed inside the window count: the ramp (connections filling up, first
        // answers of slow operations) is left out, and so is nothing else.
        const end = performance.now();
        const elapsedS = (end - windowStart) / 1000;
        const inWindow = latencies.filter((_, i) => (doneAt[i] as number) >= windowStart);
        const ok = inWindow.length;
        void result;
        resolve({
          rps: ok / elapsedS,
          p50: percentile(inWindow, 50),
          p99: percentile(inWindow, 99),
          ok,
          failed: result.non2xx + result.errors,
          flagged,
          elapsedS,
          firstFailure: firstFailure ?? (result.errors > 0 ? `${result.errors} connection errors/timeouts` : null),
        });
      },
    );
    // autocannon emits (client, status, bytes, ms); its typings omit the client.
    (instance as unknown as EventEmitter).on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status < 300) {
        latencies.push(ms);
        doneAt.push(performance.now());
      }
    });
  });
}

/**
 * Leases of two-state files for writes and edits: a request takes a file nobody else is changing, and
 * the file's state flips when the change succeeded. So every request is a real change, and no two
 * in-flight requests race on one file (which would measure lock waits, not the tool).
 */
export class LeasePool {
  private readonly free: number[];
  private readonly leasedAt = new Map<number, number>();
  /** Leases taken back from requests that never got an answer (a connection the server closed mid-request). */
  reclaimed = 0;
  constructor(private readonly states: (0 | 1)[]) {
    this.free = states.map((_, i) => i);
  }

  take(): { index: number; state: 0 | 1 } {
    let index = this.free.shift();
    if (index === undefined) {
      // Every file is leased: the oldest lease belongs to a request that was lost (autocannon resends
      // on a new connection without answering the old one). Taking it back may race a late answer,
      // which then shows as a failed request instead of stopping the run.
      let oldest = Number.POSITIVE_INFINITY;
      for (const [i, at] of this.leasedAt) {
        if (at < oldest) {
          oldest = at;
          index = i;
        }
      }
      if (index === undefined) throw new Error('lease pool is empty');
      if (this.reclaimed++ === 0) progress('  ! a request got no answer (connection closed by the server?); its file lease was taken back');
    }
    this.leasedAt.set(index, performance.now());
    return { index, state: this.states[index] as 0 | 1 };
  }

  done(index: number, ok: boolean): void {
    if (ok) this.states[index] = this.states[index] === 0 ? 1 : 0;
    if (this.leasedAt.delete(index)) this.free.push(index);
  }
}

/** A request factory over a lease pool: `bodies[index][state]` is the change that leaves `state`. */
export function leasedRequests(pool: LeasePool, bodies: readonly (readonly [string, string])[]): () => LoadRequest {
  return () => {
    const { index, state } = pool.take();
    return { body: (bodies[index] as readonly [string, string])[state], onDone: (ok) => pool.done(index, ok) };
  };
}
