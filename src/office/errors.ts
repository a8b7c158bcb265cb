// Typed errors of the office readers (zip guard, parsers, worker), each with a message a model can act on
// and the envelope code the tool layer should answer with.
import type { ErrorCode } from '../envelope.js';

export const OFFICE_ERROR_ENVELOPE = {
  /** Not a zip at all (plain text, a legacy or password-protected OLE file, empty). */
  NOT_AN_ARCHIVE: 'ENCODING_ERROR',
  /** A zip, but damaged: truncated, bad headers, bad deflate data, entries shorter than declared. */
  ARCHIVE_CORRUPT: 'ENCODING_ERROR',
  /** Over a size limit: entries, bytes per entry or in all, or the parser's memory limit. */
  ARCHIVE_TOO_LARGE: 'FILE_TOO_LARGE',
  /** Built to hurt: lying sizes, bomb ratios, nested archives, unsafe names, encryption, DOCTYPE. */
  ARCHIVE_UNSAFE: 'ENCODING_ERROR',
  /** A valid zip that the parser cannot read as this kind of document. */
  DOCUMENT_INVALID: 'ENCODING_ERROR',
  /** A format this service refuses to parse (.xls) or an unknown extension. */
  UNSUPPORTED_FORMAT: 'INVALID_PARAM',
  /** A sheet or range selector that does not fit the workbook. */
  INVALID_SELECTOR: 'INVALID_PARAM',
  /** The parser ran past its time limit and was terminated. */
  TIMEOUT: 'TIMEOUT',
} as const satisfies Record<string, ErrorCode>;

export type OfficeErrorCode = keyof typeof OFFICE_ERROR_ENVELOPE;

export class OfficeError extends Error {
  readonly code: OfficeErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: OfficeErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'OfficeError';
    this.code = code;
    this.details = details;
  }

  /** The envelope code (docs/api.md, "Error codes") for this error; the tool layer puts `code` in `details.office_code`. */
  get envelopeCode(): ErrorCode {
    return OFFICE_ERROR_ENVELOPE[this.code];
  }
}

export function isOfficeErrorCode(code: unknown): code is OfficeErrorCode {
  return typeof code === 'string' && Object.hasOwn(OFFICE_ERROR_ENVELOPE, code);
}
