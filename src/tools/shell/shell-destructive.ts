import { z } from 'zod';
import { ToolError } from '../../envelope.js';
import { E } from '../../errors.js';
import { VersionSchema } from '../args.js';
import { defineTool } from '../define.js';
import { deleteFile } from '../delete-file.js';
import { commandLine, parseArgs, pathOperands, RM_FLAGS, ShellInput, ShellOutputFields, type Program } from './argv.js';
import { runAs } from './run-delegated.js';

const PROGRAMS: readonly Program[] = ['rm'];

export const shellDestructive = defineTool({
  name: 'shell_destructive',
  aliases: ['shell-destructive'],
  description:
    'Run `rm [-f] <file>` inside the project, exactly as delete_file: one regular file, backed up first (restore_backup undoes it); directories and -r are refused. No shell runs: shell syntax (pipes, redirections, ;, &&, $, backticks, globs) is refused.',
  summary: '`rm [-f] <file>`, as `delete_file` (backed up; directories and `-r` refused)',
  risk: 'destructive',
  riskLevel: 'high',
  input: ShellInput,
  example: { command: 'rm archive/notes.txt' },
  output: z.object({
    ...ShellOutputFields,
    deleted: z.boolean().describe('false only with -f for a file that did not exist.'),
    backup_id: z.string().nullable().describe('restore_backup with this id brings the file back.'),
    version: VersionSchema.nullable().describe('Version of the file that was deleted.'),
  }),
  pathsOf: (input) => pathOperands(input, PROGRAMS),
  async run(ctx, input) {
    const { program, argv } = commandLine(input, PROGRAMS, 'shell_destructive');
    const { flags, operands } = parseArgs('rm', argv, RM_FLAGS);
    if (operands.length !== 1) throw E.rmOneFile();
    const path = operands[0] as string;
    try {
      const r = await runAs(deleteFile, ctx, { path });
      return { ...r, data: { program, argv, output: '', truncated: false, ...r.data } };
    } catch (err) {
      // rm -f: a file that is not there is no error (anything else still is).
      if (!(flags.has('f') && err instanceof ToolError && err.code === 'NOT_FOUND')) throw err;
      return {
        data: { program, argv, output: '', truncated: false, deleted: false, backup_id: null, version: null },
        text: `Nothing to remove: '${path}' does not exist (rm -f).`,
        pathResolved: null,
      };
    }
  },
});
