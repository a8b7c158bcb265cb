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
  // The sandbox's refusals of a path (src/workspace/sandbox.ts): lexical first, then while it is walked and opened.
  pathNotString: () => new ToolError('INVALID_PARAM', 'Path must be a string.'),
  pathEmpty: () => new ToolError('INVALID_PARAM', 'Path must not be empty; use "." for the workspace root.'),
  pathHasNul: () => new ToolError('INVALID_PARAM', 'Path must not contain NUL bytes.'),
  pathHasBackslash: () => new ToolError('INVALID_PARAM', 'Path must use forward slashes (/); backslashes are not allowed.'),
  /** `shown` is the path's first 100 characters. */
  pathLooksLikeUrl: (shown: string) =>
    new ToolError('INVALID_PARAM', `Path '${shown}' looks like a URL; paths are relative to the workspace root (e.g. "src/main.py").`),
  pathOverLimit: (maxPathBytes: number) => new ToolError('INVALID_PARAM', `Path is longer than ${maxPathBytes} bytes.`),
  pathSegmentTooLong: (maxSegmentBytes: number) => new ToolError('INVALID_PARAM', `A path segment is longer than ${maxSegmentBytes} bytes.`),
  absolutePathRefused: () => new ToolError('INVALID_PARAM', 'Absolute path not allowed. Use relative path.'),
  pathIsRoot: () => new ToolError('INVALID_PARAM', 'Path must name a file inside the workspace, not the root itself.'),
  pathReserved: () => new ToolError('ACCESS_DENIED', 'Path is reserved for the service and cannot be accessed.'),
  tooManyLinks: () => new ToolError('ACCESS_DENIED', 'Too many levels of symbolic links.'),
  linkToMissingDirectory: (rel: string) => new ToolError('NOT_FOUND', `File not found: ${rel} (a symbolic link on the way names a missing directory).`),
  pathChangedWhileResolving: (rel: string) =>
    new ToolError('CONFLICT', `Path '${rel}' changed while it was being resolved (a directory or link on the way was replaced); retry.`),
  pathBecameLink: () => new ToolError('ACCESS_DENIED', 'Path changed to a symbolic link while it was being resolved; retry.'),
  pathBecameLinkWhileOpening: (rel: string) => new ToolError('ACCESS_DENIED', `Path '${rel}' changed to a symbolic link while it was being opened; retry.`),
  parentReplacedWhileCreating: (rel: string) => new ToolError('CONFLICT', `A parent of '${rel}' was replaced while it was being created; retry.`),
  fileReplacedWhileOpening: (rel: string) => new ToolError('CONFLICT', `File '${rel}' was replaced while it was being opened; read it again.`),
  /** The same text as exec's cwdNotFound, for any path that must be a directory. */
  directoryNotFound: (rel: string) => new ToolError('NOT_FOUND', `Directory not found: ${rel}`),
  notADirectory: (rel: string) => new ToolError('NOT_A_DIRECTORY', `Not a directory: ${rel}`),
  /** A special file met at open (ENXIO: a socket), whose kind the open does not tell. */
  notRegularAtOpen: (rel: string) => new ToolError('NOT_REGULAR_FILE', `Not a regular file: ${rel}`),
  diskFull: () => new ToolError('DISK_FULL', 'The volume is full; nothing was written. Free some space and retry.'),
  storageFailed: (where: string) =>
    new ToolError('EXECUTION_ERROR', `The storage failed to read or write ${where} (EIO, an I/O error of the disk or file system); retry, and tell the operator if it persists.`),
  /** Anything unrecognized: `failure` names its kind and message without host paths (envelope.ts describeFailure). */
  internalError: (failure: string, kind: string) => new ToolError('EXECUTION_ERROR', `Internal error: ${failure}`, { kind }),
  versionConflict: (rel: string, what: string, current: unknown, expected: unknown) =>
    new ToolError('CONFLICT', `File '${rel}' changed since you read it (${what}); read it again and retry with the new version.`, { current, expected }),
  encodingUnknown: (name: string) =>
    new ToolError('INVALID_PARAM', `Unknown encoding '${name}'; use utf-8, base64 or an encoding such as latin1, windows-1251, shift_jis, utf-16le.`),
  notUtf8: (rel: string) => new ToolError('ENCODING_ERROR', `File '${rel}' is not valid utf-8; pass encoding (e.g. latin1) or encoding: base64.`),
  base64Invalid: () => new ToolError('INVALID_PARAM', 'Content is not valid base64.'),
  fileLocked: (rel: string, waitMs: number) =>
    new ToolError('LOCKED', `File '${rel}' is locked by another writer for more than ${waitMs} ms; retry shortly.`),
  backupIdInvalid: (id: string) => new ToolError('INVALID_PARAM', `Invalid backup_id '${id}'; take one from list_backups.`),
  replacedWhileDeleting: (rel: string) =>
    new ToolError('CONFLICT', `File '${rel}' was replaced while it was being deleted; nothing was deleted. Read it again.`),
  backupNotFound: (id: string) => new ToolError('NOT_FOUND', `Backup not found: ${id}`),
  fileOverLimit: (rel: string, size: number, limitName: string, maxBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `File '${rel}' is ${size} bytes, over ${limitName} (${maxBytes}); change it with a smaller tool call or raise the limit.`),
  // read_file's refusals (src/tools/read-file.ts).
  readRangeReversed: () => new ToolError('INVALID_PARAM', 'end_line must not be smaller than start_line.'),
  readRangeWithBase64: () => new ToolError('INVALID_PARAM', 'Line ranges cannot be combined with encoding: base64.'),
  readRangeFormsMixed: () => new ToolError('INVALID_PARAM', 'Pass view_range, or start_line/end_line, or tail; not several.'),
  readViewRangeInvalid: (start: number, end: number) =>
    new ToolError('INVALID_PARAM', `Invalid view_range [${start}, ${end}]: start must be at least 1 and end at least start (or -1 for the end of the file).`),
  readStartLineZero: () => new ToolError('INVALID_PARAM', 'start_line is 1-based; 0 is not a line (a negative start_line counts from the end).'),
  readTailTwice: () => new ToolError('INVALID_PARAM', 'Pass tail or a negative start_line, not both.'),
  readTailWithRange: () => new ToolError('INVALID_PARAM', 'tail reads the last lines; it takes no start_line or end_line.'),
  readStartPastEnd: (start: number, rel: string, total: number) => new ToolError('INVALID_PARAM', `start_line ${start} is past the end of '${rel}' (${total} lines).`),
  readOverLimit: (rel: string, size: number, maxReadBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `File '${rel}' is ${size} bytes, over TOOLGATE_MAX_READ_BYTES (${maxReadBytes}); read a line range with start_line and end_line instead.`, {
      size_bytes: size,
      limit_bytes: maxReadBytes,
    }),
  /** `how` is 'from the end' (tail) or 'by line range'. */
  readOverLimitEncoding: (rel: string, encoding: string, how: string) =>
    new ToolError('FILE_TOO_LARGE', `File '${rel}' is over TOOLGATE_MAX_READ_BYTES and ${encoding} cannot be read ${how}.`),
  readBase64OverOutput: (rel: string, size: number, maxOutputBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `File '${rel}' is ${size} bytes; as base64 it is over TOOLGATE_MAX_OUTPUT_BYTES (${maxOutputBytes}).`),
  readBinary: (rel: string) => new ToolError('BINARY_FILE', `File '${rel}' is binary; read it with encoding: base64.`),
  versionRequired: (rel: string, current: unknown) =>
    new ToolError('VERSION_REQUIRED', `File '${rel}' already exists: read it first and pass its version, either expected_sha256 (or If-Match: "<sha256>") or expected_mtime_ms and expected_size_bytes together; a size or mtime alone, or If-Match: *, is not a version.`, { current }),
  conflictWithDiff: (message: string, details: Record<string, unknown> | undefined, diffSinceYourVersion: string, diffTruncated: boolean) =>
    new ToolError('CONFLICT', `${message} details.diff_since_your_version shows what changed since your version; apply your change to the current content.`, { ...details, diff_since_your_version: diffSinceYourVersion, diff_truncated: diffTruncated }),
  writeTooLarge: (bytesLength: number, maxWriteBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `Content is ${bytesLength} bytes, over TOOLGATE_MAX_WRITE_BYTES (${maxWriteBytes}); write the file in parts with append_to_file.`, { size_bytes: bytesLength, limit_bytes: maxWriteBytes }),
  contentEmpty: () => new ToolError('INVALID_PARAM', 'Content cannot be empty. Pass allow_empty: true to empty the file.'),
  appendTooLarge: (contentBytes: number, maxWriteBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `Content is ${contentBytes} bytes, over TOOLGATE_MAX_WRITE_BYTES (${maxWriteBytes}); append it in smaller parts.`, { size_bytes: contentBytes, limit_bytes: maxWriteBytes }),
  appendToBinary: (rel: string) => new ToolError('BINARY_FILE', `File '${rel}' is binary; text cannot be appended to it.`),
  appendTooLargeCrlf: (addedBytesLength: number, maxWriteBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `Content is ${addedBytesLength} bytes with CRLF line endings, over TOOLGATE_MAX_WRITE_BYTES (${maxWriteBytes}); append it in smaller parts.`, { size_bytes: addedBytesLength, limit_bytes: maxWriteBytes }),
  existsNotDirectory: (kind: string, rel: string) => new ToolError('ALREADY_EXISTS', `Path already exists and is not a directory (${kind}): ${rel}`),
  deleteSymlink: (rel: string, realRel: string) =>
    new ToolError('NOT_REGULAR_FILE', `'${rel}' is a symbolic link; delete_file removes regular files only (its target is '${realRel}').`),
  moveOntoDirectory: (rel: string) =>
    new ToolError('ALREADY_EXISTS', `Destination '${rel}' is an existing directory; give the full new path (e.g. '${rel}/<name>').`),
  moveDestinationExists: (rel: string) => new ToolError('ALREADY_EXISTS', `Destination already exists: ${rel}; pass overwrite: true to replace it.`),
  moveDirectoryOntoFile: (rel: string) => new ToolError('ALREADY_EXISTS', `Destination '${rel}' exists; a directory cannot overwrite a file.`),
  moveDestinationBecameLink: (rel: string) => new ToolError('ACCESS_DENIED', `Destination '${rel}' changed to a symbolic link; resolve it again.`),
  moveDestinationNotRegular: (kind: string, rel: string) => new ToolError('NOT_REGULAR_FILE', `Destination is not a regular file (${kind}): ${rel}`),
  moveSymlink: (rel: string) => new ToolError('NOT_REGULAR_FILE', `'${rel}' is a symbolic link; move_file moves files and directories only.`),
  moveOntoItself: (rel: string) => new ToolError('INVALID_PARAM', `Source and destination are the same path: ${rel}`),
  moveIntoItself: (srcRel: string, dstRel: string) => new ToolError('INVALID_PARAM', `Cannot move directory '${srcRel}' into itself ('${dstRel}').`),
  moveStateDirectory: (rel: string) => new ToolError('ACCESS_DENIED', `Directory '${rel}' holds the service's state directory and cannot be moved.`),
  moveDirectoryVersion: () => new ToolError('INVALID_PARAM', 'Versions (expected_*, If-Match) apply to files; a directory has none.'),
  moveOntoSymlink: (rel: string) => new ToolError('NOT_REGULAR_FILE', `Destination '${rel}' is a symbolic link; move_file does not replace links.`),
  moveDestinationIsLink: (rel: string) => new ToolError('ALREADY_EXISTS', `Destination already exists: ${rel}; it is a symbolic link.`),
  movedWhileMoving: (rel: string) => new ToolError('CONFLICT', `'${rel}' changed while it was being moved; retry.`),
  moveAcrossVolumes: (srcRel: string, dstRel: string) =>
    new ToolError('EXECUTION_ERROR', `'${srcRel}' and '${dstRel}' are on different volumes; directories cannot be moved across volumes.`),
  restoreOtherProject: () => new ToolError('INVALID_PARAM', 'path names a file of another project; restore it in its own project.'),
  noBackupOf: (rel: string) => new ToolError('NOT_FOUND', `No backup of '${rel}': list_backups shows what there is.`),
  restoreBothGiven: () => new ToolError('INVALID_PARAM', 'Give backup_id (from list_backups) or path (its newest backup), not both.'),
  backupNotInProject: (backupId: string) => new ToolError('NOT_FOUND', `Backup not found in this project: ${backupId}`),
  isDirectoryNow: (rel: string) => new ToolError('IS_DIRECTORY', `Path is a directory now: ${rel}`),
};
