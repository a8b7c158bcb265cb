// The error catalogue (docs/api.md, "Error codes"): every envelope code with its HTTP status (ERROR_STATUS), and
// every error the service answers with as one factory of `E`, its code and message template declared together
// (in the manner of Fastify's lib/errors.js). Sites throw `E.fileNotFound(rel)`, never a message of their own.
//
// Adding an error: in the area file under src/errors/ (calls, files, edit, search, documents, web, exec, access, checkpoints; a new
// area is a new file spread into `E` and listed in CATALOGUE_AREAS below), add one entry
//     name: (arg: string, n: number) => new ToolError('CODE', `Text with ${arg} and ${n}.`, { detail: n }),
// - CODE is a key of ERROR_STATUS (src/errors/tool-error.ts); a new code also gets its row in docs/api.md's
//   table, which test/errors/catalogue.test.ts compares with ERROR_STATUS both ways.
// - Reuse an entry whose code and text are the same; the name says what went wrong, not where.
// - The factory is the one `new` and nothing else: it runs where a request fails, so no lookups by name and
//   no helpers from other modules (pass what a helper computes, such as a shortened name, as an argument).
// - Errors that a caller tells apart by class are declared beside their factories and are ToolErrors
//   (ApprovalError, RegexTimeout); the engines' own errors keep a finer code that the area file maps to the
//   envelope (PatchError -> PATCH_ERROR_ENVELOPE, `details.patch_code`; OfficeError -> OFFICE_ERROR_ENVELOPE,
//   `details.office_code`), and their factories return those classes.
// Nothing here imports zod or other heavy modules: the edit worker (src/edit/edit-worker.ts) loads this file.
import { accessErrors } from './errors/access.js';
import { callErrors } from './errors/calls.js';
import { checkpointErrors } from './errors/checkpoints.js';
import { documentErrors } from './errors/documents.js';
import { editErrors } from './errors/edit.js';
import { execErrors } from './errors/exec.js';
import { fileErrors } from './errors/files.js';
import { searchErrors } from './errors/search.js';
import { webErrors } from './errors/web.js';

export { ERROR_CODES, ERROR_STATUS, ToolError, type ErrorCode } from './errors/tool-error.js';
export { ApprovalError, type ApprovalErrorCode } from './errors/access.js';
export { OFFICE_ERROR_ENVELOPE, OfficeError, type OfficeErrorCode } from './errors/documents.js';
export { RegexTimeout } from './errors/search.js';
export { PATCH_ERROR_ENVELOPE, PatchError, type PatchErrorCode } from './errors/edit.js';

/** The catalogue: one factory per error, each returning the ToolError it declares. */
export const E = {
  ...callErrors,
  ...fileErrors,
  ...editErrors,
  ...searchErrors,
  ...documentErrors,
  ...webErrors,
  ...execErrors,
  ...accessErrors,
  ...checkpointErrors,
};

/** The catalogue's areas by name, for the test that no two declare the same factory. */
export const CATALOGUE_AREAS = { callErrors, fileErrors, editErrors, searchErrors, documentErrors, webErrors, execErrors, accessErrors, checkpointErrors };
