import { z } from 'zod';
import { defineTool } from '../define.js';
import { commandLine, pathOperands, ShellInput, ShellOutputFields, type Program } from './argv.js';
import { runDate, runLs, runPwd } from './commands.js';

const PROGRAMS: readonly Program[] = ['date', 'pwd', 'ls'];

export const shellReadonly = defineTool({
  name: 'shell_readonly',
  aliases: ['shell-readonly'],
  description:
    'Run a read-only command: date (-u, -I, -Iseconds, -R), pwd (the project root, shown as "/"), ls (-l -a -A -1 -h -R -t -S -r; paths inside the project). No shell runs and nothing is spawned: shell syntax (pipes, redirections, ;, &&, $, backticks, globs) is refused. Output is capped.',
  summary: '`date` (`-u -I -Iseconds -R`), `pwd` (shows `/`, the project root), `ls` (`-l -a -A -1 -h -R -t -S -r`); run in-process, no shell, output capped',
  risk: 'read',
  riskLevel: 'low',
  input: ShellInput,
  example: { command: 'ls -la' },
  output: z.object(ShellOutputFields),
  pathsOf: (input) => pathOperands(input, PROGRAMS),
  async run(ctx, input) {
    const { program, argv } = commandLine(input, PROGRAMS, 'shell_readonly');
    const result = program === 'date' ? runDate(argv) : program === 'pwd' ? runPwd(argv) : await runLs(ctx, argv);
    const lines = result.output === '' ? 0 : result.output.split('\n').length - 1;
    const more = result.truncated ? ' Output truncated; narrow the command (a subdirectory, no -R).' : '';
    return {
      data: { program, argv, output: result.output, truncated: result.truncated },
      text: `Ran '${[program, ...argv].join(' ').slice(0, 200)}' (${lines} line(s) of output).${more}`,
      stats: { lines, ...(result.entries !== undefined && { entries: result.entries }) },
      partial: result.truncated,
      pathResolved: result.pathResolved ?? null,
    };
  },
});
