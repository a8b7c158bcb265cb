// The catalogue's errors of the office documents (src/errors.ts says how to add one).
import { CodedError, ToolError, type ErrorCode } from './tool-error.js';

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
export class OfficeError extends CodedError<OfficeErrorCode> {
  constructor(code: OfficeErrorCode, message: string, details?: Record<string, unknown>) {
    super('OfficeError', code, message, details);
  }

  /** The envelope code (docs/api.md, "Error codes") for this error, from the catalogue's table. */
  get envelopeCode(): ErrorCode {
    return OFFICE_ERROR_ENVELOPE[this.code];
  }
}

export const documentErrors = {
  // The office runner (src/office/run.ts) and the range selector, on the main thread.
  parserFailed: (message: string) => new OfficeError('DOCUMENT_INVALID', `The document parser failed (${message}).`),
  parserTimedOut: (timeoutMs: number) =>
    new OfficeError('TIMEOUT', `Parsing the document took longer than ${timeoutMs} ms and was stopped; try a smaller document or, for a workbook, one sheet or range.`),
  parserOverMemory: (memoryMb: number) =>
    new OfficeError('ARCHIVE_TOO_LARGE', `Parsing the document needs more than the ${memoryMb} MiB memory limit; try a smaller document or, for a workbook, one sheet or range.`),
  parserStopped: (message: string) => new OfficeError('DOCUMENT_INVALID', `The document parser stopped unexpectedly (${message}).`),
  /** `what` is the kind of document asked for ('.docx document'); `message` the parser's reason. */
  documentUnreadableZip: (what: string, message: string) => new OfficeError('DOCUMENT_INVALID', `The file is a zip archive but not a readable ${what} (${message}).`),
  /** The worker's own typed error, passed on with its code and text. */
  workerOfficeError: (code: OfficeErrorCode, message: string) => new OfficeError(code, message),
  notOfficeZip: (what: string) => new OfficeError('DOCUMENT_INVALID', `The file is a zip archive but not a ${what} (no Office Open XML parts); check the file type.`),
  parserWrongKind: () => new OfficeError('DOCUMENT_INVALID', 'The document parser answered for the wrong kind of document.'),
  // Legacy .xls (BIFF in an OLE container) is refused: the npm `xlsx` package (SheetJS) is frozen at 0.18.5
  // with published advisories (prototype pollution, ReDoS) fixed only in releases that are not on the
  // registry, `@e965/xlsx` is one person's unofficial republish of them, and no other maintained reader
  // exists. The zip guard cannot vouch for an OLE file either, so the parser would see raw hostile input.
  xlsRefused: () =>
    new OfficeError(
      'UNSUPPORTED_FORMAT',
      'Legacy .xls workbooks are not read: no maintained reader without published advisories is available. Save the workbook as .xlsx (Excel or LibreOffice: Save As) and read that file.',
    ),
  xlsbRefused: () => new OfficeError('UNSUPPORTED_FORMAT', 'Binary .xlsb workbooks are not read; save the workbook as .xlsx and read that file.'),
  oleRefused: () =>
    new OfficeError(
      'UNSUPPORTED_FORMAT',
      'The file is an OLE compound file: a legacy .xls workbook or a password-protected one. Legacy .xls workbooks are not read: no maintained reader without published advisories is available. Save the workbook as .xlsx (Excel or LibreOffice: Save As) and read that file.',
    ),
  rangeNotA1: (range: string) => new OfficeError('INVALID_SELECTOR', `Range '${range}' is not an A1 range; use e.g. 'A1:C10', 'B2' or 'Sheet1!A1:C10'.`),
  rangeOutsideSheet: (range: string) => new OfficeError('INVALID_SELECTOR', `Range '${range}' is outside a worksheet (A1:XFD1048576).`),
  /** An OfficeError as the envelope's error: the document named before its message, its finer code in `details.office_code`. */
  documentUnreadable: (rel: string, code: OfficeErrorCode, message: string, details: Record<string, unknown> | undefined) =>
    new ToolError(OFFICE_ERROR_ENVELOPE[code], `'${rel}': ${message}`, { ...details, office_code: code }),
  documentTooLarge: (rel: string, shownSize: string, limit: number, sizeBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `Document '${rel}' is ${shownSize}, over TOOLGATE_OFFICE_MAX_BYTES (${limit}); it cannot be read whole.`, { size_bytes: sizeBytes, limit_bytes: limit }),
  // The zip guard's refusals (src/office/zip-guard.ts): `name` is the entry's name, kept in details.entry.
  // The counter's own texts (inflateLimitError) stay in zip-guard.ts: the office worker runs that function
  // from its source text, where no import reaches.
  entryNameEmpty: () => new OfficeError('ARCHIVE_UNSAFE', 'The archive has an entry with an empty name; the document is malformed and was not parsed.'),
  entryNameTooLong: (bytes: number, maxNameBytes: number) =>
    new OfficeError('ARCHIVE_UNSAFE', `The archive has an entry name of ${bytes} bytes (limit ${maxNameBytes}); the document was not parsed.`),
  entryNameUnsafe: (problem: string, name: string) =>
    new OfficeError('ARCHIVE_UNSAFE', `The archive has an unsafe entry name (${problem}); the document was not parsed.`, { entry: name }),
  entryLocalNameDiffers: (name: string) =>
    new OfficeError('ARCHIVE_UNSAFE', `Entry '${name}' has a different name in its local header; the document was not parsed.`, { entry: name }),
  entryLocalSizesDiffer: (name: string) =>
    new OfficeError('ARCHIVE_UNSAFE', `Entry '${name}' declares different sizes in its local header and the central directory (lying size fields); the document was not parsed.`, { entry: name }),
  archiveTooManyEntries: (entries: number, maxEntries: number) =>
    new OfficeError('ARCHIVE_TOO_LARGE', `The archive has ${entries} entries, more than the limit of ${maxEntries}; it was not parsed.`, { entries }),
  entryNameTwice: (name: string) =>
    new OfficeError('ARCHIVE_UNSAFE', `The archive has two entries named '${name}' (readers may pick different ones); the document was not parsed.`, { entry: name }),
  entryEncrypted: (name: string) =>
    new OfficeError('ARCHIVE_UNSAFE', `Entry '${name}' is encrypted; remove the password and save the document again.`, { entry: name }),
  entryCompressionUnknown: (name: string, method: number) =>
    new OfficeError('ARCHIVE_UNSAFE', `Entry '${name}' uses compression method ${method}; only stored and deflated entries are read.`, { entry: name }),
  archiveNested: (name: string) =>
    new OfficeError('ARCHIVE_UNSAFE', `The archive contains another archive ('${name}'); nested archives are refused.`, { entry: name }),
  entryDeclaredTooLarge: (name: string, declared: number, maxEntryBytes: number) =>
    new OfficeError('ARCHIVE_TOO_LARGE', `Entry '${name}' declares ${declared} bytes, more than the per-entry limit of ${maxEntryBytes}.`, { entry: name }),
  entryDeclaredRatio: (name: string, maxRatio: number) =>
    new OfficeError('ARCHIVE_UNSAFE', `Entry '${name}' declares more than ${maxRatio}x its compressed size (a zip bomb pattern); the document was not parsed.`, { entry: name }),
  archiveDeclaredTotal: (maxTotalBytes: number) =>
    new OfficeError('ARCHIVE_TOO_LARGE', `The document declares more than ${maxTotalBytes} inflated bytes in all, the limit; it was not parsed.`),
  partHasDtd: (name: string) =>
    new OfficeError('ARCHIVE_UNSAFE', `Part '${name}' declares a DTD or entities (an XML entity-expansion pattern Office never writes); the document was not parsed.`, { entry: name }),
  /** The counter's verdict on an entry as it inflates (`message` from zip-guard.ts inflateLimitError). */
  entryInflateLimit: (code: 'ARCHIVE_UNSAFE' | 'ARCHIVE_TOO_LARGE', message: string, name: string) => new OfficeError(code, message, { entry: name }),
  zipCorrupt: (reason: string) =>
    new OfficeError('ARCHIVE_CORRUPT', `The document's zip container is damaged or truncated (${reason}); ask for an intact copy or re-save the file.`),
  oleNotZip: () =>
    new OfficeError('NOT_AN_ARCHIVE', 'The file is an OLE compound file, not an Office Open XML zip: a password-protected document or a legacy binary format (.doc/.xls). Remove the password or save it as .docx/.xlsx.'),
  notZip: () =>
    new OfficeError('NOT_AN_ARCHIVE', 'The file is not a zip archive, so it is not a .docx/.xlsx document (check the path, or read it with read_file).'),
};
