// The catalogue's errors of the edit engine, apply_patch and the text editor (src/errors.ts says how to add one).
import { CodedError, ToolError, type ErrorCode } from './tool-error.js';

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

/**
 * An error of the apply_patch engine (src/edit/patch-*.ts), which also runs in the edit worker: its finer code and
 * a message a model can act on. The tool layer answers with toToolError().
 */
export class PatchError extends CodedError<PatchErrorCode> {
  declare readonly details: Record<string, unknown>;
  constructor(code: PatchErrorCode, message: string, details: Record<string, unknown> = {}) {
    super('PatchError', code, message, details);
  }

  /** The same error as the envelope's ToolError; `patch_code` keeps the finer code for clients that want it. */
  toToolError(): ToolError {
    return editErrors.patchFailed(this.code, this.message, this.details);
  }
}

export const editErrors = {
  /** A PatchError as the envelope's error: its message as it is, its finer code in `details.patch_code`. */
  patchFailed: (code: PatchErrorCode, message: string, details: Record<string, unknown>) =>
    new ToolError(PATCH_ERROR_ENVELOPE[code], message, { ...details, patch_code: code }),
  // The text editor's refusals, worded as Anthropic's reference implementation words them (models are trained on
  // those texts; src/edit/text-editor-view.ts words its answers), lists printed as Python prints them.
  editorPathMissing: (path: string) => new ToolError('NOT_FOUND', `The path ${path} does not exist. Please provide a valid path.`),
  editorIsDirectory: (path: string) =>
    new ToolError('IS_DIRECTORY', `The path ${path} is a directory and only the \`view\` command can be used on directories`),
  editorFileExists: (path: string) =>
    new ToolError('ALREADY_EXISTS', `File already exists at: ${path}. Cannot overwrite files using command \`create\`.`),
  editorParameterMissing: (parameter: 'file_text' | 'old_str' | 'new_str' | 'insert_line', command: string) =>
    new ToolError('INVALID_PARAM', `Parameter \`${parameter}\` is required for command: ${command}`),
  editorNoMatch: (path: string, oldStr: string, details: Record<string, unknown> | undefined) =>
    new ToolError('NO_MATCH', `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`, details),
  editorMultipleMatches: (oldStr: string, lines: readonly number[], details: Record<string, unknown> | undefined) =>
    new ToolError('MULTIPLE_MATCHES', `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines [${lines.join(', ')}]. Please ensure it is unique`, details),
  editorInsertLineInvalid: (insertLine: number, lineCount: number) =>
    new ToolError('INVALID_PARAM', `Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range of lines of the file: [0, ${lineCount}]`),
  editorNoHistory: (path: string) => new ToolError('NOT_FOUND', `No edit history found for ${path}.`),
  viewRangeNotPair: () => new ToolError('INVALID_PARAM', 'Invalid `view_range`. It should be a list of two integers.'),
  viewRangeStartOutside: (viewRange: readonly number[], start: number, n: number) =>
    new ToolError('INVALID_PARAM', `Invalid \`view_range\`: [${viewRange.join(', ')}]. Its first element \`${start}\` should be within the range of lines of the file: [1, ${n}]`),
  viewRangeEndPastFile: (viewRange: readonly number[], end: number, n: number) =>
    new ToolError('INVALID_PARAM', `Invalid \`view_range\`: [${viewRange.join(', ')}]. Its second element \`${end}\` should be smaller than the number of lines in the file: \`${n}\``),
  viewRangeEndBeforeStart: (viewRange: readonly number[], start: number, end: number) =>
    new ToolError('INVALID_PARAM', `Invalid \`view_range\`: [${viewRange.join(', ')}]. Its second element \`${end}\` should be larger or equal than its first \`${start}\``),
  /** A ToolError the edit worker threw, rebuilt on this side of the thread from its code, message and details. */
  fromEditWorker: (code: ErrorCode, message: string, details: Record<string, unknown> | undefined) => new ToolError(code, message, details),
  replaceInBinary: (rel: string) => new ToolError('BINARY_FILE', `File '${rel}' is binary; replace_in_file works on utf-8 text.`),
  replaceResultOverLimit: (maxResult: number) =>
    new ToolError('FILE_TOO_LARGE', `The result would be over ${maxResult} bytes (TOOLGATE_MAX_WRITE_BYTES, or the file's size if larger); replace fewer matches (count) or use a shorter replacement.`, { limit_bytes: maxResult }),
  replaceTooManyMatches: (shown: string, maxReplacements: number, rel: string) =>
    new ToolError('INVALID_PARAM', `'${shown}' matches more than ${maxReplacements} times in '${rel}'; use a more specific pattern or set count.`),
  replaceNoChange: (matches: string, shown: string, rel: string) =>
    new ToolError('NO_CHANGE', `Replacing ${matches} of '${shown}' would not change '${rel}'.`),
  replaceResultTooLarge: (bytesLength: number, maxWriteBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `The result would be ${bytesLength} bytes, over TOOLGATE_MAX_WRITE_BYTES (${maxWriteBytes}); replace fewer matches (count).`),
  looseMatchBudget: (places: number, limit: number, stage: string) =>
    new ToolError('TIMEOUT', `old_text was not found exactly, and matching it loosely (whitespace, indentation, blank lines) at the ${places > limit ? `more than ${limit}` : places} places it may start stopped after ${limit} line comparisons; nothing was changed. Copy old_text exactly from the file, or send fewer lines that include a distinctive one.`, { stage, comparisons: limit, places }),
  noEditGiven: () => new ToolError('INVALID_PARAM', 'No edit given; pass old_text and new_text, or edits: [{ old_text, new_text }].'),
  editTextsNotStrings: (label: string, editIndex: number) =>
    new ToolError('INVALID_PARAM', `${label}old_text and new_text must be strings.`, { edit_index: editIndex }),
  editOldTextEmpty: (label: string, editIndex: number) =>
    new ToolError('INVALID_PARAM', `${label}old_text is empty; quote the text to replace, or use write_file or append_to_file to add text.`, { edit_index: editIndex }),
  editNoChange: (several: boolean) =>
    new ToolError('NO_CHANGE', `The edit${several ? 's' : ''} would not change the file: new_text equals the text it replaces; re-read the file, the change may already be there.`),
  editNoMatch: (several: boolean, editIndex: number, differences: readonly string[]) =>
    new ToolError('NO_MATCH', `${several ? `Edit ${editIndex + 1}: ` : ''}old_text was not found in the file; read the file again and copy old_text exactly from it.`, {
      edit_index: editIndex,
      closest: null,
      differences,
    }),
  /** `closest` is the most similar region (src/edit/closest.ts), `differences` the kinds of difference it shows. */
  editNoMatchClosest: (several: boolean, editIndex: number, closest: { start_line: number; end_line: number; similarity: number }, differences: readonly string[]) =>
    new ToolError(
      'NO_MATCH',
      `${several ? `Edit ${editIndex + 1}: ` : ''}old_text was not found in the file. The closest text is at lines ${closest.start_line}-${closest.end_line} ` +
        `(similarity ${closest.similarity}${differences.length ? `; it differs in ${differences.join(', ')}` : ''}); copy old_text exactly from those lines (see details.closest.lines) and retry.`,
      { edit_index: editIndex, closest, differences },
    ),
  /** `listed` names the first lines found; `incomplete` when the matcher's budget ran out and `total` is a lower bound. */
  editMultipleMatches: (several: boolean, editIndex: number, total: number, listed: string, lines: number[], stage: string, incomplete: boolean) =>
    new ToolError(
      'MULTIPLE_MATCHES',
      `${several ? `Edit ${editIndex + 1}: ` : ''}Found ${incomplete ? `at least ${total}` : total} matches (lines ${listed}); add context to make old_text unique or set replace_all`,
      { edit_index: editIndex, matches: total, lines, stage, ...(incomplete ? { matches_incomplete: true } : {}) },
    ),
  editsOverlap: (i: number, other: number, a: number | undefined, b: number | undefined) =>
    new ToolError('INVALID_PARAM', `Edit ${i + 1} overlaps edit ${other + 1} (lines ${a}-${b}); merge them into one edit`, { edit_index: i, overlaps: other, lines: [a, b] }),
  editTimeout: (timeoutMs: number) =>
    new ToolError('TIMEOUT', `The edit did not finish within its ${Math.round(timeoutMs)} ms and was stopped; nothing was changed. Edit a smaller file or a shorter old_text.`),
  editOutOfMemory: (editWorkerHeapMb: number) =>
    new ToolError('FILE_TOO_LARGE', `The edit needs more than the ${editWorkerHeapMb} MiB its worker may use; nothing was changed. Edit a smaller file.`),
  editWorkerFailed: (message: string) => new ToolError('EXECUTION_ERROR', `The edit worker failed: ${message}`),
  editEngineFailed: (message: string) => new ToolError('EXECUTION_ERROR', `The edit engine failed: ${message}`),
  editBothForms: () => new ToolError('INVALID_PARAM', 'Pass either old_text/new_text or edits[], not both.'),
  editTextsMissing: () => new ToolError('INVALID_PARAM', 'Missing required parameter: old_text and new_text (or edits[]).'),
  editBinaryContent: () => new ToolError('INVALID_PARAM', 'edit_file works on text; use write_file for binary content.'),
  insertWithOldText: () => new ToolError('INVALID_PARAM', 'insert_line inserts new_text; pass it without old_text or edits[].'),
  insertTextMissing: () => new ToolError('INVALID_PARAM', 'Missing required parameter: new_text (the lines to insert after insert_line).'),
  editBinaryFile: (rel: string) => new ToolError('BINARY_FILE', `File '${rel}' is binary; edit_file only changes text files.`),
  insertLinePastEnd: (after: number, rel: string, lines: number) =>
    new ToolError('INVALID_PARAM', `insert_line ${after} is past the end of '${rel}' (${lines} lines); 0 inserts at the top, ${lines} at the end.`),
  patchFormsAmbiguous: () =>
    new ToolError('INVALID_PARAM', 'Pass exactly one of: patch (a V4A patch), operation ({type, path, diff}), or type + path + diff.'),
  patchOperationIncomplete: () =>
    new ToolError('INVALID_PARAM', 'A flat Responses API operation needs type (create_file, update_file or delete_file), path, and diff (except for delete_file).'),
  patchTooManyFiles: (files: number, limit: number) =>
    new ToolError('INVALID_PARAM', `The patch names ${files} files, over TOOLGATE_PATCH_MAX_FILES (${limit}); nothing was read or changed. Send the change as several patches of at most ${limit} files each.`, { files, limit_files: limit }),
  patchDeleteSymlink: (rel: string) => new ToolError('NOT_REGULAR_FILE', `'${rel}' is a symbolic link; apply_patch deletes regular files only.`),
  patchFileTwice: (other: string, path: string) =>
    new ToolError('INVALID_PARAM', `The patch names one file twice ('${other}' and '${path}' are the same file); put all changes to a file in one section.`),
  patchShaNotList: (changedLength: number) =>
    new ToolError('INVALID_PARAM', `expected_sha256 as one string guards a patch that changes one existing file; this one changes ${changedLength}. Pass a list: [{"path": "<path>", "sha256": "<sha256>"}, ...].`),
  patchShaUnknownPath: (path: string) =>
    new ToolError('INVALID_PARAM', `expected_sha256 names '${path}', which the patch does not update, move or delete.`),
  patchShaTwice: (path: string) => new ToolError('INVALID_PARAM', `expected_sha256 names '${path}' twice.`),
  patchVersionRequired: (names: string[], current: unknown) =>
    new ToolError('VERSION_REQUIRED', `This server changes existing files only at a version you read (TOOLGATE_REQUIRE_VERSION=always); no version for ${names.map((n) => `'${n}'`).join(', ')}. Read each file first and pass expected_sha256 with data.version.sha256: "<sha256>" when the patch changes one existing file, [{"path": "${names[0]}", "sha256": "<sha256>"}, ...] for several (or If-Match with one tag per file).`, { current, paths: names }),
  patchBinaryFile: (rel: string) => new ToolError('BINARY_FILE', `File '${rel}' is binary; apply_patch updates text files only.`),
  editorShaNotTaken: (command: string) =>
    new ToolError('INVALID_PARAM', `expected_sha256 guards a change of an existing file (str_replace, insert, undo_edit); ${command} takes none.`),
  editorBinaryFile: (rel: string) => new ToolError('BINARY_FILE', `File '${rel}' is binary; the text editor changes text files only.`),
  editorVersionRequired: (rel: string, details: Record<string, unknown> | undefined) =>
    new ToolError('VERSION_REQUIRED', `This server changes existing files only at a version you read (TOOLGATE_REQUIRE_VERSION=always): view '${rel}' first and pass expected_sha256 with data.version.sha256 of that view (or If-Match: "<sha256>").`, details),
  editorViewRangeOnDirectory: () => new ToolError('INVALID_PARAM', 'The `view_range` parameter is not allowed when `path` points to a directory.'),
  editorViewBinary: (rel: string) => new ToolError('BINARY_FILE', `File '${rel}' is binary; read it with read_file and encoding: base64.`),
  editorViewTooLarge: (rel: string, maxOutputBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `The view of '${rel}' is over TOOLGATE_MAX_OUTPUT_BYTES (${maxOutputBytes}); view a smaller view_range.`),
  editorCreateTooLarge: (bytesLength: number, maxWriteBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `file_text is ${bytesLength} bytes, over TOOLGATE_MAX_WRITE_BYTES (${maxWriteBytes}); create the file in parts (create, then insert).`, { size_bytes: bytesLength, limit_bytes: maxWriteBytes }),
  editorUndoWouldUndoOthers: (rel: string, changedSinceBy: string, yourChangeBackupId: string) =>
    new ToolError('CONFLICT', `${rel} was changed by ${changedSinceBy} after your last change; undoing yours would undo theirs too. Read the file and change it back yourself, or restore_backup a version from list_backups.`, { your_change_backup_id: yourChangeBackupId }),
  editorUndoDeleteRecreated: (rel: string, yourChangeBackupId: string) =>
    new ToolError('CONFLICT', `${rel} was created again after your last change deleted it; undoing the delete would overwrite that file. Read it; restore_backup with backup_id ${yourChangeBackupId} puts the deleted content back over it.`, { your_change_backup_id: yourChangeBackupId }),
  // A malformed V4A patch (src/edit/patch-v4a.ts): `line` is the patch line that is wrong, named before the text
  // and kept in details; `got` is the offending line as the parser quotes it.
  patchHunkHeaderMissing: (line: number, path: string, got: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: expected '@@' to start the next hunk of ${path}, got ${got}. Each hunk starts with '@@' or '@@ <a line above it, e.g. the enclosing function>'.`, { line }),
  patchHunkEmptyBeforeEof: (line: number, path: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: the hunk of ${path} has no lines before '*** End of File'.`, { line }),
  patchHunkLineUntagged: (line: number, got: string, path: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: unexpected line ${got} in a hunk of ${path}. Every hunk line starts with ' ' (unchanged), '-' (removed) or '+' (added); an unchanged line keeps its own indentation after that first space.`, { line }),
  patchHunkEmpty: (line: number, path: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: a hunk of ${path} has no lines after its '@@' header.`, { line }),
  patchMarkerWithoutPath: (line: number, marker: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: '${marker} ' must be followed by a path.`, { line }),
  patchEmpty: () => new PatchError('INVALID_PATCH', "The patch is empty. It must start with '*** Begin Patch' and end with '*** End Patch'.", {}),
  patchHeredocUnclosed: (opening: string, delimiter: string | undefined) =>
    new PatchError('INVALID_PATCH', `The patch opens a heredoc (${opening}) but its last line is not '${delimiter}'.`, {}),
  patchHeredocEmpty: () => new PatchError('INVALID_PATCH', 'The heredoc holds no patch.', {}),
  patchFirstLineNotBegin: (line: number, got: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: The first line of the patch must be '*** Begin Patch', got ${got}.`, { line }),
  patchLastLineNotEnd: (line: number, got: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: The last line of the patch must be '*** End Patch', got ${got}.`, { line }),
  patchAddLineUntagged: (line: number, path: string, got: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: every line of '*** Add File: ${path}' must start with '+' (an empty line too: '+'), got ${got}.`, { line }),
  patchUpdateWithoutHunks: (line: number, path: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: '*** Update File: ${path}' has no hunks; add '@@' followed by the lines to change.`, { line }),
  patchTextAfterEnd: (line: number) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: '*** End Patch' must be the last line; found more after it.`, { line }),
  /** `endedEarly` when the line looks like a hunk or added line, so the section above it ended too soon. */
  patchNotFileHeader: (line: number, got: string, endedEarly: boolean) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: ${got} is not a file header. Valid headers: '*** Add File: <path>', '*** Delete File: <path>', '*** Update File: <path>'.${endedEarly ? " If it belongs to the section above, that section ended early: inside *** Add File every line starts with '+' (an empty line is '+')." : ''}`, { line }),
  patchNamesNoFile: () => new PatchError('INVALID_PATCH', 'The patch names no file: add an *** Add File, *** Update File or *** Delete File section.', {}),
  patchDiffHoldsOtherPatch: (type: string, path: string) =>
    new PatchError('INVALID_PATCH', `the ${type} diff for ${path} holds a whole patch for other files or operations; send only this file's ${type === 'create_file' ? "'+' lines" : 'hunks'}.`, {}),
  patchCreateDiffLineUntagged: (line: number, path: string, got: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: every line of the create_file diff for ${path} must start with '+', got ${got}.`, { line }),
  patchUpdateDiffNotHunk: (line: number, got: string, path: string) =>
    new PatchError('INVALID_PATCH', `Invalid patch at line ${line}: unexpected ${got} in the update_file diff for ${path}; the diff holds only '@@' hunks.`, { line }),
  patchUpdateDiffWithoutHunks: (path: string) => new PatchError('INVALID_PATCH', `the update_file diff for ${path} has no hunks.`, {}),
  patchFileInTwoOperations: (path: string, before: number, op: number) =>
    new PatchError('INVALID_PATCH', `The patch names ${path} in more than one file operation (operations ${before + 1} and ${op + 1}); put all changes to a file in one '*** Update File' section.`, { path, operations: [before + 1, op + 1] }),
  // A hunk that does not fit (src/edit/patch-apply.ts); `label` names it: "Hunk 2 (patch line 14) of src/a.ts".
  hunkSearchBudget: (label: string, budget: number, path: string, hunk: number) =>
    new PatchError(
      'TIMEOUT',
      `${label}: looking for its lines stopped after ${budget} line comparisons (they fit, loosely, at too many places to tell); nothing was changed. Add context lines or an '@@' line that is unique in the file.`,
      { path, hunk, comparisons: budget },
    ),
  /** `where` is ' after line N' or empty. */
  hunkHeaderNotFound: (label: string, header: string, where: string, path: string, hunk: number, searchedFromLine: number) =>
    new PatchError('NO_MATCH', `${label}: the line '@@ ${header}' names was not found${where}; nothing was changed. The text after '@@ ' must be a whole line of the file as it is now (e.g. the enclosing function's signature).`, { path, hunk, context: header, searched_from_line: searchedFromLine }),
  /** `searched` says where it looked, `shown` the old lines as numbered text, `hint` (empty or starting with a newline) where they may be. */
  hunkNotFound: (label: string, searched: string, shown: string, hint: string, path: string, hunk: number, oldLines: string[]) =>
    new PatchError(
      'NO_MATCH',
      `${label}: the lines to change were not found ${searched} (compared exactly, then ignoring whitespace and typographic punctuation); nothing was changed. Lines looked for:\n${shown}${hint}\nCopy these lines from the file as it is now (read it again if it may have changed).`,
      { path, hunk, old_lines: oldLines },
    ),
  /** `count` is 'N' or 'at least N', `listed` the first lines, `passWords` how they matched. */
  hunkAmbiguous: (label: string, count: string, listed: string, passWords: string, path: string, hunk: number, candidateLines: number[], pass: string, incomplete: boolean) =>
    new PatchError(
      'MULTIPLE_MATCHES',
      `${label}: the lines to change fit ${count} places (starting at lines ${listed}, matched ${passWords}); nothing was changed. Add an '@@ <line>' header naming the enclosing function or class, or more unchanged lines around the change, so that the hunk fits one place.`,
      { path, hunk, candidate_lines: candidateLines, pass, ...(incomplete ? { candidates_incomplete: true } : {}) },
    ),
  patchAddExisting: (path: string) =>
    new PatchError('ALREADY_EXISTS', `*** Add File: ${path} — the file already exists; nothing was changed. Use '*** Update File: ${path}' to change it.`, { path }),
  patchFileMissing: (verb: string, path: string, type: string) =>
    new PatchError('NOT_FOUND', `*** ${verb} File: ${path} — no such file; nothing was changed.${type === 'update' ? ` Use '*** Add File: ${path}' to create it.` : ''}`, { path }),
  patchMoveOntoExisting: (moveTo: string, path: string) =>
    new PatchError('ALREADY_EXISTS', `*** Move to: ${moveTo} — a file already exists there; nothing was changed. Choose another destination, or remove that file in an earlier call.`, { path, move_to: moveTo }),
  patchFileAboveFile: (header: string, path: string, belowHeader: string, belowPath: string) =>
    new PatchError('INVALID_PATCH', `The patch is contradictory: '*** ${header}: ${path}' leaves ${path} a file, while '*** ${belowHeader}: ${belowPath}' puts a file under it, so ${path} would have to be a file and a directory at once; nothing was changed. Give one of the two another path.`, { path, under: belowPath }),
};
