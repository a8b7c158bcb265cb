// The executor's time limit and the tool's abort signal: the signal is made only when a tool asks for it,
// and it is aborted whether the tool asked before the time ran out, after, or never. A mutating tool is
// answered only once it has settled: TIMEOUT when it stopped before committing, its success when it had
// committed. Timers are fake and the tools wait on gates this test opens, so nothing depends on the clock
// (issue 12, finding 3: an assertion on elapsed milliseconds failed on a loaded machine).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ToolContext, ToolDefinition } from '../../src/tools/define.js';
import { runWithTimeout } from '../../src/pipeline/executor.js';
import type { CallInfo } from '../../src/tools/call.js';
import type { Workspace } from '../../src/workspace/workspace.js';

/** A promise the test resolves by hand. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Lets every pending promise callback and I/O callback run (setImmediate is not faked). */
const flush = () => new Promise((resolve) => setImmediate(resolve));

function toolRunning(run: (ctx: ToolContext) => Promise<unknown>, mutates = false): ToolDefinition {
  return { name: 'probe', mutates, run: async (ctx: ToolContext) => ({ data: await run(ctx), text: '' }) } as unknown as ToolDefinition;
}

function callWith(signal?: AbortSignal): CallInfo {
  return { ws: {} as Workspace, requestId: 'r1', signal };
}

/** Why a tool's signal was aborted: the caller went away, or the code of the error (TIMEOUT). */
function whyAborted(signal: AbortSignal): string {
  const reason = signal.reason as { code?: string; message?: string } | undefined;
  return reason?.message?.includes('client went away') ? 'client gone' : String(reason?.code);
}

