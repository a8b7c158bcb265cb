// The executor's time limit and the tool's abort signal: the signal is made only when a tool asks for it,
// and it is aborted whether the tool asked before the time ran out, after, or never.
import { describe, expect, it } from 'vitest';
import type { ToolContext, ToolDefinition } from '../../src/tools/define.js';
import { runWithTimeout, type CallInfo } from '../../src/tools/execute.js';
import type { Workspace } from '../../src/workspace/workspace.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function toolRunning(run: (ctx: ToolContext) => Promise<unknown>): ToolDefinition {
  return { name: 'probe', run: async (ctx: ToolContext) => ({ data: await run(ctx), text: '' }) } as unknown as ToolDefinition;
}

function callWith(signal?: AbortSignal): CallInfo {
  return { ws: {} as Workspace, requestId: 'r1', signal };
}

describe('runWithTimeout', () => {
  it('answers TIMEOUT and aborts a signal the tool took before the time ran out', async () => {
    let seen: AbortSignal | undefined;
    const abortedAt: number[] = [];
    const tool = toolRunning(async (ctx) => {
      seen = ctx.signal;
      seen.addEventListener('abort', () => abortedAt.push(Date.now()));
      await sleep(100);
      return null;
    });
    const started = Date.now();
    await expect(runWithTimeout(tool, callWith(), {}, 20)).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(seen?.aborted).toBe(true);
    expect(abortedAt).toHaveLength(1);
    expect((abortedAt[0] as number) - started).toBeLessThan(100);
  });

  it('hands an already aborted signal to a tool that asks only after the time ran out', async () => {
    let late: boolean | undefined;
    const tool = toolRunning(async (ctx) => {
      await sleep(60);
      late = ctx.signal.aborted;
      return null;
    });
    await expect(runWithTimeout(tool, callWith(), {}, 10)).rejects.toMatchObject({ code: 'TIMEOUT' });
    await sleep(80);
    expect(late).toBe(true);
  });

  it('passes the caller going away on to the tool, before and after the tool asks', async () => {
    const gone = new AbortController();
    const states: boolean[] = [];
    const tool = toolRunning(async (ctx) => {
      await sleep(10);
      states.push(ctx.signal.aborted);
      return null;
    });
    gone.abort();
    await runWithTimeout(tool, callWith(gone.signal), {}, 1000);
    const later = new AbortController();
    let signal: AbortSignal | undefined;
    const waits = toolRunning(async (ctx) => {
      signal = ctx.signal;
      await sleep(30);
      return signal.aborted;
    });
    const pending = runWithTimeout(waits, callWith(later.signal), {}, 1000);
    await sleep(5);
    later.abort();
    expect((await pending).data).toBe(true);
    expect(states).toEqual([true]);
  });

  it('a call that ends in time sees a signal that is not aborted', async () => {
    let asked = false;
    const quick = toolRunning(async () => 'done');
    await expect(runWithTimeout(quick, callWith(), {}, 1000)).resolves.toMatchObject({ data: 'done' });
    const checks = toolRunning(async (ctx) => {
      asked = true;
      return ctx.signal.aborted;
    });
    await expect(runWithTimeout(checks, callWith(), {}, 1000)).resolves.toMatchObject({ data: false });
    expect(asked).toBe(true);
  });
});
