import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/envelope.js';
import { serverTimeZone, timeNow } from '../../src/web/time.js';

// A fixed instant: no test depends on the clock.
const AT = new Date(Date.UTC(2026, 10, 24, 21, 30, 5, 123));

describe('timeNow', () => {
  it.each([
    ['Europe/Berlin', '2026-11-24T22:30:05+01:00', '+01:00'],
    ['America/New_York', '2026-11-24T16:30:05-05:00', '-05:00'],
    ['Asia/Kolkata', '2026-11-25T03:00:05+05:30', '+05:30'],
    ['America/St_Johns', '2026-11-24T18:00:05-03:30', '-03:30'],
    ['Asia/Kathmandu', '2026-11-25T03:15:05+05:45', '+05:45'],
    ['UTC', '2026-11-24T21:30:05+00:00', '+00:00'],
    ['Etc/GMT+5', '2026-11-24T16:30:05-05:00', '-05:00'],
  ])('gives %s as %s', (zone, iso, offset) => {
    expect(timeNow(zone, AT)).toEqual({ iso, timezone: zone, utc_offset: offset, unix_ms: AT.getTime() });
  });

  it('follows daylight saving time', () => {
    expect(timeNow('Europe/Berlin', new Date(Date.UTC(2026, 6, 1, 12))).iso).toBe('2026-07-01T14:00:00+02:00');
  });

  it('the ISO string parses back to the same instant (to the second)', () => {
    for (const zone of ['Pacific/Chatham', 'America/Los_Angeles', 'Australia/Adelaide']) {
      expect(Date.parse(timeNow(zone, AT).iso)).toBe(Math.floor(AT.getTime() / 1000) * 1000);
    }
  });

  it('writes the zone in its proper case', () => {
    expect(timeNow('europe/berlin', AT).timezone).toBe('Europe/Berlin');
    expect(timeNow('utc', AT).timezone).toBe('UTC');
  });

  it('defaults to the server zone', () => {
    expect(timeNow(undefined, AT).timezone).toBe(serverTimeZone());
  });

  it.each(['Mars/Olympus_Mons', 'Europe/Berlinn', '+01:00', 'GMT+1', '', '../../etc/passwd'])('refuses %j as INVALID_PARAM', (zone) => {
    let err: unknown;
    try {
      timeNow(zone, AT);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).code).toBe('INVALID_PARAM');
    expect((err as ToolError).message).toMatch(/IANA name such as 'Europe\/Berlin'/);
  });
});

// Each zone's formatter is made once and kept (a bounded number of them): what comes back must not depend on what
// was asked before.
describe('timeNow, asked again', () => {
  it('answers a zone asked again as the first time, after more zones than it keeps', () => {
    const zones = Intl.supportedValuesOf('timeZone').slice(0, 150);
    const first = zones.map((z) => timeNow(z, AT));
    const again = zones.map((z) => timeNow(z, AT));
    expect(again).toEqual(first);
    expect(timeNow('Europe/Berlin', AT).iso).toBe('2026-11-24T22:30:05+01:00');
    expect(timeNow('europe/berlin', AT).timezone).toBe('Europe/Berlin');
  });

  it('the server zone follows TZ when it changes', () => {
    const before = process.env.TZ;
    try {
      process.env.TZ = 'Europe/Berlin';
      expect(serverTimeZone()).toBe('Europe/Berlin');
      expect(timeNow(undefined, AT).iso).toBe('2026-11-24T22:30:05+01:00');
      process.env.TZ = 'America/New_York';
      expect(serverTimeZone()).toBe('America/New_York');
      expect(timeNow(undefined, AT).iso).toBe('2026-11-24T16:30:05-05:00');
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});
