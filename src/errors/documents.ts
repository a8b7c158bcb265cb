// The catalogue's errors of the office documents (src/errors.ts says how to add one).
import { ToolError, type ErrorCode } from './tool-error.js';

/**
 * The office readers' finer codes (OfficeError, src/office/errors.ts) and the envelope code each answers with;
 * the finer code stays in `details.office_code`.
 */
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

/** An error of the office readers (zip guard, parsers, worker); the tool layer answers with documentUnreadable. */
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

export const documentErrors = {
  /** An OfficeError as the envelope's error: the document named before its message, its finer code in `details.office_code`. */
  documentUnreadable: (rel: string, code: OfficeErrorCode, message: string, details: Record<string, unknown> | undefined) =>
    new ToolError(OFFICE_ERROR_ENVELOPE[code], `'${rel}': ${message}`, { ...details, office_code: code }),
  documentTooLarge: (rel: string, shownSize: string, limit: number, sizeBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `Document '${rel}' is ${shownSize}, over TOOLGATE_OFFICE_MAX_BYTES (${limit}); it cannot be read whole.`, { size_bytes: sizeBytes, limit_bytes: limit }),
  zipCorrupt: (reason: string) =>
    new OfficeError('ARCHIVE_CORRUPT', `The document's zip container is damaged or truncated (${reason}); ask for an intact copy or re-save the file.`),
  oleNotZip: () =>
    new OfficeError('NOT_AN_ARCHIVE', 'The file is an OLE compound file, not an Office Open XML zip: a password-protected document or a legacy binary format (.doc/.xls). Remove the password or save it as .docx/.xlsx.'),
  notZip: () =>
    new OfficeError('NOT_AN_ARCHIVE', 'The file is not a zip archive, so it is not a .docx/.xlsx document (check the path, or read it with read_file).'),
};