/** The promise's outcome so far: pending, or what it settled with. */
function track<T>(p: Promise<T>): { state: () => 'pending' | 'resolved' | 'rejected'; value: () => unknown } {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  let value: unknown;
  p.then(
    (v) => ((state = 'resolved'), (value = v)),
    (e: unknown) => ((state = 'rejected'), (value = e)),
  );
  return { state: () => state, value: () => value };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('runWithTimeout', () => {
  it('answers TIMEOUT and aborts a signal the tool took before the time ran out, while the tool still runs', async () => {
    const events: string[] = [];
    const finish = gate();
    let seen: AbortSignal | undefined;
    const tool = toolRunning(async (ctx) => {
      seen = ctx.signal;
      seen.addEventListener('abort', () => events.push('aborted'));
      await finish.opened;
      events.push('tool finished');
      return null;
    });
    const answer = track(runWithTimeout(tool, callWith(), {}, 20));
    await vi.advanceTimersByTimeAsync(19);
    expect(answer.state()).toBe('pending');
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(answer.state()).toBe('rejected');
    expect(answer.value()).toMatchObject({ code: 'TIMEOUT' });
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toMatchObject({ code: 'TIMEOUT' });
    finish.open();
    await flush();
    expect(events).toEqual(['aborted', 'tool finished']);
  });

  it('hands an already aborted signal to a tool that asks only after the time ran out', async () => {
    const later = gate();
    let late: boolean | undefined;
    const tool = toolRunning(async (ctx) => {
      await later.opened;
      late = ctx.signal.aborted;
      return null;
    });
    const answer = track(runWithTimeout(tool, callWith(), {}, 10));
    await vi.advanceTimersByTimeAsync(10);
    expect(answer.value()).toMatchObject({ code: 'TIMEOUT' });
    later.open();
    await flush();
    expect(late).toBe(true);
  });

  it('passes the caller going away on to the tool, before and after the tool asks', async () => {
    const gone = new AbortController();
    gone.abort();
    const early = await runWithTimeout(
      toolRunning(async (ctx) => ctx.signal.aborted),
      callWith(gone.signal),
      {},
      1000,
    );
    expect(early.data).toBe(true);

    const later = new AbortController();
    const asked = gate();
    const release = gate();
    const waits = toolRunning(async (ctx) => {
      const signal = ctx.signal;
      const before = signal.aborted;
      asked.open();
      await release.opened;
      return [before, signal.aborted];
    });
    const pending = runWithTimeout(waits, callWith(later.signal), {}, 1000);
    await asked.opened;
    later.abort();
    release.open();
    expect((await pending).data).toEqual([false, true]);
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

// Issue 12, finding 2: "the call answers TIMEOUT and the file changes 1.5 s later".
describe('runWithTimeout: a mutating tool past its limit either does not commit or reports what it committed', () => {
  it('answers TIMEOUT only once a mutating tool has settled, refusing to commit', async () => {
    const inFlight = gate();
    let committed = false;
    const tool = toolRunning(async (ctx) => {
      await inFlight.opened; // e.g. the temp file's fsync
      ctx.signal.throwIfAborted();
      committed = true;
      return 'committed';
    }, true);
    const answer = track(runWithTimeout(tool, callWith(), {}, 20));
    await vi.advanceTimersByTimeAsync(20);
    await flush();
    expect(answer.state()).toBe('pending');
    inFlight.open();
    await flush();
    expect(answer.state()).toBe('rejected');
    expect(answer.value()).toMatchObject({ code: 'TIMEOUT' });
    expect(committed).toBe(false);
  });

  it('answers the success of a mutating tool that committed after the limit, not TIMEOUT', async () => {
    const renaming = gate();
    const tool = toolRunning(async (ctx) => {
      ctx.signal.throwIfAborted(); // checked in time: the rename is under way when the limit passes
      await renaming.opened;
      return 'committed';
    }, true);
    const answer = track(runWithTimeout(tool, callWith(), {}, 20));
    await vi.advanceTimersByTimeAsync(20);
    await flush();
    expect(answer.state()).toBe('pending');
    renaming.open();
    await flush();
    expect(answer.state()).toBe('resolved');
    expect(answer.value()).toMatchObject({ data: 'committed' });
  });

});

describe("runWithTimeout: the caller's signal", () => {
  it("looks at the caller's signal only when the tool asks for its own or the time runs out, with the reason a listener would give", async () => {
    // A quick call never reads the caller's signal: a door may make it only when read (the MCP direct route).
    let reads = 0;
    const lazy = new AbortController();
    const lazyCall = {
      ws: {} as Workspace,
      requestId: 'r2',
      get signal() {
        reads++;
        return lazy.signal;
      },
    } as CallInfo;
    await runWithTimeout(toolRunning(async () => 'quick'), lazyCall, {}, 1000);
    expect(reads).toBe(0);

    // The caller left before the tool asked: the tool's signal is aborted for that, not for the TIMEOUT after it.
    const left = new AbortController();
    const timedOut = gate();
    const reasons: unknown[] = [];
    const late = toolRunning(async (ctx) => {
      await timedOut.opened;
      reasons.push(whyAborted(ctx.signal));
      return null;
    }, true);
    const pending = runWithTimeout(late, callWith(left.signal), {}, 20);
    left.abort();
    vi.advanceTimersByTime(20);
    timedOut.open();
    await pending.catch(() => undefined);
    expect(reasons).toEqual(['client gone']);

    // The time ran out first, the caller left after: TIMEOUT stays the reason.
    const after = new AbortController();
    const laterGate = gate();
    const seen: unknown[] = [];
    const first = toolRunning(async (ctx) => {
      await laterGate.opened;
      seen.push(whyAborted(ctx.signal));
      return null;
    }, true);
    const running = runWithTimeout(first, callWith(after.signal), {}, 20);
    vi.advanceTimersByTime(20);
    after.abort();
    laterGate.open();
    await running.catch(() => undefined);
    expect(seen).toEqual(['TIMEOUT']);
  });
});

describe('runWithTimeout: the stop without the signal', () => {
  it("ctx.aborted and ctx.throwIfAborted answer as the signal would, and make no signal (a write's lock and commit ask them)", async () => {
    const Real = globalThis.AbortController;
    let made = 0;
    const left = new AbortController();
    left.abort();
    globalThis.AbortController = class extends Real {
      constructor() {
        super();
        made++;
      }
    };
    const outcomes: unknown[] = [];
    const check = (ctx: ToolContext) => {
      try {
        ctx.throwIfAborted();
        outcomes.push(ctx.aborted ? 'aborted but no throw' : 'running');
      } catch (err) {
        outcomes.push(ctx.aborted ? (err as { code?: string; message?: string }).message?.includes('client went away') ? 'client gone' : (err as { code?: string }).code : 'thrown but not aborted');
      }
    };
    // Running in time: nothing stopped, no signal made.
    try {
    await runWithTimeout(toolRunning(async (ctx) => check(ctx)), callWith(new Real().signal), {}, 1000);
    // The caller left (no listener yet): seen at once, with the reason a listener would give.
    await runWithTimeout(toolRunning(async (ctx) => check(ctx), true), callWith(left.signal), {}, 1000).catch(() => undefined);
    // The time ran out while the tool runs: TIMEOUT.
    const timedOut = gate();
    const pending = runWithTimeout(toolRunning(async (ctx) => {
      await timedOut.opened;
      check(ctx);
    }, true), callWith(), {}, 20);
    vi.advanceTimersByTime(20);
    timedOut.open();
    await pending.catch(() => undefined);
    } finally {
      globalThis.AbortController = Real;
    }
    expect(outcomes).toEqual(['running', 'client gone', 'TIMEOUT']);
    expect(made).toBe(0);
  });
});
