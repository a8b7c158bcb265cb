import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ToolError } from '../envelope.js';
import { fsyncDirectory } from '../workspace/atomic.js';
import { describeKind, toPosixRel } from '../workspace/sandbox.js';
import { defineTool } from './define.js';
import { PathArg, confirmSameTarget } from './common.js';

const Input = z.strictObject({
  path: PathArg,
  parents: z.boolean().default(true).describe('Create missing parent directories too (like mkdir -p).'),
});

const Output = z.object({
  created: z.boolean().describe('false when the directory already existed.'),
  created_path: z.string().nullable().describe('The first directory that was created (the others are below it).'),
});

export const createDirectory = defineTool({
  name: 'create_directory',
  description: 'Create a directory, with its missing parents unless parents is false. An existing directory is not an error.',
  risk: 'write',
  riskLevel: 'medium',
  mutates: true,
  input: Input,
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path);
    const exists = (st: import('node:fs').Stats) => {
      if (!st.isDirectory()) throw new ToolError('ALREADY_EXISTS', `Path already exists and is not a directory (${describeKind(st)}): ${p.rel}`);
      return {
        data: { created: false, created_path: null },
        text: `Directory already exists: ${p.rel}`,
        pathResolved: p.rel,
      };
    };
    if (p.stat) return exists(p.stat);
    const parent = path.dirname(p.real);
    if (!input.parents) {
      const pst = await fs.stat(parent).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') throw new ToolError('PARENT_NOT_FOUND', `Parent directory does not exist: ${path.posix.dirname(p.realRel)}`);
        throw err;
      });
      if (!pst.isDirectory()) throw new ToolError('NOT_A_DIRECTORY', `Parent of '${p.rel}' is not a directory.`);
    }
    let first: string | undefined;
    try {
      first = input.parents ? await fs.mkdir(p.real, { recursive: true }) : (await fs.mkdir(p.real), p.real);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return exists(await fs.lstat(p.real));
      if (code === 'ENOTDIR') throw new ToolError('NOT_A_DIRECTORY', `A parent of '${p.rel}' is not a directory.`);
      throw err;
    }
    if (first === undefined) return exists(await fs.lstat(p.real)); // made concurrently by someone else
    // A symlink planted while the parents were created must not have redirected them.
    await confirmSameTarget(ctx, p, input.path);
    await fsyncDirectory(path.dirname(first));
    const createdPath = toPosixRel(p.ws.root, first);
    const text = createdPath === p.realRel ? `Created directory '${p.rel}'.` : `Created directory '${p.rel}' (and parents from '${createdPath}').`;
    return {
      data: { created: true, created_path: createdPath },
      text,
      pathResolved: p.rel,
    };
  },
});
