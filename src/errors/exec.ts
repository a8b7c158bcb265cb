// The catalogue's errors of run_command, the shell tools and their sandbox (src/errors.ts says how to add one).
import { ToolError } from './tool-error.js';

export const execErrors = {
  execOff: () =>
    new ToolError('NOT_FOUND', 'run_command is off on this service (TOOLGATE_EXEC=off); the operator enables it with TOOLGATE_EXEC=sandboxed (docs/run-command.md).'),
};
