import { z } from 'zod';
import { E } from '../../errors.js';
import { createDirectory } from '../create-directory.js';
import { defineTool } from '../define.js';
import { commandLine, MKDIR_FLAGS, parseArgs, pathOperands, ShellInput, ShellOutputFields, type Program } from './argv.js';
import { runAs } from './run-delegated.js';

const PROGRAMS: readonly Program[] = ['mkdir'];

export const shellWrite = defineTool({
  name: 'shell_write',
  aliases: ['shell-write'],
  description:
    'Run `mkdir [-p] <path>` inside the project, exactly as create_directory (sandboxed, audited). No shell runs: shell syntax (pipes, redirections, ;, &&, $, backticks, globs) is refused.',
  summary: '`mkdir [-p] <path>`, as `create_directory`',
  risk: 'write',
  riskLevel: 'medium',
  input: ShellInput,
  example: { command: 'mkdir -p build' },
  output: z.object({
    ...ShellOutputFields,
    created: z.boolean().describe('false when the directory already existed (mkdir -p).'),
    created_path: z.string().nullable(),
  }),
  pathsOf: (input) => pathOperands(input, PROGRAMS),
  async run(ctx, input) {
    const { program, argv } = commandLine(input, PROGRAMS, 'shell_write');
    const { flags, operands } = parseArgs('mkdir', argv, MKDIR_FLAGS);
    if (operands.length !== 1) throw E.mkdirOnePath();
    const parents = flags.has('p');
    const r = await runAs(createDirectory, ctx, { path: operands[0] as string, parents });
    // Without -p, mkdir refuses an existing directory, as the real one does.
    if (!parents && !r.data.created) throw E.mkdirExists(r.pathResolved);
    return { ...r, data: { program, argv, output: '', truncated: false, ...r.data } };
  },
});
