// Helpers of `toolgate call`: arguments from the command line, and the envelope printed for a person.
import { readFileSync } from 'node:fs';
import type { Envelope } from './envelope.js';

export class CliUsageError extends Error {}

/** Where `@path` and `@-` values come from; tests give their own. */
export interface ValueSources {
  readFile(path: string): Buffer;
  readStdin(): Buffer;
}

const fsSources: ValueSources = { readFile: (p) => readFileSync(p), readStdin: () => readFileSync(0) };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of `@path` or `@-`, exactly as stored (a BOM and the last newline are kept, so a file written
 * back with it is byte for byte the same). Binary content is refused: a string argument is text, and
 * binary goes as `encoding=base64` with base64 content.
 */
function readTextValue(label: string, source: string, sources: ValueSources): string {
  let bytes: Buffer;
  try {
    bytes = source === '-' ? sources.readStdin() : sources.readFile(source);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (code ?? (err as Error).message);
    throw new CliUsageError(`${label}: cannot read ${source === '-' ? 'standard input' : `'${source}'`}: ${why}`);
  }
  let text: string | undefined;
  try {
    text = utf8.decode(bytes);
  } catch {
    text = undefined;
  }
  if (text === undefined || text.includes('\0')) {
    throw new CliUsageError(`${label}: ${source === '-' ? 'standard input' : `'${source}'`} is not UTF-8 text; send binary content as base64: encoding=base64 content="$(base64 -w0 FILE)"`);
  }
  return text;
}

/**
 * Arguments of `toolgate call`:
 * - `key=value` a string (numbers, true/false and null are read as such);
 * - `key:=json` any JSON value;
 * - `key=@path` the UTF-8 text of a file, `key=@-` of standard input (once per call), taken as they are;
 * - `key:=@path` / `key:=@-` a JSON value read from there;
 * - `key=@@text` the string `@text` (a value that starts with @ doubles it).
 */
export function parseCallArgs(pairs: readonly string[], sources: ValueSources = fsSources): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let stdinUsedBy: string | undefined;
  const fromSource = (label: string, source: string): string => {
    if (source === '') throw new CliUsageError(`${label}: name a file after @ (@path), or @- for standard input`);
    if (source === '-') {
      // Standard input can be read once: a second reader would silently get nothing.
      if (stdinUsedBy) throw new CliUsageError(`${label}: standard input is already the value of ${stdinUsedBy}; only one argument can read @-`);
      stdinUsedBy = label;
    }
    return readTextValue(label, source, sources);
  };
  for (const pair of pairs) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(:=|=)(.*)$/s.exec(pair);
    if (!m) throw new CliUsageError(`expected key=value, key:=json, key=@file or key=@-, got '${pair}'`);
    const [, key, op, raw] = m as unknown as [string, string, string, string];
    if (op === ':=') {
      const fromFile = raw.startsWith('@');
      const json = fromFile ? fromSource(`${key}:=${raw}`, raw.slice(1)) : raw;
      try {
        out[key] = JSON.parse(json);
      } catch {
        throw new CliUsageError(fromFile ? `${key}:=${raw} needs a JSON value in ${raw === '@-' ? 'standard input' : `'${raw.slice(1)}'`}` : `${key}:= needs a JSON value, got '${raw}'`);
      }
    } else if (raw.startsWith('@@')) {
      out[key] = raw.slice(1);
    } else if (raw.startsWith('@')) {
      out[key] = fromSource(`${key}=${raw}`, raw.slice(1));
    } else if (/^-?\d+(\.\d+)?$/.test(raw) || raw === 'true' || raw === 'false' || raw === 'null') {
      out[key] = JSON.parse(raw);
    } else {
      out[key] = raw;
    }
  }
  return out;
}

/** `--json` takes the whole argument object inline, or from `@path` / `@-`. */
export function parseJsonArgs(value: string, sources: ValueSources = fsSources): Record<string, unknown> {
  const text = value.startsWith('@') ? readTextValue(`--json ${value}`, value.slice(1), sources) : value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliUsageError('--json needs a JSON object (inline, @file or @- for standard input)');
  return parsed as Record<string, unknown>;
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

