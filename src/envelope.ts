// The standard envelope (docs/api.md): its schema and type, the factories for the messages many places
// share, and the builders every door uses. The codes and ToolError live in errors.ts, which has no zod.
import { z } from 'zod';
import { E, ERROR_CODES, ToolError, type ErrorCode } from './errors.js';

export { ERROR_CODES, ERROR_STATUS, ToolError, type ErrorCode } from './errors.js';

export const RISKS = ['read', 'write', 'destructive', 'execute'] as const;
export const RISK_LEVELS = ['low', 'medium', 'high'] as const;
export type Risk = (typeof RISKS)[number];
export type RiskLevel = (typeof RISK_LEVELS)[number];
export type Status = 'success' | 'partial' | 'error';

export const EnvelopeContextSchema = z.object({
  cwd: z.literal('.'),
  project: z.string().nullable(),
  params_input: z.unknown(),
  path_resolved: z.string().nullable(),
  risk: z.enum(RISKS),
  risk_level: z.enum(RISK_LEVELS),
  request_id: z.string(),
});

export const ErrorSchema = z.object({
  code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** The envelope with a given schema for `data` (a tool's output schema in the OpenAPI document). */
export function envelopeSchema<D extends z.ZodType>(data: D) {
  return z
    .object({
      status: z.enum(['success', 'partial', 'error']),
      data: data.nullable(),
      text: z.string(),
      stats: z.record(z.string(), z.number()),
      context: EnvelopeContextSchema,
      error: ErrorSchema.optional(),
    })
    .describe('The standard envelope (docs/api.md).');
}

export const EnvelopeSchema = envelopeSchema(z.unknown());

/** A 200 answer: the tool ran (`partial`: a dry run, a cut output, a diff); no `error`. */
export function successEnvelopeSchema<D extends z.ZodType>(data: D) {
  return envelopeSchema(data).extend({ status: z.enum(['success', 'partial']), error: z.never().optional() });
}

/** Every 4XX/5XX answer; strict about `status` and `error` so that a typed client can tell it from a success. */
export const ErrorEnvelopeSchema = envelopeSchema(z.null())
  .extend({ status: z.literal('error'), error: ErrorSchema })
  .describe('The standard envelope of a failed call: status "error", data null, the error code and message.');

/** What the person deciding sees of a pending request (the 202 answer's data.approval). */
export const ApprovalRequestSchema = z.object({
  id: z.string(),
  status: z.string().describe('pending until a person decides.'),
  expires_at: z.string(),
  tool: z.string(),
  path: z.string().nullable(),
  risk: z.enum(RISKS),
  risk_level: z.enum(RISK_LEVELS),
  summary: z.string(),
  diff_preview: z.string(),
  diff_truncated: z.boolean(),
});

/** The 202 answer: nothing changed; data holds what the dry run showed, applied false and the request. */
export const PendingApprovalEnvelopeSchema = envelopeSchema(z.object({ applied: z.literal(false), approval: ApprovalRequestSchema }).catchall(z.unknown()))
  .extend({ status: z.literal('partial'), error: z.never().optional() })
  .describe('Waiting for approval: status partial, data.applied false, data.approval; repeat the call with approval_id once a person decided.');

// Named components in the OpenAPI document instead of a copy per route.
z.globalRegistry.add(EnvelopeContextSchema, { id: 'EnvelopeContext' });
z.globalRegistry.add(ErrorSchema, { id: 'EnvelopeError' });
z.globalRegistry.add(ErrorEnvelopeSchema, { id: 'ErrorEnvelope' });
z.globalRegistry.add(ApprovalRequestSchema, { id: 'ApprovalRequest' });
z.globalRegistry.add(PendingApprovalEnvelopeSchema, { id: 'PendingApprovalEnvelope' });

/** A file's version (docs/api.md, "Versions"): tools answer it; expected_* and If-Match guard a change with it. */
export const VersionSchema = z
  .object({
    mtime_ms: z.number(),
    size_bytes: z.number().int(),
    sha256: z.string().nullable().describe('null only for files read by line range above the whole-read limit'),
  })
  .describe('Version of the file: pass it back as expected_* (or If-Match: "<sha256>") to guard a change.')
  .meta({ id: 'Version' });
export type VersionStamp = z.output<typeof VersionSchema>;

export type EnvelopeContext = z.output<typeof EnvelopeContextSchema>;
export type Envelope = z.output<typeof EnvelopeSchema>;

/** The context of a call that was refused before any tool was known (routing, body, door). */
export function bareContext(requestId: string): EnvelopeContext {
  return { cwd: '.', project: null, params_input: {}, path_resolved: null, risk: 'read', risk_level: 'low', request_id: requestId };
}

/** A success or partial envelope (a dry run, a cut output). */
export function resultEnvelope(
  context: EnvelopeContext,
  r: { data: unknown; text: string; stats?: Record<string, number> | undefined; partial?: boolean | undefined; version?: VersionStamp | null | undefined },
): Envelope {
  return { status: r.partial ? 'partial' : 'success', data: r.data, text: textWithVersion(r.text, r.version), stats: { time_ms: 0, ...r.stats }, context };
}

/**
 * Most clients hand a model only the text: it names the version so that the next change can pass
 * expected_sha256 without a second read (docs/api.md, "Versions").
 */
function textWithVersion(text: string, version: VersionStamp | null | undefined): string {
  const sha = version?.sha256;
  if (!sha || text.includes(sha)) return text;
  const line = `Version: sha256 ${sha} (pass it as expected_sha256 to change this file).`;
  // A text with lines of content (a view, a created directory) gets the version on a line of its own after them.
  if (!text.includes('\n')) return `${text} ${line}`;
  return `${text}${text.endsWith('\n') ? '' : '\n'}${line}`;
}

/** The error envelope of a ToolError. */
export function errorEnvelope(context: EnvelopeContext, err: ToolError): Envelope {
  return {
    status: 'error',
    data: null,
    text: err.message,
    stats: { time_ms: 0 },
    context,
    error: { code: err.code, message: err.message, ...(err.details !== undefined && { details: err.details }) },
  };
}

/**
 * An envelope as JSON.stringify writes it, byte for byte but for the `…` of shortened arguments (see
 * markEscaped), written key by key where that helps (docs/development.md, "Work done once"): `data.content`'s
 * JSON text is handed out in `parts`, so a door that sends the same string again (MCP's text block) reuses it
 * instead of escaping kilobytes twice. Objects that are not plain go to JSON.stringify whole.
 */
export function envelopeJson(envelope: Envelope, parts?: { contentJson?: string }): string {
  if (!isPlainObject(envelope)) return JSON.stringify(envelope);
  const data = envelope.data;
  const withContent = parts !== undefined && isPlainObject(data) && typeof (data as { content?: unknown }).content === 'string';
  const context = envelope.context as unknown;
  const marked = isPlainObject(context) && isShortened((context as { params_input?: unknown }).params_input);
  if (!withContent && !marked) return JSON.stringify(envelope);
  let out = '';
  for (const key of Object.keys(envelope)) {
    const value = (envelope as Record<string, unknown>)[key];
    let json: string | undefined;
    if (key === 'data' && withContent) json = objectJson(value as Record<string, unknown>, parts);
    else if (key === 'context' && marked) json = markEscaped(JSON.stringify(value));
    else json = propertyJson(key, value);
    if (json !== undefined) out += `${out === '' ? '{' : ','}${keyJson(key)}:${json}`;
  }
  return out === '' ? '{}' : `${out}}`;
}

const ABOVE_LATIN1 = /[\u0100-\uffff]/;

/**
 * The JSON of a context whose arguments were shortened, with `…` written as its escape `\u2026` (the same JSON
 * value). V8 holds a string with one character above U+00FF two bytes a character, and so every string made
 * from it: the `…` alone made a write's whole answer (its diff preview) such a string, whose UTF-8 Fastify
 * measures and the socket writes several times slower (bench/README.md, "Where 37 stands", sixth session).
 * Copied through latin1 to be held one byte a character again, unless the arguments hold other such characters.
 */
function markEscaped(json: string): string {
  const escaped = json.replaceAll('\u2026', '\\u2026');
  return ABOVE_LATIN1.test(escaped) ? escaped : Buffer.from(escaped, 'latin1').toString('latin1');
}

/** A plain object JSON.stringify walks key by key: not an array, no toJSON of its own. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/** The object's JSON, its `content` string's JSON kept in `parts`. */
function objectJson(obj: Record<string, unknown>, parts: { contentJson?: string }): string {
  let out = '';
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    let json: string | undefined;
    if (key === 'content' && typeof value === 'string') parts.contentJson = json = JSON.stringify(value);
    else json = propertyJson(key, value);
    if (json !== undefined) out += `${out === '' ? '{' : ','}${keyJson(key)}:${json}`;
  }
  return out === '' ? '{}' : `${out}}`;
}

const KEY_JSON = new Map<string, string>();
/** A key's JSON text; the envelope's few keys are quoted once. */
function keyJson(key: string): string {
  let json = KEY_JSON.get(key);
  if (json === undefined) {
    json = JSON.stringify(key);
    if (KEY_JSON.size < 256) KEY_JSON.set(key, json);
  }
  return json;
}

/** What JSON.stringify writes for a property's value, or undefined where it leaves the property out. */
export function propertyJson(key: string, value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      if (value === null) return 'null';
      // toJSON is called with the property's key, which JSON.stringify(value) alone would not pass.
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
        const wrapped = JSON.stringify({ [key]: value });
        return wrapped === '{}' ? undefined : wrapped.slice(keyJson(key).length + 2, -1);
      }
      return JSON.stringify(value);
  }
}

