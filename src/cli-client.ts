// Helpers of `toolgate call`: arguments from the command line, and the envelope printed for a person.
import type { Envelope } from './envelope.js';

export class CliUsageError extends Error {}

/** `key=value` gives a string (numbers, true/false and null are read as such); `key:=json` any JSON. */
export function parseCallArgs(pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(:=|=)(.*)$/s.exec(pair);
    if (!m) throw new CliUsageError(`expected key=value or key:=json, got '${pair}'`);
    const [, key, op, value] = m as unknown as [string, string, string, string];
    if (op === ':=') {
      try {
        out[key] = JSON.parse(value);
      } catch {
        throw new CliUsageError(`${key}:= needs a JSON value, got '${value}'`);
      }
    } else if (/^-?\d+(\.\d+)?$/.test(value) || value === 'true' || value === 'false' || value === 'null') {
      out[key] = JSON.parse(value);
    } else {
      out[key] = value;
    }
  }
  return out;
}


/** The envelope for a person: status and summary first, then the data (file content as is). */
export function formatEnvelope(e: Pick<Envelope, 'status' | 'data' | 'text'> & Partial<Envelope>, httpStatus: number): string {
  const lines: string[] = [];
  if (e.status === 'error' && e.error) {
    lines.push(`error ${e.error.code} (HTTP ${httpStatus}): ${e.error.message}`);
    if (e.error.details !== undefined) lines.push(`details: ${JSON.stringify(e.error.details, null, 2)}`);
    return `${lines.join('\n')}\n`;
  }
  lines.push(`${e.status}: ${e.text}`);
  let content: string | undefined;
  if (e.data && typeof e.data === 'object' && !Array.isArray(e.data)) {
    for (const [k, v] of Object.entries(e.data as Record<string, unknown>)) {
      if (k === 'content' && typeof v === 'string') content = v;
      else if (k === 'diff_preview' && typeof v === 'string' && v !== '') lines.push(`diff_preview:\n${v.replace(/\n$/, '')}`);
      else lines.push(`${k}: ${JSON.stringify(v)}`);
    }
  } else if (e.data !== null && e.data !== undefined) {
    lines.push(JSON.stringify(e.data, null, 2));
  }
  if (e.stats) lines.push(`stats: ${Object.entries(e.stats).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (content !== undefined) lines.push('---', content.replace(/\n$/, ''));
  return `${lines.join('\n')}\n`;
}

