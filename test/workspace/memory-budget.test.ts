import { describe, expect, it } from 'vitest';
import { MemoryBudget, memoryBudgetOf, withMemory } from '../../src/workspace/memory-budget.js';
import { ServiceRuntime } from '../../src/workspace/runtime.js';
import type { Workspace } from '../../src/workspace/workspace.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('memory budget', () => {
  it('grants what fits at once and queues the rest first in, first out', async () => {
    const b = new MemoryBudget(100);
    const order: string[] = [];
    const r1 = await b.acquire(60);
    const p2 = b.acquire(30).then((r) => (order.push('b'), r));
    const p3 = b.acquire(50).then((r) => (order.push('c'), r));
    const p4 = b.acquire(5).then((r) => (order.push('d'), r)); // fits, but waits behind c
    await tick();
    expect(order).toEqual(['b']);
    expect(b.held).toBe(90);
    expect(b.waiting).toBe(2);
    r1();
    await tick();
    expect(order).toEqual(['b', 'c', 'd']);
    expect(b.held).toBe(85);
    for (const r of await Promise.all([p2, p3, p4])) r();
    expect(b.held).toBe(0);
  });

  it('runs a request larger than the budget alone', async () => {
    const b = new MemoryBudget(10);
    const small = await b.acquire(4);
    let big = false;
    const pBig = b.acquire(1000).then((r) => ((big = true), r));
    await tick();
    expect(big).toBe(false);
    small();
    const rBig = await pBig;
    expect(b.held).toBe(1000);
    let after = false;
    const pAfter = b.acquire(1).then((r) => ((after = true), r));
    await tick();
    expect(after).toBe(false);
    rBig();
    (await pAfter)();
    expect(b.held).toBe(0);
  });

  it('releases once however often release is called', async () => {
    const b = new MemoryBudget(10);
    const r = await b.acquire(6);
    r();
    r();
    expect(b.held).toBe(0);
    const again = await b.acquire(10);
    expect(b.held).toBe(10);
    again();
  });

  it('lets an aborted waiter leave the queue (and unblock the ones behind it)', async () => {
    const b = new MemoryBudget(10);
    const r1 = await b.acquire(8);
    const ctl = new AbortController();
    const pBig = b.acquire(9, ctl.signal);
    const pSmall = b.acquire(2);
    ctl.abort(new Error('timed out'));
    await expect(pBig).rejects.toThrow('timed out');
    (await pSmall)();
    r1();
    expect(b.held).toBe(0);
    expect(b.waiting).toBe(0);
    await expect(b.acquire(1, ctl.signal)).rejects.toThrow('timed out');
  });

  it('is one budget per limit in a service, none shared with another service, released when the work fails', async () => {
    const runtime = new ServiceRuntime();
    const ws = { runtime, limits: { memoryBudgetBytes: 12345 } } as unknown as Workspace;
    expect(memoryBudgetOf(runtime, 12345)).toBe(memoryBudgetOf(runtime, 12345));
    expect(memoryBudgetOf(new ServiceRuntime(), 12345)).not.toBe(memoryBudgetOf(runtime, 12345));
    await expect(withMemory(ws, 100, undefined, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(memoryBudgetOf(runtime, 12345).held).toBe(0);
    expect(await withMemory(ws, 100, undefined, async () => memoryBudgetOf(runtime, 12345).held)).toBe(100);
  });
});
