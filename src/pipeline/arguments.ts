// A tool's arguments as the executor runs them: aliases renamed, the tool's schema applied strictly, then
// leniently the way models send arguments; a refusal names what was wrong and what the tool accepts.
import type { z } from 'zod';
import { shortenText } from '../envelope.js';
import { E } from '../errors.js';
import type { ToolDefinition } from '../tools/define.js';

/** The validated input of `tool` from the caller's arguments (approval_id already taken off); throws INVALID_PARAM. */
export function parseArguments(tool: ToolDefinition, args: Record<string, unknown>): Record<string, unknown> {
  const aliased = applyParamAliases(args, tool.paramAliases);
  let parsed = tool.input.safeParse(aliased);
  if (!parsed.success) {
    const lenient = lenientArguments(tool, aliased, parsed.error.issues);
    if (lenient) parsed = tool.input.safeParse(lenient);
  }
  if (!parsed.success) throw E.argumentsInvalid(describeZodError(parsed.error, tool, aliased), parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));
  return parsed.data as Record<string, unknown>;
}

export function applyParamAliases(input: Record<string, unknown>, aliases: Readonly<Record<string, string>> | undefined): Record<string, unknown> {
  if (!aliases || !usesAlias(input, aliases)) return input;
  const rename = (obj: Record<string, unknown>) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) {
      const canonical = aliases[k];
      if (canonical !== undefined && !(canonical in obj)) out[canonical] = v;
      else out[k] = v;
    }
    return out;
  };
  const top = rename(input);
  for (const [k, v] of Object.entries(top)) {
    if (Array.isArray(v)) top[k] = v.map((item: unknown) => (item && typeof item === 'object' && !Array.isArray(item) ? rename(item as Record<string, unknown>) : item));
  }
  return top;
}

/** Whether an alias names a parameter at the top or one level down in an array (the places applyParamAliases renames). */
function usesAlias(input: Record<string, unknown>, aliases: Readonly<Record<string, string>>): boolean {
  for (const k in input) {
    if (Object.hasOwn(aliases, k)) return true;
    const v = input[k];
    if (Array.isArray(v)) {
      for (const item of v) {
        if (item && typeof item === 'object' && !Array.isArray(item)) for (const ik in item as object) if (Object.hasOwn(aliases, ik)) return true;
      }
    }
  }
  return false;
}

/** "the string \"x\"", "null", "an array": what came, for a wrong-type message. */
function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(shortenText(v, 40))}`;
  if (typeof v === 'object') return 'an object';
  return `the ${typeof v} ${String(v)}`;
}

function describeZodError(err: z.ZodError, tool: ToolDefinition, params: Record<string, unknown>): string {
  const issue = err.issues[0];
  if (!issue) return 'Invalid parameters.';
  const accepted = Object.keys(tool.input.shape).join(', ');
  const where = issue.path.length > 0 ? `'${issue.path.join('.')}'` : 'input';
  // Messages name the accepted parameters inline: a model cannot look them up with GET /v1/tools.
  if (issue.code === 'unrecognized_keys') return `Unknown parameter(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}; ${tool.name} accepts: ${accepted}.`;
  if (issue.code === 'invalid_type') {
    let given: unknown = params;
    for (const key of issue.path) given = given && typeof given === 'object' ? (given as Record<PropertyKey, unknown>)[key] : undefined;
    if (given === undefined) return `Missing required parameter ${where}; ${tool.name} accepts: ${accepted}.`;
    // zod says `number` for z.number().int(): an integer field is one that takes 1 but not 1.5.
    const field = issue.path.length === 1 ? (tool.input.shape as Record<string, z.ZodType>)[String(issue.path[0])] : undefined;
    const integer = issue.expected === 'int' || (issue.expected === 'number' && field !== undefined && field.safeParse(1).success && !field.safeParse(1.5).success);
    return `${where} must be ${integer ? 'an integer' : `a ${issue.expected}`}, got ${describeValue(given)}.`;
  }
  return `Invalid parameter ${where}: ${issue.message}.`;
}

const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

/**
 * Arguments as models send them, tried only when the strict parse failed: `null` for an optional argument
 * means "not given" (strict function calling sends every property), and a number sent as a numeric string
 * ("3") counts as the number where the schema wants one.
 */
function lenientArguments(tool: ToolDefinition, params: Record<string, unknown>, issues: readonly z.core.$ZodIssue[]): Record<string, unknown> | null {
  const shape = tool.input.shape as Record<string, z.ZodType>;
  let changed = false;
  // The caller's arguments stay as received (params_input): containers on the way to a changed value are
  // copied, never the whole input (a deep copy of hostile input nested 100,000 deep would overflow the stack).
  const out: Record<string, unknown> = { ...params };
  for (const [key, value] of Object.entries(params)) {
    const field = shape[key];
    if (!field) continue;
    if (value === null && !field.safeParse(null).success && field.safeParse(undefined).success) {
      delete out[key];
      changed = true;
    } else if (typeof value === 'string' && NUMERIC.test(value) && !field.safeParse(value).success && field.safeParse(Number(value)).success) {
      out[key] = Number(value);
      changed = true;
    }
  }
  // Strict mode makes nested optional properties required and nullable too (edit_file's
  // edits[].replace_all): a null the schema refused inside an object is dropped as "not given"; one that
  // was required then fails as missing.
  for (const issue of issues) {
    if (issue.path.length < 2) continue;
    const parent = copyAlong(out, issue.path.slice(0, -1));
    const last = issue.path[issue.path.length - 1] as PropertyKey;
    if (parent && !Array.isArray(parent) && parent[last] === null) {
      delete parent[last];
      changed = true;
    }
  }
  return changed ? out : null;
}

/** The container at `path` in `root`, each object or array on the way replaced by a shallow copy; null when absent. */
function copyAlong(root: Record<string, unknown>, path: readonly PropertyKey[]): Record<PropertyKey, unknown> | null {
  let node: Record<PropertyKey, unknown> = root;
  for (const key of path) {
    const child = node[key];
    if (!child || typeof child !== 'object') return null;
    const copy = (Array.isArray(child) ? [...(child as unknown[])] : { ...(child as object) }) as Record<PropertyKey, unknown>;
    node[key] = copy;
    node = copy;
  }
  return node;
}
