// The catalogue's errors of paths, files and the workspace (src/errors.ts says how to add one).
import { ToolError } from './tool-error.js';

export const fileErrors = {
  fileNotFound: (rel: string) => new ToolError('NOT_FOUND', `File not found: ${rel}`),
  isDirectory: (rel: string, why = '') => new ToolError('IS_DIRECTORY', `Path is a directory: ${rel}${why}`),
  notRegularFile: (kind: string, rel: string) => new ToolError('NOT_REGULAR_FILE', `Not a regular file (${kind}): ${rel}`),
  parentNotADirectory: (rel: string) => new ToolError('NOT_A_DIRECTORY', `A parent of '${rel}' is not a directory.`),
  parentNotFound: (relParent: string) => new ToolError('PARENT_NOT_FOUND', `Parent directory does not exist: ${relParent}`),
  permissionDenied: (rel: string) => new ToolError('PERMISSION_DENIED', `Permission denied: ${rel}`),
  outsideRoot: () => new ToolError('ACCESS_DENIED', 'Path must be within project root.'),
  /** ENOTDIR without the quotes of parentNotADirectory: `where` may be 'the requested path'. */
  parentOfNotADirectory: (where: string) => new ToolError('NOT_A_DIRECTORY', `A parent of ${where} is not a directory.`),
  pathTooLong: () => new ToolError('INVALID_PARAM', 'Path is too long.'),
  diskFull: () => new ToolError('DISK_FULL', 'The volume is full; nothing was written. Free some space and retry.'),
  storageFailed: (where: string) =>
    new ToolError('EXECUTION_ERROR', `The storage failed to read or write ${where} (EIO, an I/O error of the disk or file system); retry, and tell the operator if it persists.`),
  /** Anything unrecognized: `failure` names its kind and message without host paths (envelope.ts describeFailure). */
  internalError: (failure: string, kind: string) => new ToolError('EXECUTION_ERROR', `Internal error: ${failure}`, { kind }),
};
