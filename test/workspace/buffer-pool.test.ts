import { afterEach, describe, expect, it, vi } from 'vitest';
import { BufferPool } from '../../src/workspace/buffer-pool.js';

describe('buffer pool', () => {
  it('reuses a buffer given back for a similar size, never one twice the size or more', () => {
    const pool = new BufferPool(8 * 1024 * 1024);
    const a = pool.take(1_000_000);
    expect(a.length).toBe(1_000_000);
    pool.give(a);
    expect(pool.freeBytes).toBeGreaterThanOrEqual(1_000_000);
    const b = pool.take(900_000);
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(900_000);
    expect(pool.freeBytes).toBe(0);
    pool.give(b);
    const small = pool.take(200_000); // the free 1 MB buffer is more than twice as large
    expect(small.buffer).not.toBe(a.buffer);
  });

  it('leaves small and huge buffers to the allocator and keeps at most maxFreeBytes', () => {
    const pool = new BufferPool(3 * 1024 * 1024);
    pool.give(pool.take(100));
    pool.give(pool.take(64 * 1024 * 1024));
    expect(pool.freeBytes).toBe(0);
    const bufs = [pool.take(1 << 20), pool.take(1 << 20), pool.take(1 << 20), pool.take(1 << 20)];
    for (const b of bufs) pool.give(b);
    expect(pool.freeBytes).toBe(3 << 20);
    pool.give(bufs[0] as Buffer); // already free: ignored
    expect(pool.freeBytes).toBe(3 << 20);
  });
});

describe('buffer pool when idle', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('drops its free buffers once none has been taken for idleDropMs, not while takes go on', () => {
    vi.useFakeTimers();
    const pool = new BufferPool(8 * 1024 * 1024, 1000);
    pool.give(pool.take(1 << 20));
    expect(pool.freeBytes).toBe(1 << 20);
    vi.advanceTimersByTime(600);
    const a = pool.take(1 << 20); // a take restarts the idle time
    pool.give(a);
    vi.advanceTimersByTime(600);
    expect(pool.freeBytes).toBe(1 << 20);
    vi.advanceTimersByTime(500);
    expect(pool.freeBytes).toBe(0);
    expect(pool.take(1 << 20).buffer).not.toBe(a.buffer);
  });
});
