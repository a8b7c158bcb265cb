// Argument and result schemas several tools share: paths, dry runs, versions, diffs.
import { z } from 'zod';

export const PathArg = z.string().describe('Path relative to the workspace root (POSIX, e.g. "src/main.py").');
export const OptionalDirArg = z.string().default('.').describe('Directory relative to the workspace root; "." is the root.');
export const DryRunArg = z.boolean().default(false).describe('Compute everything and return the diff, but write nothing.');

export const VersionArgs = {
  expected_mtime_ms: z.number().nonnegative().optional().describe('mtime_ms of the version you read; CONFLICT when the file changed. A version only together with expected_size_bytes.'),
  expected_size_bytes: z.number().int().nonnegative().optional().describe('size_bytes of the version you read. A version only together with expected_mtime_ms.'),
  expected_sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be a sha256 hex digest').optional().describe('sha256 of the version you read.'),
};

export { VersionSchema } from '../envelope.js';

export const DiffFields = {
  diff_preview: z.string().describe('Unified diff, cut at 100 lines or 10 KiB.'),
  diff_truncated: z.boolean(),
  lines_added: z.number().int().describe('Lines added by the whole change (exact even when the preview is cut).'),
  lines_removed: z.number().int(),
};

