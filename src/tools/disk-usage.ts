import fs from 'node:fs/promises';
import { z } from 'zod';
import { E } from '../errors.js';
import { formatBytes } from '../workspace/encoding.js';
import { entryOf } from '../workspace/sandbox.js';
import { walkSizes, type WalkEntry } from '../search/walk.js';
import { defineTool } from './define.js';
import { OptionalDirArg } from './args.js';


const Input = z.strictObject({
  path: OptionalDirArg,
});

const Output = z.object({
  path: z.string(),
  bytes: z.number().int().describe('Sum of the sizes of the regular files under the path (apparent size).'),
  disk_bytes: z.number().int().describe('Space they take on disk (allocated blocks).'),
  files: z.number().int(),
  directories: z.number().int(),
  truncated: z.boolean().describe('Stopped at TOOLGATE_SEARCH_MAX_FILES entries or the time limit: the totals are lower bounds.'),
  volume: z.object({ free_bytes: z.number().int(), total_bytes: z.number().int() }).describe('The file system holding the path: space available to the service and its size.'),
});

export const diskUsage = defineTool({
  name: 'disk_usage',
  description: 'Bytes and number of files under a path (default: the whole workspace, .git and node_modules included), and the free and total space of its volume.',
  summary: 'bytes and files under a path; free/total of the volume',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { path: '.' },
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path, { allowRoot: true });
    if (!p.stat) throw E.fileNotFound(p.rel);
    let bytes = 0;
    let diskBytes = 0;
    let files = 0;
    let directories = 0;
    let truncated = false;
    if (p.stat.isDirectory()) {
      const found: WalkEntry[] = [];
      const walk = await walkSizes(p.ws, p, ctx.signal, (e) => {
        if (e.kind === 'directory') directories++;
        else if (e.kind === 'file') found.push(e);
      });
      truncated = walk.truncated;
      for (const e of found) {
        const st = e.stat;
        if (!st?.isFile()) continue;
        files++;
        bytes += st.size;
        diskBytes += st.blocks * 512;
      }
    } else if (p.stat.isFile()) {
      files = 1;
      bytes = p.stat.size;
      diskBytes = p.stat.blocks * 512;
    }
    const fsStat = await fs.statfs(entryOf(p.dir, '.'));
    const volume = { free_bytes: fsStat.bavail * fsStat.bsize, total_bytes: fsStat.blocks * fsStat.bsize };
    let text = `'${p.rel}' holds ${formatBytes(bytes)} in ${files} files${p.stat.isDirectory() ? ` and ${directories} directories` : ''}; ${formatBytes(volume.free_bytes)} free of ${formatBytes(volume.total_bytes)} on its volume.`;
    if (truncated) text += ' The walk stopped early (entry or time limit): the totals are lower bounds.';
    return {
      data: { path: p.rel, bytes, disk_bytes: diskBytes, files, directories, truncated, volume },
      text,
      stats: { files, bytes },
      partial: truncated,
      pathResolved: p.rel,
    };
  },
});
