// The time_now tool's engine: the server's time as ISO 8601 with the zone's offset, in any IANA time zone.
import { E, type ToolError } from '../errors.js';

export interface TimeNow {
  /** e.g. 2026-11-24T22:30:00+01:00 (Z is never used: the offset is always written out). */
  iso: string;
  /** The IANA zone the time is given in (canonical spelling, as Intl resolves it). */
  timezone: string;
  /** e.g. +01:00 */
  utc_offset: string;
  unix_ms: number;
}

// An Intl.DateTimeFormat costs more to make than the rest of a call (two made per call put time_now at 1.5 times
// read_file's CPU): each zone's is made once. A caller names any zone in any case, so the cache is bounded.
const MAX_FORMATTERS = 64;
const formatters = new Map<string, Intl.DateTimeFormat>();
let server: { tz: string | undefined; zone: string } | null = null;

/** The process's own zone (TZ, else the system's; usually UTC in a container). Node follows a change of TZ at once. */
export function serverTimeZone(): string {
  const tz = process.env.TZ;
  if (server === null || server.tz !== tz) server = { tz, zone: new Intl.DateTimeFormat('en-US').resolvedOptions().timeZone };
  return server.zone;
}

function formatterFor(timezone: string): Intl.DateTimeFormat {
  const known = formatters.get(timezone);
  if (known) return known;
  const made = makeFormatter(timezone);
  // The oldest goes first (a Map keeps insertion order).
  if (formatters.size >= MAX_FORMATTERS) formatters.delete(formatters.keys().next().value as string);
  formatters.set(timezone, made);
  return made;
}

function makeFormatter(timezone: string): Intl.DateTimeFormat {
  // Offsets such as '+01:00' are accepted by newer Intl versions but are not IANA zones: refuse them everywhere.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(timezone)) throw unknownZone(timezone);
  try {
    return new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    });
  } catch {
    throw unknownZone(timezone);
  }
}

function unknownZone(timezone: string): ToolError {
  return E.unknownTimeZone(timezone);
}

/** `now` is injectable so that tests do not depend on the clock. */
export function timeNow(timezone?: string, now: Date = new Date()): TimeNow {
  const zone = timezone ?? serverTimeZone();
  const fmt = formatterFor(zone);
  const parts = Object.fromEntries(fmt.formatToParts(now).map((p) => [p.type, p.value]));
  // longOffset is 'GMT+01:00', or plain 'GMT' at offset zero.
  const gmt = parts.timeZoneName ?? 'GMT';
  const offset = gmt === 'GMT' ? '+00:00' : gmt.slice(3);
  const iso = `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
  return { iso, timezone: displayName(zone, fmt.resolvedOptions().timeZone), utc_offset: offset, unix_ms: now.getTime() };
}

/**
 * The zone's name as asked, in its proper case. Not Intl's resolved name alone: Node 20's ICU resolves
 * current names to legacy ones (Asia/Kolkata to Asia/Calcutta), which would surprise the caller.
 */
function displayName(asked: string, resolved: string): string {
  const lower = asked.toLowerCase();
  if (resolved.toLowerCase() === lower) return resolved;
  return Intl.supportedValuesOf('timeZone').find((z) => z.toLowerCase() === lower) ?? asked;
}
