// mkdir and rm run through create_directory's and delete_file's own code (their run with parsed input), so
// the shell forms keep the same sandbox, locks, backups and answers, and cannot drift from the tools.
import { z } from 'zod';
import type { ToolContext, ToolDefinition } from '../define.js';

export async function runAs<I extends z.ZodObject, O extends z.ZodType>(tool: ToolDefinition<I, O>, ctx: ToolContext, input: z.input<I>) {
  return tool.run(ctx, tool.input.parse(input));
}