const MAX_PARAM_STRING = 200;
/** Objects and arrays nested deeper than this are echoed as a note: the echo of JSON nested thousands deep overflowed the stack. */
const MAX_PARAM_DEPTH = 8;

/** A string cut to its first `max` characters plus `…(N chars)` when longer (params_input, names in messages). */
export function shortenText(value: string, max = MAX_PARAM_STRING): string {
  return value.length > max ? `${value.slice(0, max)}…(${value.length} chars)` : value;
}

/** Echoes of arguments (shortenParams) that hold a `…`: envelopeJson escapes it (markEscaped). */
const SHORTENED = new WeakSet<object>();

function isShortened(paramsInput: unknown): boolean {
  return typeof paramsInput === 'object' && paramsInput !== null && SHORTENED.has(paramsInput);
}

/** The arguments as received, with every string longer than 200 characters shortened (docs/api.md, "Envelope"). */
export function shortenParams(value: unknown): unknown {
  const cut = { any: false };
  const out = shortened(value, 0, cut);
  if (cut.any && typeof out === 'object' && out !== null) SHORTENED.add(out);
  return out;
}

function shortened(value: unknown, depth: number, cut: { any: boolean }): unknown {
  if (typeof value === 'string') {
    if (value.length <= MAX_PARAM_STRING) return value;
    cut.any = true;
    return shortenText(value);
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_PARAM_DEPTH) {
    cut.any = true;
    return `…(nested deeper than ${MAX_PARAM_DEPTH} levels)`;
  }
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => shortened(v, depth + 1, cut));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = shortened(v, depth + 1, cut);
  return out;
}

