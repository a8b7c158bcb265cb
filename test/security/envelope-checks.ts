// Shared checks of the standard envelope (docs/api.md) for the security, durability and limits suites.
import { expect } from 'vitest';
import { ERROR_STATUS, shortenParams, type Envelope } from '../../src/envelope.js';

const SUCCESS_KEYS = ['context', 'data', 'stats', 'status', 'text'];
const ERROR_KEYS = [...SUCCESS_KEYS, 'error'].sort();
const CONTEXT_KEYS = ['cwd', 'params_input', 'path_resolved', 'project', 'request_id', 'risk', 'risk_level'];

/** The body is an envelope with exactly the top-level keys of its status, and the HTTP status matches its code. */
export function expectEnvelope(body: unknown, httpStatus: number): asserts body is Envelope {
  expect(body, 'body is a JSON object').toBeTypeOf('object');
  expect(body).not.toBeNull();
  const env = body as Envelope;
  expect(['success', 'partial', 'error']).toContain(env.status);
  expect(Object.keys(env).sort()).toEqual(env.status === 'error' ? ERROR_KEYS : SUCCESS_KEYS);
  expect(Object.keys(env.context).sort()).toEqual(CONTEXT_KEYS);
  expect(env.context.cwd).toBe('.');
  expect(typeof env.text).toBe('string');
  expect(typeof env.stats.time_ms).toBe('number');
  if (env.status === 'error') {
    expect(env.data).toBeNull();
    const code = env.error?.code as keyof typeof ERROR_STATUS;
    expect(Object.keys(ERROR_STATUS), `known error code ${code}`).toContain(code);
    expect(httpStatus, `HTTP status of ${code}`).toBe(ERROR_STATUS[code]);
    expect(typeof env.error?.message).toBe('string');
  } else {
    // success and partial answer 200; a call waiting for approval answers 202 (docs/api.md).
    expect([200, 202]).toContain(httpStatus);
  }
}

/** No stack frame or source file path anywhere in a response. */
export function expectNoStackTrace(raw: string): void {
  expect(raw).not.toMatch(/\n\s+at /);
  expect(raw).not.toMatch(/\bat [\w.<>]+ \(/);
  expect(raw).not.toMatch(/\.(ts|js):\d+/);
  expect(raw).not.toMatch(/node:internal|node_modules/);
}

/** params_input echoes exactly what was sent, with long strings shortened. */
export function expectParamsEcho(env: Envelope, sent: unknown): void {
  expect(env.context.params_input).toEqual(shortenParams(sent && typeof sent === 'object' && !Array.isArray(sent) ? sent : {}));
}

/** The serialized envelope without params_input (which legitimately echoes the caller's own arguments). */
export function withoutEcho(env: Envelope): string {
  return JSON.stringify({ ...env, context: { ...env.context, params_input: null } });
}
