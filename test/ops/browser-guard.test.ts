// The browser guard keeps its reading of each distinct Host value (src/ops/browser-guard.ts): whatever it kept, a bad
// Host is refused after a good one and a good one passes after bad ones, with the same refusal each time, and a
// flood of made-up values neither grows the cache without bound nor changes an answer.
import { describe, expect, it } from 'vitest';
import { createBrowserGuard, type BrowserGuard } from '../../src/ops/browser-guard.js';

const guard = (): BrowserGuard => createBrowserGuard({ allowedHosts: ['tools.example.com', '*.internal.example'], allowedOrigins: ['https://app.example.com'], listenHost: '0.0.0.0' });

/** The guard's answer as plain values: null to pass, else the refusal's code and message. */
function answer(g: BrowserGuard, host: string | undefined, origin?: string): { code: string; message: string } | null {
  const e = g.check(host, origin);
  return e && { code: e.code, message: e.message };
}

const GOOD = ['localhost:8080', '127.0.0.1:8080', '[::1]:8080', 'tools.example.com', 'TOOLS.example.com.', 'a.internal.example:443'];
const BAD = ['evil.example', 'evil.example:8080', 'internal.example', 'tools.example.com.evil', '[::1', 'localhost:99999999', '', ' ', 'x'.repeat(300)];

describe('browser guard: Host values read once', () => {
  it('answers a kept Host as a fresh guard answers it, in any order', () => {
    const fresh = (host: string, origin?: string) => answer(guard(), host, origin);
    const g = guard();
    const order = [...GOOD, ...BAD, ...BAD.slice().reverse(), ...GOOD.slice().reverse(), ...GOOD, ...BAD];
    for (const host of order) {
      expect(answer(g, host), host).toEqual(fresh(host));
      for (const origin of ['https://app.example.com', `http://${host}`, 'https://evil.example', 'null']) expect(answer(g, host, origin), `${host} ${origin}`).toEqual(fresh(host, origin));
    }
    expect(answer(g, undefined)).toEqual(answer(guard(), undefined));
  });

  it('still refuses a bad Host after a good one, and passes a good one after bad ones', () => {
    const g = guard();
    expect(answer(g, 'localhost:8080')).toBeNull();
    expect(answer(g, 'evil.example:8080')?.code).toBe('ACCESS_DENIED');
    expect(answer(g, 'localhost:8080')).toBeNull();
    expect(answer(g, 'evil.example:8080')?.code).toBe('ACCESS_DENIED');
  });

  it('keeps its answers through a flood of made-up Host values', () => {
    const g = guard();
    expect(answer(g, 'localhost:8080')).toBeNull();
    for (let i = 0; i < 5000; i++) {
      expect(answer(g, `attacker-${i}.example`)?.code).toBe('ACCESS_DENIED');
      if (i % 97 === 0) {
        expect(answer(g, 'localhost:8080')).toBeNull();
        expect(answer(g, `x${i}.internal.example`)).toBeNull();
      }
    }
  });
});