/**
 * Turns anything thrown into a ToolError without leaking stack traces or host paths; `rel` is the
 * caller's relative path, used in messages such as `Permission denied: <path>`.
 */
export function toToolError(err: unknown, rel?: string | null): ToolError {
  if (err instanceof ToolError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const where = rel ?? 'the requested path';
  switch (code) {
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return E.permissionDenied(where);
    case 'ENOSPC':
    case 'EDQUOT':
      return E.diskFull();
    case 'ENOENT':
      return E.fileNotFound(where);
    case 'EISDIR':
      return E.isDirectory(where);
    case 'ENOTDIR':
      return E.parentOfNotADirectory(where);
    case 'ELOOP':
      return E.outsideRoot();
    case 'ENAMETOOLONG':
      return E.pathTooLong();
    case 'EIO':
      return E.storageFailed(where);
    default:
      return E.internalError(describeFailure(err), kindOf(err));
  }
}

/** An absolute host path in a message (`'/srv/ws/a.txt'`, `C:\\x`): the caller never sees where the service lives. */
const HOST_PATH = /(^|[\s'"(=,])(?:[A-Za-z]:)?[\\/][^\s'"),]*/g;

/** The kind of an unrecognized failure: its class and, for a system error, its code (`RangeError`, `Error EBUSY`). */
function kindOf(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return typeof code === 'string' && code !== '' ? `${err.name} ${code}` : err.name;
  }
  return err === null ? 'null' : typeof err;
}

/** `RangeError: Maximum call stack size exceeded`: the kind and the message, host paths cut, no stack. */
function describeFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  const shown = shortenText(message.replace(HOST_PATH, '$1<path>').replace(/\s+/g, ' ').trim(), 300);
  return shown === '' ? kindOf(err) : `${kindOf(err)}: ${shown}`;
}
