// The shape of a tool: defined once (schemas, description, risk) and run by executeTool for every transport.
import type { z } from 'zod';
import type { Config } from '../config.js';
import type { Risk, RiskLevel, VersionStamp } from '../envelope.js';
import type { PlanHook, PlannedChange } from './plan.js';
import type { HandleScope, ResolvedPath, ResolveOptions } from '../workspace/sandbox.js';
import type { RecordedChange } from '../workspace/checkpoints.js';
import type { VersionMatch } from '../workspace/versions.js';
import type { Workspace } from '../workspace/workspace.js';

export interface ToolContext {
  /** The caller's workspace (project). */
  readonly ws: Workspace;
  readonly requestId: string;
  /** Who calls: the token id, else the client address (attachments are kept for this caller only). */
  readonly caller: { readonly actor: string | null; readonly clientIp: string | undefined };
  /** Aborted when the call runs past its time limit or the client goes away. */
  readonly signal: AbortSignal;
  /** Whether the call was stopped, as `signal.aborted`, without making the signal (a step that never waits needs none). */
  readonly aborted: boolean;
  /** Throws the reason the call was stopped, as `signal.throwIfAborted()`, without making the signal. */
  throwIfAborted(): void;
  /** A version the door received out of band (REST `If-Match`, parsed there), checked like `expected_sha256`. */
  readonly expectedVersion: VersionMatch | undefined;
  /** Holds the directory handles of this call's paths until the call has settled. */
  readonly handles: HandleScope;
  /** Resolves a tool path in the sandbox, including `[otherId]/path` (multi-project mode, when the caller may use that project; `./[x]/path` is local). */
  resolve(input: string, opts?: ResolveOptions): Promise<ResolvedPath>;
  /** Output as it comes, for doors that stream it (WebSocket tool_progress, MCP progress); absent elsewhere. */
  readonly progress?: ProgressFn | undefined;
  /** A path resolved by other means than resolve (a backup's stored path) passes the policy here before use. */
  admit?(p: ResolvedPath): Promise<void>;
  /** Told what a mutating call is about to change, before its first write (src/tools/plan.ts, `announce`). */
  readonly planned?: PlanHook | undefined;
  /** The agent turn the call names (validated), or null (docs/api.md, "Turns, checkpoints and rewind"). */
  readonly turn?: string | null;
  /** Told each backup the call keeps (the sha256 of the content kept, its id), for the call's checkpoint record. */
  readonly keptBackup?: ((sha256: string | null, id: string) => void) | undefined;
}

/**
 * Thrown by the policy's resolve hook to stop the whole call (it needs approval, or waits for one), never a
 * failure of one path: a tool that answers per path (read_multiple_files) passes it on.
 */
export class CallStopped extends Error {}

/**
 * Thrown by run_command when a person must decide on what its run changed (docs/run-command.md, "Changes that
 * ask"): the run is held, nothing landed. The gate records the request, then names the held run by its id.
 */
export class ChangesNeedReview extends CallStopped {
  constructor(
    /** The root the command ran on. */
    readonly p: ResolvedPath,
    /** The first change whose rule asks; null when the call itself asked and ran first. */
    readonly asking: { path: string; op: 'write' | 'delete' } | null,
    /** Every change the run would land, with its diff. */
    readonly planned: PlannedChange[],
    /** The command and what it did (exit, output's head and tail), shown before the changes. */
    readonly told: { summary: string; preview: string },
    /** Names the held run by the request's id. */
    readonly bind: (approvalId: string) => Promise<void>,
    /** Discards the held run (the request could not be recorded). */
    readonly discard: () => Promise<void>,
  ) {
    super('changes need review');
  }
}

/** One piece of a running command's output (docs/run-command.md, "Streaming"). */
export type ProgressFn = (stream: 'stdout' | 'stderr', text: string) => void;

