// The catalogue's errors of run_command, the shell tools and their sandbox (src/errors.ts says how to add one).
import { ToolError } from './tool-error.js';

export const execErrors = {
  execOff: () =>
    new ToolError('NOT_FOUND', 'run_command is off on this service (TOOLGATE_EXEC=off); the operator enables it with TOOLGATE_EXEC=sandboxed (docs/run-command.md).'),
  execNetworkMissing: () =>
    new ToolError('EXECUTION_ERROR', "The command's network was not set up at start (TOOLGATE_EXEC_NETWORK); no command runs without it."),
  execSandboxFailed: (networkError: string) => new ToolError('EXECUTION_ERROR', `The command's sandbox could not be made: ${networkError}`),
  shellSyntax: (what: string, shown: string, index: number) =>
    new ToolError('INVALID_PARAM', `Shell syntax is not supported: ${what} '${shown}' at position ${index + 1}. Run one whitelisted command with plain arguments; quote a name that contains it ('…'), or pass the arguments as an args array.`, { character: shown, position: index + 1 }),
  shellQuoteUnterminated: (quote: string, quoteStart: number) =>
    new ToolError('INVALID_PARAM', `Unterminated ${quote === "'" ? 'single' : 'double'} quote starting at position ${quoteStart + 1}; close it.`, { position: quoteStart + 1 }),
  commandEmpty: () => new ToolError('INVALID_PARAM', 'The command is empty; name a program.'),
  commandWithArgs: () => new ToolError('INVALID_PARAM', 'With args, command is only the program name (e.g. command: "ls", args: ["-l", "src"]).'),
  programNotAllowed: (tool: string, programs: string, name: string, other: string) =>
    new ToolError('INVALID_PARAM', `${tool} runs only ${programs}; '${name.slice(0, 100)}' is not allowed.${other}`),
  optionRefused: (program: string, name: string, refusal: string) => new ToolError('INVALID_PARAM', `${program}: ${name} is refused: ${refusal}`),
  optionNotAllowed: (program: string, name: string, allowed: string) =>
    new ToolError('INVALID_PARAM', `${program}: option ${name.slice(0, 50)} is not allowed (${allowed}).`),
  flagRefused: (program: string, letter: string, refusal: string) => new ToolError('INVALID_PARAM', `${program}: -${letter} is refused: ${refusal}`),
  flagNotAllowed: (program: string, letter: string, allowed: string) =>
    new ToolError('INVALID_PARAM', `${program}: flag -${letter.slice(0, 4)} is not allowed (${allowed}).`),
  dateInvalid: (what: string) => new ToolError('INVALID_PARAM', `date: ${what}.`),
  datePrecisionInvalid: (precision: string) =>
    new ToolError('INVALID_PARAM', `date: --iso-8601 takes date, hours, minutes or seconds, not '${precision.slice(0, 20)}'.`),
  pwdArguments: () => new ToolError('INVALID_PARAM', 'pwd takes no arguments.'),
  lsNotFound: (rel: string) => new ToolError('NOT_FOUND', `ls: cannot access '${rel}': No such file or directory`),
  mkdirOnePath: () => new ToolError('INVALID_PARAM', 'mkdir takes exactly one path (call it once per directory).'),
  mkdirExists: (pathResolved: string | null | undefined) =>
    new ToolError('ALREADY_EXISTS', `mkdir: cannot create directory '${pathResolved}': File exists (use -p to accept it).`),
  rmOneFile: () => new ToolError('INVALID_PARAM', 'rm takes exactly one file (call it once per file).'),
  envEntryInvalid: (item: string) => new ToolError('INVALID_PARAM', `env entry '${item.slice(0, 64)}' is not NAME=value.`),
  envNameInvalid: (name: string) =>
    new ToolError('INVALID_PARAM', `env name '${name.slice(0, 64)}' is not a variable name (letters, digits, _; not starting with a digit).`),
  envNameRefused: (name: string) =>
    new ToolError('INVALID_PARAM', `env ${name} is refused: it changes how every program starts (docs/run-command.md lists the refused names).`),
  envNameTwice: (name: string) => new ToolError('INVALID_PARAM', `env ${name} is given twice.`),
  envValueNul: (name: string) => new ToolError('INVALID_PARAM', `env ${name} holds a NUL byte.`),
  execBusy: (active: number, concurrency: number) =>
    new ToolError('RATE_LIMITED', `${active} commands are running already (TOOLGATE_EXEC_CONCURRENCY=${concurrency}); retry when one has answered.`),
  stdinTooLarge: (maxStdinBytes: number) => new ToolError('FILE_TOO_LARGE', `stdin is over ${maxStdinBytes} bytes.`),
  commandNul: () => new ToolError('INVALID_PARAM', 'The command holds a NUL byte.'),
  cwdOtherProject: () => new ToolError('ACCESS_DENIED', 'A command runs in its own project only; cwd cannot name another project.'),
  cwdNotFound: (rel: string) => new ToolError('NOT_FOUND', `Directory not found: ${rel}`),
  cwdNotDirectory: (rel: string) => new ToolError('NOT_A_DIRECTORY', `cwd is not a directory: ${rel}`),
  volumeTooFull: (free: number, minFreeBytes: number) =>
    new ToolError('DISK_FULL', `The project's volume has ${free} bytes free, under the ${minFreeBytes} a command needs (TOOLGATE_EXEC_MIN_FREE_BYTES).`),
  tooManyHiddenPaths: (count: number, maxHidden: number) =>
    new ToolError('ACCESS_DENIED', `The policy keeps ${count} paths of this project from this caller, more than a sandbox hides (${maxHidden}); a rule on their directory hides them as one.`),
  hiddenPathsUnknown: () =>
    new ToolError('ACCESS_DENIED', 'The policy keeps some paths of this project from this caller, and the project is too large or too deep to find them all (TOOLGATE_SEARCH_MAX_FILES, TOOLGATE_SEARCH_TIMEOUT_MS, 1024 levels), so no command runs on it.'),
  projectTooLargeToApprove: (maxEntries: number) =>
    new ToolError('ACCESS_DENIED', `A command on this project needs a person's approval, which binds to the project as it is, and the project is too large to bind to (over ${maxEntries} entries, or its walk took too long); ask the operator for a rule that allows the command.`),
  commandChangeDenied: (rel: string, op: 'write' | 'delete', policyMessage: string, rule: string | number | undefined) =>
    new ToolError('ACCESS_DENIED', `Nothing the command changed landed: it ${op === 'write' ? 'wrote' : 'removed'} ${rel}, which the policy denies${policyMessage ? ` (${policyMessage})` : ''}. Run it so that it leaves that path as it is.`, { path: rel, op, ...(rule !== undefined && { rule }) }),
  execStateElsewhere: () =>
    new ToolError('EXECUTION_ERROR', "run_command needs the state directory on the project's volume (its changes are moved from there into the project); TOOLGATE_STATE_DIR is on another file system. Nothing ran."),
  directNoDryRun: () =>
    new ToolError('INVALID_PARAM', 'dry_run is not available in direct mode (TOOLGATE_EXEC=direct): a command changes the project as it runs, so it cannot run without landing. Nothing ran.'),
  directChangesRuled: () =>
    new ToolError('ACCESS_DENIED', "run_command runs in direct mode (TOOLGATE_EXEC=direct), where a command's changes land as it makes them, before any rule could decide them; the policy has path rules (on writes, deletes or what a command may see), so no command runs. The operator runs commands on an overlay (TOOLGATE_EXEC=sandboxed) to have them decided."),
  tooManyHeldRuns: (max: number) =>
    new ToolError('RATE_LIMITED', `Nothing the command changed landed: its changes need a person's approval, and this project holds ${max} runs waiting for one already (each keeps its changes on the volume). Once people decide on those, run it again.`, { max_held_runs: max }),
  heldRunGone: (id: string) =>
    new ToolError('APPROVAL_EXPIRED', `The changes approval ${id} was given for are gone (discarded, or landed by another call); nothing ran and nothing landed. Repeat the call without approval_id to run the command again.`, { approval_id: id }),
  heldRunAltered: (id: string) =>
    new ToolError('CONFLICT', `The changes approval ${id} was given for were altered on the volume (their plan names a path outside the project); they were discarded and nothing landed. Repeat the call without approval_id to run the command again.`, { approval_id: id }),
  execChangedMeanwhile: (paths: readonly string[]) =>
    new ToolError('CONFLICT', `Nothing the command changed landed: ${paths.length === 1 ? 'a path it changes was' : `${paths.length} paths it changes were`} changed by someone else while it ran: ${paths.slice(0, 10).join(', ')}${paths.length > 10 ? ', …' : ''}. Run it again on the project as it is now.`, { paths: paths.slice(0, 100) }),
};
