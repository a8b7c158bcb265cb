// Errors say what happened (issue 21, finding 11): an unrecognized failure used to read "Disk full or IO
// error." whatever it was, a stack overflow included. Now it names its kind and message, without the stack or
// a host path; only the storage's own errors speak of the disk.
import { afterEach, describe, expect, it } from 'vitest';
import { toToolError } from '../../src/envelope.js';
import type { BeforeHook } from '../../src/tools/call.js';
import { makeApp, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Real unbounded recursion, so the RangeError is the engine's own. */
function recurse(n: number): number {
  return recurse(n + 1) + 1;
}

/** A before-hook that fails the way `failure` says when a call names `fail.txt`. */
function failingOn(failure: () => never): BeforeHook {
  return (_call, _tool, input) => {
    if ((input as { path?: string }).path === 'fail.txt') failure();
  };
}

describe('an unrecognized failure names its kind', () => {
  it('a stack overflow answers "Internal error: RangeError: Maximum call stack size exceeded"', async () => {
    t = await makeApp({}, { before: [failingOn(() => void recurse(0) as never)] });
    const res = await t.call('read_file', { path: 'fail.txt' });
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'EXECUTION_ERROR', message: 'Internal error: RangeError: Maximum call stack size exceeded', details: { kind: 'RangeError' } });
    expect(res.body.text).not.toMatch(/disk|IO error/i);
    expect(JSON.stringify(res.body)).not.toMatch(/\bat recurse\b|\.ts:\d+/);
  });

  it('a system error names its code and hides host paths', async () => {
    const busy = Object.assign(new Error("EBUSY: resource busy or locked, rename '/srv/secret/ws/a.txt' -> '/srv/secret/ws/b.txt'"), { code: 'EBUSY' });
    t = await makeApp({}, { before: [failingOn(() => { throw busy; })] });
    const res = await t.call('read_file', { path: 'fail.txt' });
    expect(res.body.error?.code).toBe('EXECUTION_ERROR');
    expect(res.body.error?.message).toBe("Internal error: Error EBUSY: EBUSY: resource busy or locked, rename '<path>' -> '<path>'");
    expect(JSON.stringify(res.body)).not.toContain('/srv/secret');
  });

  it('only ENOSPC, EDQUOT and EIO speak of the storage', () => {
    const sys = (code: string) => Object.assign(new Error(code), { code });
    expect(toToolError(sys('ENOSPC'))).toMatchObject({ code: 'DISK_FULL' });
    expect(toToolError(sys('EDQUOT'))).toMatchObject({ code: 'DISK_FULL' });
    expect(toToolError(sys('EIO'), 'a.txt').message).toMatch(/^The storage failed to read or write a.txt \(EIO/);
    expect(toToolError(new TypeError('x is not a function')).message).toBe('Internal error: TypeError: x is not a function');
    expect(toToolError('thrown text').message).toBe('Internal error: string: thrown text');
    expect(toToolError(undefined).message).toBe('Internal error: undefined');
  });
});
