// The catalogue's errors of searches and user regexes (src/errors.ts says how to add one).
import { ToolError } from './tool-error.js';

export const searchErrors = {
  invalidRegex: (reason: string) => new ToolError('INVALID_REGEX', `Invalid regex pattern: ${reason}`),
};
