// The errors of the apply_patch engine: a code the caller maps to the envelope, and a message a model can act on.
import { ToolError, type ErrorCode } from '../errors.js';

export type PatchErrorCode = 'INVALID_PATCH' | 'NO_MATCH' | 'MULTIPLE_MATCHES' | 'NOT_FOUND' | 'ALREADY_EXISTS' | 'TIMEOUT';

/** Envelope codes: the envelope has no INVALID_PATCH, and a malformed patch is a bad parameter. */
const TOOL_CODE: Record<PatchErrorCode, ErrorCode> = {
  INVALID_PATCH: 'INVALID_PARAM',
  NO_MATCH: 'NO_MATCH',
  MULTIPLE_MATCHES: 'MULTIPLE_MATCHES',
  NOT_FOUND: 'NOT_FOUND',
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  /** The hunk search passed its work budget (patch-apply.ts SEEK_BUDGET). */
  TIMEOUT: 'TIMEOUT',
};

export class PatchError extends Error {
  readonly code: PatchErrorCode;
  readonly details: Record<string, unknown>;
  constructor(code: PatchErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'PatchError';
    this.code = code;
    this.details = details;
  }

  /** The same error as the envelope's ToolError; `patch_code` keeps the finer code for clients that want it. */
  toToolError(): ToolError {
    return new ToolError(TOOL_CODE[this.code], this.message, { ...this.details, patch_code: this.code });
  }
}
