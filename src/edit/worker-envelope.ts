// ToolError as the edit worker's bundle has it (scripts/bundle.mjs puts this file in place of ../envelope.js
// there): the engine needs only its code, message and details, which edit-worker.ts sends back, and the
// real module brings zod, most of what a fresh worker would load for each large edit.
import type { ErrorCode } from '../envelope.js';

export class ToolError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'ToolError';
    this.code = code;
    this.details = details;
  }
}
