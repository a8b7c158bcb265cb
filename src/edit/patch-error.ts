// The errors of the apply_patch engine live in the catalogue (src/errors/edit.ts), which maps their finer codes
// to the envelope's; the engine's modules and the edit worker import them from here.
export { PatchError, type PatchErrorCode } from '../errors.js';
