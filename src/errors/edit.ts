// The catalogue's errors of the edit engine, apply_patch and the text editor (src/errors.ts says how to add one).
import { ToolError, type ErrorCode } from './tool-error.js';

/**
 * The apply_patch engine's finer codes (src/edit/patch-error.ts) and the envelope code each answers with;
 * the finer code stays in `details.patch_code`. The envelope has no INVALID_PATCH: a malformed patch is a bad parameter.
 */
export const PATCH_ERROR_ENVELOPE = {
  INVALID_PATCH: 'INVALID_PARAM',
  NO_MATCH: 'NO_MATCH',
  MULTIPLE_MATCHES: 'MULTIPLE_MATCHES',
  NOT_FOUND: 'NOT_FOUND',
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  /** The hunk search passed its work budget (patch-apply.ts SEEK_BUDGET). */
  TIMEOUT: 'TIMEOUT',
} as const satisfies Record<string, ErrorCode>;
export type PatchErrorCode = keyof typeof PATCH_ERROR_ENVELOPE;

export const editErrors = {
  /** A PatchError as the envelope's error: its message as it is, its finer code in `details.patch_code`. */
  patchFailed: (code: PatchErrorCode, message: string, details: Record<string, unknown>) =>
    new ToolError(PATCH_ERROR_ENVELOPE[code], message, { ...details, patch_code: code }),
  /** A ToolError the edit worker threw, rebuilt on this side of the thread from its code, message and details. */
  fromEditWorker: (code: ErrorCode, message: string, details: Record<string, unknown> | undefined) => new ToolError(code, message, details),
};
