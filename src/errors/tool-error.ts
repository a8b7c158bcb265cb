// The envelope's error codes with their HTTP statuses (docs/api.md, "Error codes") and ToolError, the one error
// class the service answers with. The catalogue's area files (src/errors/*.ts) build their factories on it;
// src/errors.ts gathers them. Nothing here imports zod: the edit worker loads this module too.
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
  HOST_NOT_FOUND: 422,
  MULTIPLE_MATCHES: 422,
  NO_CHANGE: 422,
  ENCODING_ERROR: 422,
  BINARY_FILE: 422,
  LOCKED: 423,
  VERSION_REQUIRED: 428,
  RATE_LIMITED: 429,
  APPROVAL_REQUIRED: 202,
  APPROVAL_EXPIRED: 410,
  EXECUTION_ERROR: 500,
  NETWORK_ERROR: 502,
  TIMEOUT: 504,
  DISK_FULL: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/**
 * An error with a code of its own table and details a caller can act on. ToolError (the envelope's codes) and
 * the engines' errors (OfficeError, PatchError: finer codes mapped to the envelope's) are its kinds.
 */
export class CodedError<C extends string> extends Error {
  readonly code: C;
  readonly details: Record<string, unknown> | undefined;
  constructor(name: string, code: C, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = name;
    this.code = code;
    this.details = details;
  }
}

/** An error with a code from the table; thrown where it is known, turned into the envelope in one place. */
export class ToolError extends CodedError<ErrorCode> {
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super('ToolError', code, message, details);
  }
  get httpStatus(): number {
    return ERROR_STATUS[this.code];
  }
}
