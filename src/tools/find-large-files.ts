import { z } from 'zod';
import { requireDirectory } from '../workspace/sandbox.js';
import { formatBytes } from '../workspace/encoding.js';
import { joinRel, walkSizes, type WalkEntry } from '../search/walk.js';
import { defineTool } from './define.js';
import { OptionalDirArg } from './args.js';


const Input = z.strictObject({
  path: OptionalDirArg,
  min_size_bytes: z.number().int().min(0).default(10 * 1024 * 1024).describe('Smallest size reported (default 10 MiB).'),
  limit: z.number().int().min(1).max(1000).default(20).describe('Most files returned, largest first.'),
});

const LargeFile = z.object({
  path: z.string(),
  size: z.number().int(),
  mtime_ms: z.number(),
});

const Output = z.object({
  files: z.array(LargeFile).describe('Largest first.'),
  files_scanned: z.number().int(),
  truncated: z.boolean().describe('The walk stopped at TOOLGATE_SEARCH_MAX_FILES entries or the time limit: larger files may exist.'),
});

export const findLargeFiles = defineTool({
  name: 'find_large_files',
  description: 'Find the largest files under a directory (default: the workspace), at least min_size_bytes, largest first. Also looks inside .git and node_modules.',
  summary: 'largest files under a path',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { path: '.', min_size_bytes: 1, limit: 10 },
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path, { allowRoot: true });
    requireDirectory(p);
    const files: WalkEntry[] = [];
    const walk = await walkSizes(p.ws, p, ctx.signal, (e) => {
      if (e.kind === 'file') files.push(e);
    });
    let truncated = walk.truncated;
    const found: z.output<typeof LargeFile>[] = [];
    let scanned = 0;
    if (ctx.signal.aborted) truncated = true;
    for (const e of files) {
      const st = e.stat;
      if (!st?.isFile()) continue;
      scanned++;
      if (st.size >= input.min_size_bytes) found.push({ path: joinRel(p.rel, e.relFromStart), size: st.size, mtime_ms: Math.trunc(st.mtimeMs) });
    }
    found.sort((a, b) => b.size - a.size || (a.path < b.path ? -1 : 1));
    const top = found.slice(0, input.limit);
    let text =
      top.length === 0
        ? `No files of at least ${formatBytes(input.min_size_bytes)} under '${p.rel}' (${scanned} files scanned).`
        : `Found ${found.length} files of at least ${formatBytes(input.min_size_bytes)} under '${p.rel}'${found.length > top.length ? `; showing the ${top.length} largest` : ''}. Largest: '${top[0]?.path}' (${formatBytes(top[0]?.size ?? 0)}).`;
    if (truncated) text += ' The walk stopped early (entry or time limit); narrow path to see everything.';
    return {
      data: { files: top, files_scanned: scanned, truncated },
      text,
      stats: { files_scanned: scanned, matches: found.length },
      partial: truncated,
      pathResolved: p.rel,
    };
  },
});
