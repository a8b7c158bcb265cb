import { z } from 'zod';
import { requireDirectory } from '../workspace/sandbox.js';
import { joinRel, walkTree, type EntryKind, type WalkEntry } from '../search/walk.js';
import { defineTool } from './define.js';
import { OptionalDirArg } from './args.js';

const MAX_DEPTH = 10;

const Input = z.strictObject({
  path: OptionalDirArg,
  depth: z.number().int().min(1).max(MAX_DEPTH).default(1).describe(`Levels to list: 1 = the directory's own entries (max ${MAX_DEPTH}).`),
  include_hidden: z.boolean().default(false).describe('Include names starting with a dot.'),
  limit: z.number().int().min(1).max(10_000).default(1000).describe('Most entries returned (breadth-first: shallow entries first).'),
});

const Entry = z.object({
  name: z.string(),
  path: z.string().describe('Relative to the workspace root.'),
  type: z.enum(['file', 'directory', 'symlink', 'other']).describe('Symlinks are listed, never followed.'),
  size: z.number().int(),
  mtime_ms: z.number(),
});

const Output = z.object({
  entries: z.array(Entry).describe('Directories first, then by path.'),
  truncated: z.boolean().describe('Stopped at limit, at TOOLGATE_SEARCH_MAX_FILES or at the time limit.'),
});

type EntryOut = z.output<typeof Entry>;

export const listDirectory = defineTool({
  name: 'list_directory',
  aliases: ['file-list'],
  description:
    'List the entries of a directory (depth 1), or a tree up to `depth` levels, with type, size and mtime. Directories come first. Hidden entries need include_hidden; .git and node_modules are listed but not entered.',
  summary: 'entries with type, size, mtime; `depth`, `include_hidden`, `limit`',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { path: '.', depth: 2 },
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path, { allowRoot: true });
    requireDirectory(p);
    const { searchMaxFiles, searchTimeoutMs } = ctx.ws.limits;
    const found: WalkEntry[] = [];
    const walk = await walkTree(p.ws, p, {
      maxDepth: input.depth,
      stats: true,
      maxEntries: Math.min(input.limit, searchMaxFiles),
      deadline: Date.now() + searchTimeoutMs,
      signal: ctx.signal,
      includeHidden: input.include_hidden,
      reportSkipped: true,
      onEntry: (e) => {
        found.push(e);
      },
    });
    const entries: EntryOut[] = [];
    for (const e of found) {
      const st = e.stat;
      if (!st) continue; // vanished meanwhile
      entries.push({ name: e.name, path: joinRel(p.rel, e.relFromStart), type: e.kind satisfies EntryKind, size: st.size, mtime_ms: Math.trunc(st.mtimeMs) });
    }
    entries.sort((a, b) => {
      const da = a.type === 'directory' ? 0 : 1;
      const db = b.type === 'directory' ? 0 : 1;
      if (da !== db) return da - db;
      return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
    });
    const dirs = entries.filter((e) => e.type === 'directory').length;
    let text = `Listed ${entries.length} entries in '${p.rel}' (${dirs} directories, ${entries.length - dirs} other).`;
    if (walk.truncated) {
      text +=
        walk.reason === 'time'
          ? ' Listing stopped at the time limit; list a subdirectory or lower depth.'
          : ` Listing truncated at ${entries.length} entries; raise limit, lower depth or list a subdirectory.`;
    }
    return {
      data: { entries, truncated: walk.truncated },
      text,
      stats: { entries: entries.length },
      partial: walk.truncated,
      pathResolved: p.rel,
    };
  },
});
