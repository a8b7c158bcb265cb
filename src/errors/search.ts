// The catalogue's errors of searches and user regexes (src/errors.ts says how to add one).
import { ToolError } from './tool-error.js';

/** A user regex past its time limit (src/search/regex.ts); tools turn it into TIMEOUT with their own wording. */
export class RegexTimeout extends ToolError {
  constructor(
    readonly limitMs: number,
    message: string,
  ) {
    super('TIMEOUT', message);
  }
}

export const searchErrors = {
  regexTimeout: (limitMs: number) =>
    new RegexTimeout(
      limitMs,
      `Regex pattern ran longer than ${limitMs} ms (TOOLGATE_REGEX_TIMEOUT_MS) and was stopped; simplify it (avoid nested quantifiers such as (a+)+) or use an exact match.`,
    ),
  invalidRegex: (reason: string) => new ToolError('INVALID_REGEX', `Invalid regex pattern: ${reason}`),
  regexOutOfMemory: (regexWorkerHeapMb: number) =>
    new ToolError('FILE_TOO_LARGE', `The regex's matches need more than the ${regexWorkerHeapMb} MiB its worker may use; replace in smaller steps or with a narrower pattern.`),
  regexFailed: (reason: string) => new ToolError('EXECUTION_ERROR', `Regex evaluation failed: ${reason}`),
  directoryUnreadable: (rel: string) => new ToolError('PERMISSION_DENIED', `Permission denied: cannot read directory '${rel}'.`),
  directoryReplaced: (rel: string) => new ToolError('CONFLICT', `Directory '${rel}' was replaced while it was being opened; retry.`),
  searchOutOfMemory: (searchWorkerHeapMb: number) =>
    new ToolError('FILE_TOO_LARGE', `Searching a batch of files needs more than the ${searchWorkerHeapMb} MiB a search worker may use; narrow the search (path, glob).`),
  searchWorkerFailed: (reason: string) => new ToolError('EXECUTION_ERROR', `Search worker failed: ${reason}`),
  globInvalid: (glob: string, reason: string) => new ToolError('INVALID_PARAM', `Invalid glob '${glob}': ${reason}`),
};
