// time_now through the real app. No assertion on the clock's value beyond its shape and agreement with itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../../helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;

interface TimeData {
  iso: string;
  timezone: string;
  utc_offset: string;
  unix_ms: number;
}

describe('time_now', () => {
  it("answers in the server's zone without a timezone, ISO 8601 with the offset written out", async () => {
    const res = await t.call('time_now', {});
    expect(res.status).toBe(200);
    const data = res.body.data as TimeData;
    expect(data.iso).toMatch(ISO);
    expect(data.iso.endsWith(data.utc_offset)).toBe(true);
    expect(data.timezone).toBe(new Intl.DateTimeFormat('en-US').resolvedOptions().timeZone);
    // The ISO text and unix_ms name the same second.
    expect(Math.floor(Date.parse(data.iso) / 1000)).toBe(Math.floor(data.unix_ms / 1000));
    expect(res.body.context).toMatchObject({ risk: 'read', risk_level: 'low', path_resolved: null });
  });

  it.each([
    ['Asia/Kolkata', '+05:30'],
    ['UTC', '+00:00'],
    ['asia/kathmandu', '+05:45'],
  ])('answers in %s (offset %s), under the alias time-now too', async (timezone, offset) => {
    const res = await t.call('time-now', { timezone });
    const data = res.body.data as TimeData;
    expect(data.utc_offset).toBe(offset);
    expect(data.iso).toMatch(ISO);
    expect(data.iso.endsWith(offset)).toBe(true);
    expect(data.timezone.toLowerCase()).toBe(timezone.toLowerCase());
    expect(Math.floor(Date.parse(data.iso) / 1000)).toBe(Math.floor(data.unix_ms / 1000));
  });

  it.each(['Mars/Olympus_Mons', '+01:00', 'Europe/../etc', ''])('answers the unknown zone %j with INVALID_PARAM', async (timezone) => {
    const res = await t.call('time_now', { timezone });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_PARAM');
  });

  it('names the zone it does not know, and says what to give', async () => {
    const res = await t.call('time_now', { timezone: 'Mars/Olympus_Mons' });
    expect(res.body.error?.message).toMatch(/Unknown time zone 'Mars\/Olympus_Mons'.*IANA/);
  });
});
