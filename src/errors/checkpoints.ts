// The catalogue's errors of turns, checkpoints and rewind (docs/api.md, "Turns, checkpoints and rewind").
// src/errors.ts says how to add one.
import { ToolError } from './tool-error.js';

export const checkpointErrors = {
  /** `shown` is the value as received, shortened and made printable. */
  turnInvalid: (shown: string, max: number) =>
    new ToolError('INVALID_PARAM', `Invalid turn ${shown}: a turn id is 1 to ${max} printable ASCII characters without spaces; send the agent turn's id (e.g. its message id), or none.`, { limit_chars: max }),
  checkpointNotFound: (id: string) => new ToolError('NOT_FOUND', `No checkpoint '${id}' in this project (it may have been pruned by retention); list_checkpoints lists the kept ones.`),
  checkpointArgs: () => new ToolError('INVALID_PARAM', 'Give exactly one of checkpoint (an id from list_checkpoints) or turn (the turn id the calls named).'),
  /** `paths` lists the files changed outside the record (shortened). */
  rewindConflict: (paths: string[], more: number) =>
    new ToolError(
      'CONFLICT',
      `Rewind stopped: ${paths.map((p) => `'${p}'`).join(', ')}${more > 0 ? ` and ${more} more` : ''} changed since the last recorded change (by hand or by another service); nothing was changed. Look at them, then rewind again with force: true to overwrite them.`,
      { paths, more },
    ),
  preImageGone: (paths: string[], more: number) =>
    new ToolError(
      'CONFLICT',
      `Rewind refused: the content before the checkpoint of ${paths.map((p) => `'${p}'`).join(', ')}${more > 0 ? ` and ${more} more` : ''} is no longer kept (its backup was pruned, taken back by undo, or never kept: a bulk directory, a symbolic link); nothing was changed. Rewind to a later checkpoint.`,
      { paths, more, reason: 'pre_image_gone' },
    ),
  rewindOtherProject: (path: string) =>
    new ToolError('INVALID_PARAM', `The checkpoints to rewind changed '${path}' in another project; a rewind acts on its own project only. Restore that file from its project (restore_backup).`),
  rewindDirectoryMoveBlocked: (from: string, to: string) =>
    new ToolError('CONFLICT', `Rewind refused: the move of directory '${to}' back to '${from}' is blocked because '${from}' exists again; nothing was changed. Move or remove '${from}' first.`, { paths: [from] }),
  rewindTooLarge: (files: number, limit: number) =>
    new ToolError('INVALID_PARAM', `Rewinding to this checkpoint would change ${files} paths, more than ${limit} in one call; rewind to a later checkpoint first, then to this one.`, { files, limit_files: limit }),
  rewindKindChanged: (path: string, now: string, then: string) =>
    new ToolError('CONFLICT', `Rewind refused: '${path}' is a ${now} now but was a ${then} before the checkpoint; nothing was changed. Remove it first.`, { paths: [path] }),
};