/** What a run hands back; executeTool wraps it in the envelope. */
export interface ToolResult<D> {
  data: D;
  text: string;
  stats?: Record<string, number>;
  /** Dry run, truncated output or diff: status `partial`. */
  partial?: boolean;
  /** Normalized relative POSIX path the call acted on. */
  pathResolved?: string | null;
  /** Overrides the tool's default risk level for this call (create `medium`, overwrite `high`). */
  riskLevel?: RiskLevel;
  /** Version of the file after the call; becomes the REST ETag. */
  version?: VersionStamp | null;
  /**
   * What the call changed, when the tool tells it itself (run_command's landing): its checkpoint record takes
   * this instead of the changes the call announced (src/pipeline/checkpoint-recorder.ts).
   */
  changed?: RecordedChange[];
  /** Facts for the audit line (never file contents). */
  audit?: { sha256_before?: string | null; sha256_after?: string | null; bytes_read?: number; bytes_written?: number; exec?: Record<string, unknown> };
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  name: string;
  /** Other names the tool answers to (docs/api.md, "Tools"). */
  aliases?: readonly string[];
  /** Parameter aliases: alias -> canonical name, applied to the top level and to objects in top-level arrays. */
  paramAliases?: Readonly<Record<string, string>>;
  /**
   * Every workspace path a call names, for hooks that act per path (policy), when they are not only the top-level
   * `path` and `destination` (a patch's file headers, a list of paths, a shell command's argv). Paths as given,
   * unresolved.
   */
  pathsOf?: (input: z.output<I>) => string[];
  /**
   * This call of a writing tool only shows what is there (the text editor's `view`): the policy decides it
   * like a read as well as by the tool's own rules (docs/policy.md).
   */
  viewing?: (input: z.output<I>) => boolean;
  /** What the model reads: when to use the tool and how (tools/list, OpenAPI, function definitions). */
  description: string;
  /**
   * What a person reads: one Markdown line of the README's tools table (`npm run tools-table`), the tool's
   * notable parameters and limits; links are relative to the README.
   */
  summary: string;
  risk: Risk;
  riskLevel: RiskLevel;
  /**
   * The tool may change files (its risk is write or destructive; set by defineTool): past its time limit the
   * executor waits for it, so that the answer says what it did (TIMEOUT only when it changed nothing).
   */
  mutates: boolean;
  /** A short human title (MCP `title`); default: the name in words. */
  title?: string;
  /** Calling again with the same arguments changes nothing more (MCP `idempotentHint`); default: read tools only. */
  idempotent?: boolean;
  /** Reaches outside the workspace (the web; MCP `openWorldHint`); default false. */
  openWorld?: boolean;
  input: I;
  /** Whether this service offers the tool (run_command needs TOOLGATE_EXEC); default always. Listings leave it out, calls answer NOT_FOUND. */
  offered?: (config: Config) => boolean;
  /**
   * The words of the command a call runs (run_command), for policy `commands:` rules; null when the command
   * cannot be read as plain words (shell syntax), which then matches no such rule.
   */
  commandWords?: (input: z.output<I>) => readonly string[] | null;
  /**
   * What the person deciding an approval sees when the tool has no dry run (the command, its cwd and env);
   * `asks`: the paths whose reading asks that the approved call will see (a viewing tool's walk shows them then).
   */
  approvalPreview?: (input: z.output<I>, seen?: { asks: readonly string[]; more: boolean }) => { summary: string; preview: string };
  /**
   * What an approval of this tool binds to instead of the version of the file that asks (run_command: the
   * project it runs on); the approved repeat is CONFLICT when it differs.
   */
  approvalBinding?: (p: ResolvedPath) => Promise<VersionStamp>;
  /**
   * The OpenAPI request example, so that Swagger's "Try it out" runs a real call instead of `"path": "string"`:
   * one that succeeds on a fresh workspace once the examples of the tools listed before it have run (TOOLS order).
   */
  example?: z.input<I>;
  /** Further request examples, after `example` (write_file's create the documents the readers' examples read). */
  moreExamples?: z.input<I>[];
  /** The tool writes its own checkpoint record (rewind, whose recovery after a crash writes it too); the pipeline records none for it. */
  recordsItself?: boolean;
  output: O;
  run(ctx: ToolContext, input: z.output<I>): Promise<ToolResult<z.output<O>>>;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodType>(def: Omit<ToolDefinition<I, O>, 'mutates'>): ToolDefinition<I, O> {
  return { ...def, mutates: def.risk !== 'read' };
}

/** Tools that reach the world outside the workspace (the web): MCP `openWorldHint` unless a tool says otherwise. */
const OPEN_WORLD_TOOLS: ReadonlySet<string> = new Set(['web_fetch', 'web_search']);

/**
 * The MCP annotations of a tool, from its risk and its own declarations. MCP reads `destructiveHint: false` as
 * "only additive updates", so every tool that may overwrite or remove what exists (high-level writes) is
 * destructive there, though our own risk class keeps `destructive` for deletions.
 */
export function toolAnnotations(tool: ToolDefinition) {
  const readOnly = tool.risk === 'read';
  return {
    title: tool.title ?? tool.name.charAt(0).toUpperCase() + tool.name.slice(1).replace(/_/g, ' '),
    readOnlyHint: readOnly,
    destructiveHint: tool.risk === 'destructive' || (!readOnly && tool.riskLevel === 'high'),
    idempotentHint: tool.idempotent ?? readOnly,
    openWorldHint: tool.openWorld ?? OPEN_WORLD_TOOLS.has(tool.name),
  };
}
