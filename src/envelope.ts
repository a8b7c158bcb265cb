// The standard envelope (SPEC §1): error codes with their HTTP statuses, ToolError, and envelope builders.

export const ERROR_STATUS = {
  INVALID_PARAM: 400,
  INVALID_REGEX: 400,
  UNAUTHORIZED: 401,
  ACCESS_DENIED: 403,
  PERMISSION_DENIED: 403,
  USER_REJECTED: 403,
  NOT_FOUND: 404,
  PARENT_NOT_FOUND: 404,
  IS_DIRECTORY: 409,
  NOT_A_DIRECTORY: 409,
  NOT_REGULAR_FILE: 409,
  ALREADY_EXISTS: 409,
  CONFLICT: 409,
  FILE_TOO_LARGE: 413,
  NO_MATCH: 422,
  MULTIPLE_MATCHES: 422,
  NO_CHANGE: 422,
  ENCODING_ERROR: 422,
  BINARY_FILE: 422,
  LOCKED: 423,
  VERSION_REQUIRED: 428,
  RATE_LIMITED: 429,
  APPROVAL_REQUIRED: 202,
  EXECUTION_ERROR: 500,
  TIMEOUT: 504,
  DISK_FULL: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export type Risk = 'read' | 'write' | 'destructive';
export type RiskLevel = 'low' | 'medium' | 'high';
export type Status = 'success' | 'partial' | 'error';

/** An error with a code from the table; thrown where it is known, turned into the envelope in one place. */
export class ToolError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'ToolError';
    this.code = code;
    this.details = details;
  }
  get httpStatus(): number {
    return ERROR_STATUS[this.code];
  }
}

export interface VersionStamp {
  mtime_ms: number;
  size_bytes: number;
  sha256: string | null;
}

export interface EnvelopeContext {
  cwd: '.';
  project: string | null;
  params_input: unknown;
  path_resolved: string | null;
  risk: Risk;
  risk_level: RiskLevel;
  request_id: string;
}

export interface Envelope {
  status: Status;
  data: unknown;
  text: string;
  stats: Record<string, number>;
  context: EnvelopeContext;
  error?: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

const MAX_PARAM_STRING = 200;
/** Objects and arrays nested deeper than this are echoed as a note: the echo of JSON nested thousands deep overflowed the stack. */
const MAX_PARAM_DEPTH = 8;

/** A string cut to its first `max` characters plus `…(N chars)` when longer (params_input, names in messages). */
export function shortenText(value: string, max = MAX_PARAM_STRING): string {
  return value.length > max ? `${value.slice(0, max)}…(${value.length} chars)` : value;
}

/** The arguments as received, with every string longer than 200 characters shortened (SPEC §1). */
export function shortenParams(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return shortenText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_PARAM_DEPTH) return `…(nested deeper than ${MAX_PARAM_DEPTH} levels)`;
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => shortenParams(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = shortenParams(v, depth + 1);
  return out;
}

/**
 * Turns anything thrown into a ToolError without leaking stack traces or host paths; `rel` is the
 * caller's relative path, used in the seed 000 messages (`Permission denied: <path>`).
 */
export function toToolError(err: unknown, rel?: string | null): ToolError {
  if (err instanceof ToolError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const where = rel ?? 'the requested path';
  switch (code) {
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new ToolError('PERMISSION_DENIED', `Permission denied: ${where}`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new ToolError('DISK_FULL', 'The volume is full; nothing was written. Free some space and retry.');
    case 'ENOENT':
      return new ToolError('NOT_FOUND', `File not found: ${where}`);
    case 'EISDIR':
      return new ToolError('IS_DIRECTORY', `Path is a directory: ${where}`);
    case 'ENOTDIR':
      return new ToolError('NOT_A_DIRECTORY', `A parent of ${where} is not a directory.`);
    case 'ELOOP':
      return new ToolError('ACCESS_DENIED', 'Path must be within project root.');
    case 'ENAMETOOLONG':
      return new ToolError('INVALID_PARAM', 'Path is too long.');
    default:
      return new ToolError('EXECUTION_ERROR', 'Disk full or IO error.');
  }
}
