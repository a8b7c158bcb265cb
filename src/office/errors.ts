// Typed errors of the office readers (zip guard, parsers, worker), each with a message a model can act on;
// the catalogue (src/errors/documents.ts) maps their codes to the envelope's.
import { OFFICE_ERROR_ENVELOPE, type ErrorCode, type OfficeErrorCode } from '../errors.js';

export { OFFICE_ERROR_ENVELOPE, type OfficeErrorCode } from '../errors.js';

export class OfficeError extends Error {
  readonly code: OfficeErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: OfficeErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'OfficeError';
    this.code = code;
    this.details = details;
  }

  /** The envelope code (docs/api.md, "Error codes") for this error, from the catalogue's table. */
  get envelopeCode(): ErrorCode {
    return OFFICE_ERROR_ENVELOPE[this.code];
  }
}

export function isOfficeErrorCode(code: unknown): code is OfficeErrorCode {
  return typeof code === 'string' && Object.hasOwn(OFFICE_ERROR_ENVELOPE, code);
}
