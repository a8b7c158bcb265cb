// Typed errors of the office readers (zip guard, parsers, worker), each with a message a model can act on. The
// class and the map of its codes to the envelope's live in the catalogue (src/errors/documents.ts).
import { OFFICE_ERROR_ENVELOPE, type OfficeErrorCode } from '../errors.js';

export { OFFICE_ERROR_ENVELOPE, OfficeError, type OfficeErrorCode } from '../errors.js';

export function isOfficeErrorCode(code: unknown): code is OfficeErrorCode {
  return typeof code === 'string' && Object.hasOwn(OFFICE_ERROR_ENVELOPE, code);
}
