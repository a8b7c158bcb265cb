// The shell tools' input: a command string (tokenized strictly) or a program name plus an argv array, the
// whitelist of programs per tool, and the parsing of each program's flags and operands.
import { z } from 'zod';
import { E } from '../../errors.js';
import { tokenize } from './tokenize.js';

export const ShellInput = z.strictObject({
  command: z
    .string()
    .min(1)
    .max(4096)
    .describe('The command line, e.g. "ls -la src". No shell runs: pipes, redirections, ;, &&, $, backticks and globs are refused; quote names with spaces (\'my file.txt\').'),
  args: z
    .array(z.string().max(4096))
    .max(64)
    .optional()
    .describe('The arguments as an argv array, taken literally; then `command` is only the program name (e.g. "ls").'),
});
export type ShellInputData = z.output<typeof ShellInput>;

export const ShellOutputFields = {
  program: z.string(),
  argv: z.array(z.string()).describe('The arguments after the program, as they were run.'),
  output: z.string().describe('What the command prints.'),
  truncated: z.boolean().describe('Output was cut at TOOLGATE_MAX_OUTPUT_BYTES or a listing stopped at its limits.'),
};

export type Program = 'date' | 'pwd' | 'ls' | 'mkdir' | 'rm';

/** Which tool runs which program (the risk of the tool is the risk of its programs). */
const TOOL_OF: Record<Program, string> = { date: 'shell_readonly', pwd: 'shell_readonly', ls: 'shell_readonly', mkdir: 'shell_write', rm: 'shell_destructive' };

/** The program and argv of a call, checked against the tool's whitelist. */
export function commandLine(input: ShellInputData, allowed: readonly Program[], tool: string): { program: Program; argv: string[] } {
  const words = tokenize(input.command);
  if (words.length === 0) throw E.commandEmpty();
  if (input.args !== undefined && words.length > 1) {
    throw E.commandWithArgs();
  }
  const name = words[0] as string;
  if (!(allowed as readonly string[]).includes(name)) {
    const other = Object.hasOwn(TOOL_OF, name) ? ` '${name}' is run by ${TOOL_OF[name as Program]}.` : '';
    throw E.programNotAllowed(tool, allowed.join(', '), name, other);
  }
  return { program: name as Program, argv: input.args ?? words.slice(1) };
}

export interface ParsedArgs {
  /** Single-letter flags given (long options mapped to their letter). */
  flags: Set<string>;
  /** Option values (date's --iso-8601=…). */
  values: Map<string, string>;
  operands: string[];
}

interface FlagSpec {
  letters: string;
  /** Long option -> letter, or a handler for an option with a value. */
  long?: Record<string, string>;
  /** Why a known flag is refused (rm -r). */
  refused?: Record<string, string>;
}

/** Splits argv into flags and operands (`--` ends flags), refusing any flag not in `spec`. */
export function parseArgs(program: string, argv: readonly string[], spec: FlagSpec): ParsedArgs {
  const flags = new Set<string>();
  const values = new Map<string, string>();
  const operands: string[] = [];
  let flagsDone = false;
  const allowed = `allowed: ${[...spec.letters].map((l) => `-${l}`).join(' ')}${spec.long ? ` ${Object.keys(spec.long).join(' ')}` : ''}`;
  for (const arg of argv) {
    if (flagsDone || arg === '-' || !arg.startsWith('-')) {
      operands.push(arg);
      continue;
    }
    if (arg === '--') {
      flagsDone = true;
      continue;
    }
    if (arg.startsWith('--')) {
      const [name, value] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
      const refusal = spec.refused?.[name];
      if (refusal) throw E.optionRefused(program, name, refusal);
      const letter = spec.long?.[name];
      if (!letter) throw E.optionNotAllowed(program, name, allowed);
      flags.add(letter);
      if (value !== undefined) values.set(letter, value);
      continue;
    }
    for (const letter of arg.slice(1)) {
      const refusal = spec.refused?.[`-${letter}`];
      if (refusal) throw E.flagRefused(program, letter, refusal);
      if (!spec.letters.includes(letter)) throw E.flagNotAllowed(program, letter, allowed);
      flags.add(letter);
    }
  }
  return { flags, values, operands };
}

export const LS_FLAGS: FlagSpec = { letters: 'laA1hRtSr', long: { '--all': 'a', '--almost-all': 'A', '--recursive': 'R', '--reverse': 'r', '--human-readable': 'h' } };
export const MKDIR_FLAGS: FlagSpec = { letters: 'p', long: { '--parents': 'p' } };
export const RM_FLAGS: FlagSpec = {
  letters: 'f',
  long: { '--force': 'f' },
  refused: Object.fromEntries(['-r', '-R', '--recursive', '-d', '--dir'].map((f) => [f, 'rm removes one file; directories are refused (shell_destructive never deletes a tree).'])),
};
// -I is GNU's --iso-8601 (date only); -Iseconds and friends arrive as letters, so they are spelled out in long form.
export const DATE_FLAGS: FlagSpec = { letters: 'uRI', long: { '--utc': 'u', '--universal': 'u', '--rfc-email': 'R', '--iso-8601': 'I' } };
export const PWD_FLAGS: FlagSpec = { letters: 'LP' };

/** The operands that name paths, for checks that look at paths (policy); empty when the argv does not parse. */
export function pathOperands(input: ShellInputData, allowed: readonly Program[]): string[] {
  try {
    const { program, argv } = commandLine(input, allowed, '');
    const spec = program === 'ls' ? LS_FLAGS : program === 'mkdir' ? MKDIR_FLAGS : program === 'rm' ? RM_FLAGS : null;
    if (!spec) return [];
    const { operands } = parseArgs(program, argv, spec);
    return program === 'ls' && operands.length === 0 ? ['.'] : operands;
  } catch {
    return [];
  }
}
