import { z } from 'zod';
import { timeNow as clockNow } from '../web/time.js';
import { defineTool } from './define.js';

const Input = z.strictObject({
  timezone: z.string().min(1).max(100).optional().describe("IANA time zone, e.g. 'Europe/Berlin' or 'UTC' (default: the server's zone)."),
});

const Output = z.object({
  iso: z.string().describe('ISO 8601 with the offset written out, e.g. 2026-11-24T22:30:00+01:00.'),
  timezone: z.string(),
  utc_offset: z.string().describe('e.g. +01:00'),
  unix_ms: z.number().int(),
});

export const timeNow = defineTool({
  name: 'time_now',
  aliases: ['time-now'],
  description: "The server's current time as ISO 8601 with the zone's offset, in the server's zone or an IANA time zone you name.",
  summary: 'server time as ISO 8601 with offset; an IANA `timezone` may be asked',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { timezone: 'UTC' },
  output: Output,
  async run(_ctx, input) {
    const now = clockNow(input.timezone);
    return { data: now, text: `It is ${now.iso} (${now.timezone}).` };
  },
});
