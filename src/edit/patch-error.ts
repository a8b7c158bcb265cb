// The errors of the apply_patch engine: a finer code, mapped to the envelope by the catalogue
// (src/errors/edit.ts, PATCH_ERROR_ENVELOPE), and a message a model can act on.
import { E, type PatchErrorCode, type ToolError } from '../errors.js';

export type { PatchErrorCode } from '../errors.js';

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
    return E.patchFailed(this.code, this.message, this.details);
  }
}
