// A tool's arguments as the executor runs them: aliases renamed, the tool's schema applied strictly, then
// leniently the way models send arguments; a refusal names what was wrong and what the tool accepts.
import type { z } from 'zod';
import { shortenText } from '../envelope.js';
import { E } from '../errors.js';
import type { ToolDefinition } from '../tools/define.js';

/** The validated input of `tool` from the caller's arguments (approval_id already taken off); throws INVALID_PARAM. */
export function parseArguments(tool: ToolDefinition, args: Record<string, unknown>): Record<string, unknown> {
  const aliased = applyParamAliases(args, tool.paramAliases);
  const quick = checkOf(tool)(aliased);
  if (quick !== undefined) return quick;
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

// --- The check compiled once per tool ---------------------------------------------------------------------

/**
 * A tool's arguments checked the way its zod schema would check them, for the plain shapes most calls send:
 * the input as zod returns it, or undefined to let zod decide (and word a refusal). Built once per tool from the
 * schema (docs/development.md, "Work done once"): zod walks every field of the shape on every call, present or not.
 */
type ArgumentCheck = (args: Record<string, unknown>) => Record<string, unknown> | undefined;

/** Compiled from the tool registry, which never changes: one cache serves every service of the process. */
const compiled = new WeakMap<ToolDefinition, ArgumentCheck>();

export function checkOf(tool: ToolDefinition): ArgumentCheck {
  let check = compiled.get(tool);
  if (!check) compiled.set(tool, (check = compileCheck(tool.input)));
  return check;
}

/** What zod's schema internals look like to the compiler (only the parts it reads). */
interface ZodInternals {
  _zod: { def: { type: string; coerce?: boolean; checks?: { _zod: { def: CheckDef } }[]; innerType?: ZodInternals; defaultValue?: unknown; shape?: Record<string, ZodInternals>; entries?: Record<string, unknown> }; optin?: string; optout?: string; values?: ReadonlySet<unknown> };
}
interface CheckDef {
  check: string;
  format?: string;
  pattern?: unknown;
  value?: unknown;
  inclusive?: boolean;
  minimum?: unknown;
  maximum?: unknown;
}

/** A field: whether a present value is taken as it is (null: only zod knows), and what its absence gives. */
interface Field {
  key: string;
  accepts: ((v: unknown) => boolean) | null;
  absent: 'omit' | 'default' | 'zod';
  /** The ZodDefault's definition, whose `defaultValue` zod reads anew on every call that leaves the field out. */
  defaults?: { defaultValue?: unknown };
}

function compileCheck(schema: z.ZodObject): ArgumentCheck {
  const def = (schema as unknown as ZodInternals)._zod.def;
  const never: ArgumentCheck = () => undefined;
  if (def.type !== 'object' || !def.shape || (def.checks?.length ?? 0) > 0) return never;
  const shape = def.shape;
  // A key every object has (`toString`) would read as present where no argument named it.
  if (Object.keys(shape).some((key) => key in Object.prototype)) return never;
  const fields: Field[] = Object.keys(shape).map((key) => fieldOf(key, shape[key] as ZodInternals));
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const required = fields.filter((f) => f.absent === 'zod').map((f) => f.key);
  return (args) => {
    // Every key must be a field with a value taken as it is (for...in, as zod's check for unknown keys reads them).
    for (const key in args) {
      const field = byKey.get(key);
      const v = args[key];
      if (!field?.accepts || v === undefined || !field.accepts(v)) return undefined;
    }
    for (const key of required) if (args[key] === undefined) return undefined;
    // The fields in the shape's order, as zod writes its result.
    const out: Record<string, unknown> = {};
    for (const f of fields) {
      const v = args[f.key];
      if (v !== undefined) out[f.key] = v;
      else if (f.defaults) out[f.key] = f.defaults.defaultValue;
    }
    return out;
  };
}

function fieldOf(key: string, schema: ZodInternals): Field {
  const { def } = schema._zod;
  if (def.type === 'optional' && def.innerType && def.innerType._zod.optin === undefined) {
    return { key, accepts: leafOf(def.innerType), absent: 'omit' };
  }
  if (def.type === 'default' && def.innerType) return { key, accepts: leafOf(def.innerType), absent: 'default', defaults: def };
  return { key, accepts: leafOf(schema), absent: 'zod' };
}

/**
 * A value check that never takes what zod refuses: a string, a boolean, a number, an enum member, each with the
 * checks below; any other schema or check is zod's alone (null). A check's `when` may only skip it in zod, so
 * checking it always takes no more than zod takes.
 */
function leafOf(schema: ZodInternals): ((v: unknown) => boolean) | null {
  const { def } = schema._zod;
  if (def.coerce) return null;
  const checks: ((v: never) => boolean)[] = [];
  for (const c of def.checks ?? []) {
    const check = checkFor(def.type, c._zod.def);
    if (!check) return null;
    checks.push(check);
  }
  const all = (v: unknown) => checks.every((c) => c(v as never));
  switch (def.type) {
    case 'string':
      return (v) => typeof v === 'string' && all(v);
    case 'boolean':
      return checks.length === 0 ? (v) => typeof v === 'boolean' : null;
    case 'number':
      return (v) => typeof v === 'number' && Number.isFinite(v) && all(v);
    case 'enum': {
      const values = schema._zod.values;
      return values && checks.length === 0 && [...values].every((x) => typeof x === 'string') ? (v) => typeof v === 'string' && values.has(v) : null;
    }
    default:
      return null;
  }
}

function checkFor(type: string, c: CheckDef): ((v: never) => boolean) | null {
  if (type === 'string') {
    if (c.check === 'string_format' && c.format === 'regex' && c.pattern instanceof RegExp) {
      const pattern = c.pattern;
      return (v: string) => {
        pattern.lastIndex = 0;
        return pattern.test(v);
      };
    }
    if (c.check === 'min_length' && typeof c.minimum === 'number') return ((min: number) => (v: string) => v.length >= min)(c.minimum);
    if (c.check === 'max_length' && typeof c.maximum === 'number') return ((max: number) => (v: string) => v.length <= max)(c.maximum);
    return null;
  }
  if (type === 'number') {
    if (c.check === 'number_format' && c.format === 'safeint') return (v: number) => Number.isSafeInteger(v);
    if (c.check === 'greater_than' && typeof c.value === 'number') return ((min: number, inclusive: boolean) => (v: number) => (inclusive ? v >= min : v > min))(c.value, c.inclusive === true);
    if (c.check === 'less_than' && typeof c.value === 'number') return ((max: number, inclusive: boolean) => (v: number) => (inclusive ? v <= max : v < max))(c.value, c.inclusive === true);
  }
  return null;
}
