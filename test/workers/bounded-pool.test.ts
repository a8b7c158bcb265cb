// The shared worker pool (src/workers/bounded-pool.ts) that runs parsers, user regexes and searches: a job
// that never yields, allocates without end or is aborted ends with its kind of failure, and the pool serves
// the next job.
import { describe, expect, it } from 'vitest';
import { BoundedPool, WorkerFailure, WorkerJobError } from '../../src/workers/bounded-pool.js';

type Job = { op: 'echo'; value: number } | { op: 'spin' } | { op: 'grow' } | { op: 'throw' } | { op: 'count' };

// Self-contained: shipped to the worker as source text.
function handler(job: Job): { result: unknown } {
  const g = globalThis as { jobsSeen?: number };
  g.jobsSeen = (g.jobsSeen ?? 0) + 1;
  if (job.op === 'echo') return { result: job.value * 2 };
  if (job.op === 'count') return { result: g.jobsSeen };
  if (job.op === 'throw') throw Object.assign(new Error('bad input\nsecond line'), { code: 'SOME_CODE', details: { at: 3 } });
  if (job.op === 'grow') {
    const held: number[][] = [];
    for (;;) held.push(new Array(1_000_000).fill(held.length));
  }
  for (;;);
}

const pool = (reuse: boolean) =>
  new BoundedPool({ name: 'test', handler: handler.toString(), size: 1, reuse, resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8, stackSizeMb: 4 } });

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}

describe('BoundedPool', () => {
  it('answers a job, and passes a thrown error on as one line with its code and details', async () => {
    const p = pool(true);
    expect(await p.run({ op: 'echo', value: 21 }, { timeoutMs: 60_000 })).toBe(42);
    const err = await failure(p.run({ op: 'throw' }, { timeoutMs: 60_000 }));
    expect(err).toBeInstanceOf(WorkerJobError);
    expect(err).toMatchObject({ message: 'bad input', code: 'SOME_CODE', details: { at: 3 } });
  });

  it('terminates a job that never yields at its deadline and serves the next job', async () => {
    const p = pool(true);
    const err = await failure(p.run({ op: 'spin' }, { timeoutMs: 200 }));
    expect(err).toBeInstanceOf(WorkerFailure);
    expect((err as WorkerFailure).kind).toBe('timeout');
    expect(await p.run({ op: 'echo', value: 1 }, { timeoutMs: 60_000 })).toBe(2);
  });

  it('ends a job that passes its heap limit as memory, and serves the next job', async () => {
    const p = pool(true);
    const err = await failure(p.run({ op: 'grow' }, { timeoutMs: 120_000 }));
    expect((err as WorkerFailure).kind).toBe('memory');
    expect(await p.run({ op: 'echo', value: 2 }, { timeoutMs: 60_000 })).toBe(4);
  });

  it('terminates a running job when its signal aborts, and refuses one already aborted', async () => {
    const p = pool(true);
    const controller = new AbortController();
    const running = failure(p.run({ op: 'spin' }, { timeoutMs: 120_000, signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('caller gone')), 50);
    const err = (await running) as WorkerFailure;
    expect(err.kind).toBe('aborted');
    expect((err.reason as Error).message).toBe('caller gone');
    expect(((await failure(p.run({ op: 'echo', value: 1 }, { timeoutMs: 1000, signal: controller.signal }))) as WorkerFailure).kind).toBe('aborted');
    expect(await p.run({ op: 'echo', value: 3 }, { timeoutMs: 60_000 })).toBe(6);
  });

  it('keeps a worker between jobs when reused, and starts a fresh one per job otherwise', async () => {
    const kept = pool(true);
    await kept.run({ op: 'count' }, { timeoutMs: 60_000 });
    expect(await kept.run({ op: 'count' }, { timeoutMs: 60_000 })).toBe(2);
    const fresh = pool(false);
    await fresh.run({ op: 'count' }, { timeoutMs: 60_000 });
    expect(await fresh.run({ op: 'count' }, { timeoutMs: 60_000 })).toBe(1);
  });
});
