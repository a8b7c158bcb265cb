// Minimal valid arguments for any tool in the registry, so suites cover tools added later without edits.
import type { z } from 'zod';
import type { Envelope } from '../../src/envelope.js';
import type { ToolDefinition } from '../../src/tools/define.js';
import { applyParamAliases } from '../../src/pipeline/arguments.js';
import { TOOLS } from '../../src/tools/registry.js';

/** Argument names that name a file system path and are checked by the sandbox. */
export const PATH_KEYS = ['path', 'destination', 'source', 'target', 'dest'] as const;

/** Per-tool arguments besides the path(s); anything not listed falls back to GENERIC_ARGS, then to a guess by type. */
export const TOOL_ARGS: Record<string, Record<string, unknown>> = {
  write_file: { content: 'x' },
  append_to_file: { content: 'x' },
  replace_in_file: { old: 'x', new: 'y' },
  edit_file: { old_text: 'x', new_text: 'y' },
  search_files: { query: 'x' },
  move_file: { destination: 'moved-by-test.txt' },
  // Swept by its path (the newest backup of that file); a backup_id beside it would be refused as both.
  restore_backup: {},
  // Loopback, not allowed in tests: refused before any connection, so a sweep never leaves the machine.
  web_fetch: { url: 'http://127.0.0.1:9/' },
  apply_patch: { type: 'update_file', diff: '@@\n-victim\n+changed\n' },
  str_replace_based_edit_tool: { command: 'str_replace', old_str: 'victim', new_str: 'changed' },
};

const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');

/**
 * Paths a tool takes inside another argument (a patch's file headers, a list of paths), or under a command that
 * argsFor would not pick: each builder makes the whole arguments around one hostile path. `codeOf` reads the
 * refusal where the tool reports it per path (default: the envelope's error code).
 */
export const PATH_BUILDERS: Record<string, Record<string, { build: (p: string) => Record<string, unknown>; codeOf?: (body: Envelope) => string | undefined }>> = {
  apply_patch: {
    'patch:update': { build: (p) => ({ patch: patch(`*** Update File: ${p}`, '@@', '-victim', '+changed') }) },
    'patch:add': { build: (p) => ({ patch: patch(`*** Add File: ${p}`, '+x') }) },
    'patch:delete': { build: (p) => ({ patch: patch(`*** Delete File: ${p}`) }) },
    'patch:move': { build: (p) => ({ patch: patch('*** Update File: victim.txt', `*** Move to: ${p}`, '@@', '-victim', '+moved') }) },
  },
  read_multiple_files: {
    paths: {
      build: (p) => ({ paths: [p] }),
      codeOf: (body) => (body.data as { files: Array<{ error: { code: string } | null }> } | null)?.files[0]?.error?.code ?? body.error?.code,
    },
  },
  str_replace_based_edit_tool: {
    'path:view': { build: (p) => ({ command: 'view', path: p }) },
    'path:create': { build: (p) => ({ command: 'create', path: p, file_text: 'x' }) },
    'path:insert': { build: (p) => ({ command: 'insert', path: p, insert_line: 0, new_str: 'x' }) },
    'path:undo_edit': { build: (p) => ({ command: 'undo_edit', path: p }) },
  },
};

const GENERIC_ARGS: Record<string, unknown> = {
  content: 'x',
  query: 'x',
  pattern: 'x',
  old: 'x',
  new: 'y',
  old_text: 'x',
  new_text: 'y',
  destination: 'moved-by-test.txt',
  backup_id: '0000000000000000-000000000-000000',
};

const GUESSES: unknown[] = ['x', 1, false, ['x'], {}];

export function shapeOf(tool: ToolDefinition): Record<string, z.ZodType> {
  return (tool.input as unknown as { shape: Record<string, z.ZodType> }).shape;
}

/** The path-taking argument names of a tool (empty when it takes none). */
export function pathKeysOf(tool: ToolDefinition): string[] {
  const shape = shapeOf(tool);
  return PATH_KEYS.filter((k) => k in shape);
}

/** Arguments for `tool` with `overrides` applied; required arguments not given are filled in. */
export function argsFor(tool: ToolDefinition, overrides: Record<string, unknown>): Record<string, unknown> {
  const shape = shapeOf(tool);
  const args: Record<string, unknown> = { ...(TOOL_ARGS[tool.name] ?? {}) };
  for (const [key, schema] of Object.entries(shape)) {
    if (key in args || key in overrides) continue;
    if (schema.safeParse(undefined).success) continue; // optional or defaulted
    if (key in GENERIC_ARGS && schema.safeParse(GENERIC_ARGS[key]).success) {
      args[key] = GENERIC_ARGS[key];
      continue;
    }
    const guess = GUESSES.find((g) => schema.safeParse(g).success);
    if (guess !== undefined) args[key] = guess;
  }
  return { ...args, ...overrides };
}

/** True when the arguments pass the tool's input schema (after parameter aliases). */
export function argsAreValid(tool: ToolDefinition, args: Record<string, unknown>): boolean {
  return tool.input.safeParse(applyParamAliases(args, tool.paramAliases)).success;
}

export interface PathTarget {
  tool: ToolDefinition;
  /** The argument that gets the hostile path. */
  key: string;
  /** Arguments besides the hostile one (other path arguments name ordinary files). */
  base: Record<string, unknown>;
  /** The whole arguments around the hostile path, for paths not given as a top-level argument (PATH_BUILDERS). */
  build?: (hostile: string) => Record<string, unknown>;
  /** Where the refusal is reported, when not as the envelope's error. */
  codeOf?: (body: Envelope) => string | undefined;
}

/** The arguments of one target around one path. */
export function targetArgs(target: PathTarget, hostile: string): Record<string, unknown> {
  return target.build ? target.build(hostile) : { ...target.base, [target.key]: hostile };
}

/**
 * Tools that take paths inside an argv rather than as a path argument: each program that takes a path, as an
 * args array (the hostile string arrives literally, as a path argument would; the tokenizer has its own tests).
 */
export const ARGV_PATH_BUILDERS: Record<string, Record<string, (path: string) => Record<string, unknown>>> = {
  shell_readonly: { 'ls': (p) => ({ command: 'ls', args: ['-la', '--', p] }) },
  shell_write: { 'mkdir': (p) => ({ command: 'mkdir', args: ['-p', '--', p] }) },
  shell_destructive: { 'rm': (p) => ({ command: 'rm', args: ['--', p] }) },
};

/** Every (tool, path argument) pair of the registry; other path arguments of the tool get `ordinary`. */
export function pathTargets(ordinary: Record<string, string>): PathTarget[] {
  const out: PathTarget[] = [];
  for (const tool of TOOLS) {
    const keys = pathKeysOf(tool);
    for (const key of keys) {
      const others: Record<string, unknown> = {};
      for (const k of keys) if (k !== key) others[k] = ordinary[k] ?? ordinary.path;
      out.push({ tool, key, base: argsFor(tool, others) });
    }
    for (const [program, build] of Object.entries(ARGV_PATH_BUILDERS[tool.name] ?? {})) out.push({ tool, key: `argv(${program})`, base: build(ordinary.path ?? 'x'), build });
    // Built targets change only the hostile path's file; base.path names the file that must stay as it was.
    for (const [key, b] of Object.entries(PATH_BUILDERS[tool.name] ?? {})) out.push({ tool, key, base: { path: ordinary.path }, ...b });
  }
  return out;
}
