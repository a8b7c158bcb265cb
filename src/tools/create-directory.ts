import { lstatSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { E } from '../errors.js';
import { fsyncDirectory } from '../workspace/atomic.js';
import { createMissingParents, describeKind, entryOf } from '../workspace/sandbox.js';
import { defineTool } from './define.js';
import { PathArg } from './args.js';
import { announce } from './plan.js';

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
  summary: 'mkdir (`parents`)',
  risk: 'write',
  // An existing directory is the goal reached, not a second effect.
  idempotent: true,
  riskLevel: 'medium',
  input: Input,
  example: { path: 'docs/drafts' },
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path);
    const exists = (st: import('node:fs').Stats) => {
      if (!st.isDirectory()) throw E.existsNotDirectory(describeKind(st), p.rel);
      return {
        data: { created: false, created_path: null },
        text: `Directory already exists: ${p.rel}`,
        pathResolved: p.rel,
      };
    };
    if (p.stat) return exists(p.stat);
    if (p.missing.length > 0 && !input.parents) throw E.parentNotFound(path.posix.dirname(p.realRel));
    await announce(ctx, () => [{ op: 'create', kind: 'directory', path: p.rel, sha256Before: null, sha256After: null }]);
    // Each directory is made through its verified parent's handle (createMissingParents checks every one it makes).
    const firstParent = createMissingParents(p, ctx.handles);
    try {
      mkdirSync(p.at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return exists(lstatSync(p.at)); // made concurrently by someone else
      throw err;
    }
    await fsyncDirectory(entryOf(p.dir, '.'));
    const createdPath = firstParent ? firstParent.slice(0, -1) : p.realRel;
    const text = createdPath === p.realRel ? `Created directory '${p.rel}'.` : `Created directory '${p.rel}' (and parents from '${createdPath}').`;
    return {
      data: { created: true, created_path: createdPath },
      text,
      pathResolved: p.rel,
    };
  },
});
