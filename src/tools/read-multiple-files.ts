// Several files in one call, each with its own answer or error, as agents read a handful of files at once.
import { z } from 'zod';
import { toToolError } from '../envelope.js';
import { lexicalRel } from '../workspace/path-syntax.js';
import { CallStopped, defineTool } from './define.js';
import { readFile } from './read-file.js';

const MAX_FILES = 50;

const Input = z.strictObject({
  paths: z.array(z.string()).min(1).max(MAX_FILES).describe(`Paths relative to the workspace root (at most ${MAX_FILES}).`),
  line_numbers: z.boolean().default(false).describe('Prefix every line with its number and a tab.'),
});

const FileAnswer = z.object({
  path: z.string().nullable().describe('The path read (relative); null for a path refused as absolute or outside the workspace, which is never echoed.'),
  status: z.enum(['success', 'partial', 'error']).describe('partial: the file was cut at the output cap (read the rest with read_file).'),
  data: readFile.output.nullable().describe("read_file's data for this file; null on error."),
  text: z.string(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

const Output = z.object({
  files: z.array(FileAnswer).describe('One answer per path, in the order asked.'),
  truncated: z.boolean().describe('The total output cap (TOOLGATE_MAX_OUTPUT_BYTES) was reached: the files after it were not read.'),
});

type FileOut = z.output<typeof FileAnswer>;

export const readMultipleFiles = defineTool({
  name: 'read_multiple_files',
  description: `Read several text files (up to ${MAX_FILES}) in one call; each path gets its own answer or error, so one missing file does not fail the others. The total output is capped like read_file's; read a large file alone.`,
  pathsOf: (input) => (Array.isArray(input.paths) ? input.paths.filter((p): p is string => typeof p === 'string') : []),
  summary: 'several paths in one call, each with its own answer or error; bounded count and total output',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { paths: ['notes.txt'], line_numbers: true },
  output: Output,
  async run(ctx, input) {
    const cap = ctx.ws.limits.maxOutputBytes;
    const files: FileOut[] = [];
    let used = 0;
    let truncated = false;
    let bytesRead = 0;
    for (const path of input.paths) {
      if (used >= cap) {
        truncated = true;
        files.push({ path: lexicalRel(path), status: 'error', data: null, text: '', error: { code: 'FILE_TOO_LARGE', message: `Not read: this answer reached TOOLGATE_MAX_OUTPUT_BYTES (${cap}) first; read it with read_file.` } });
        continue;
      }
      try {
        const args = readFile.input.parse({ path, line_numbers: input.line_numbers });
        const r = await readFile.run(ctx, args);
        used += Buffer.byteLength(r.data.content);
        bytesRead += r.stats?.bytes_read ?? 0;
        files.push({ path: r.pathResolved ?? path, status: r.partial ? 'partial' : 'success', data: r.data, text: r.text, error: null });
      } catch (err) {
        // A path that asks for approval asks for the whole call; the approved repeat reads them all.
        if (err instanceof CallStopped) throw err;
        const e = toToolError(err, lexicalRel(path));
        files.push({ path: lexicalRel(path), status: 'error', data: null, text: '', error: { code: e.code, message: e.message } });
      }
    }
    const failed = files.filter((f) => f.status === 'error').length;
    return {
      data: { files, truncated },
      text: `Read ${files.length - failed} of ${files.length} files${failed > 0 ? ` (${failed} failed)` : ''}.${truncated ? ' Output cap reached; read the rest separately.' : ''}`,
      stats: { files: files.length, errors: failed, bytes_read: bytesRead },
      partial: truncated || files.some((f) => f.status === 'partial'),
      pathResolved: null,
    };
  },
});
