// Tool definitions exported for registration with model APIs, generated from the one registry.
import { z } from 'zod';
import { toolAnnotations, type ToolDefinition } from '../tools/define.js';

export type ToolFormat = 'toolgate' | 'openai' | 'openai-responses' | 'anthropic' | 'mcp';
export const TOOL_FORMATS = ['toolgate', 'openai', 'openai-responses', 'anthropic', 'mcp'] as const satisfies readonly ToolFormat[];

const schemaCache = new WeakMap<ToolDefinition, Record<string, unknown>>();

/** JSON Schema of a tool's input as a caller sends it (defaults are optional). */
export function inputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  let schema = schemaCache.get(tool);
  if (!schema) {
    schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete schema.$schema;
    schemaCache.set(tool, schema);
  }
  return schema;
}

/** Keywords OpenAI's strict mode refuses; the server still enforces them when the call arrives. */
const STRICT_UNSUPPORTED = ['default', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'pattern', 'format', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', '$schema'];

/**
 * A JSON Schema as OpenAI's strict mode wants it: every property required, the optional ones nullable
 * (the server takes null as "not given"), additionalProperties false, no unsupported keyword. A oneOf
 * becomes an anyOf: strict mode refuses oneOf, and the unions of the tools' inputs are discriminated (each
 * branch has its own `type` constant), so any branch that matches is the only one; the server still
 * validates the call against the tool's own schema.
 */
export function strictJsonSchema(schema: unknown): unknown {
  return rewriteForStrict(schema, { requireAll: true, inBranch: false });
}

/**
 * A JSON Schema that converts to strict mode on the client's side: strictJsonSchema's rewrites (no
 * unsupported keyword, oneOf as anyOf) with the optional properties left optional, for a client that reads
 * the schema as written. This is MCP's inputSchema: the OpenAI Agents SDK (convertSchemasToStrict) makes
 * every property required and nullable itself, and strips the nulls it added before the call, but cannot
 * tell which branch of an anyOf such a null belongs to; so inside a branch an optional property takes null
 * already (the server takes it as "not given").
 */
export function strictConvertibleJsonSchema(schema: unknown): unknown {
  return rewriteForStrict(schema, { requireAll: false, inBranch: false });
}

function rewriteForStrict(schema: unknown, opts: { requireAll: boolean; inBranch: boolean }): unknown {
  if (Array.isArray(schema)) return schema.map((s) => rewriteForStrict(s, opts));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    if (STRICT_UNSUPPORTED.includes(k)) continue;
    const branch = k === 'oneOf' || k === 'anyOf' ? { ...opts, inBranch: true } : opts;
    out[k === 'oneOf' ? 'anyOf' : k] =
      k === 'properties' || k === '$defs' || k === 'definitions'
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([p, s]) => [p, rewriteForStrict(s, opts)]))
        : rewriteForStrict(v, branch);
  }
  if ((out.type === 'object' || out.properties) && (opts.requireAll || opts.inBranch)) {
    const props = (out.properties ?? {}) as Record<string, Record<string, unknown>>;
    const required = new Set((out.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(props)) if (!required.has(name)) props[name] = nullable(prop);
    if (opts.requireAll) {
      out.properties = props;
      out.required = Object.keys(props);
      out.additionalProperties = false;
    }
  }
  return out;
}

/** Keywords strict mode refuses that strictJsonSchema cannot rewrite: a tool whose schema keeps one is exported with strict false. */
const STRICT_REFUSED = ['allOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'patternProperties', 'propertyNames', 'unevaluatedProperties', 'prefixItems', 'contains'];

/**
 * Whether a schema made by strictJsonSchema holds strict mode: no refused keyword, every schema typed (an
 * `{}` for "anything" is refused), every object closed. Only such tools are marked strict (README, "GET /v1/tools").
 */
export function holdsStrictMode(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return false;
  const s = schema as Record<string, unknown>;
  if (STRICT_REFUSED.some((k) => k in s)) return false;
  if (!('type' in s || 'anyOf' in s || 'enum' in s || 'const' in s || '$ref' in s)) return false;
  if ('properties' in s && s.additionalProperties !== false) return false;
  const children = [
    ...Object.values((s.properties ?? {}) as Record<string, unknown>),
    ...Object.values((s.$defs ?? {}) as Record<string, unknown>),
    ...(Array.isArray(s.anyOf) ? s.anyOf : []),
    ...('items' in s ? [s.items] : []),
  ];
  return children.every(holdsStrictMode);
}

/** A tool's OpenAI parameters and whether they hold strict mode. */
function openAiParameters(t: ToolDefinition): { strict: boolean; parameters: ObjectJsonSchema } {
  const parameters = objectSchema(strictJsonSchema(inputJsonSchema(t)));
  return { strict: holdsStrictMode(parameters) && !('anyOf' in parameters), parameters };
}

function nullable(prop: Record<string, unknown>): Record<string, unknown> {
  if (typeof prop.type === 'string') return { ...prop, type: [prop.type, 'null'], ...(Array.isArray(prop.enum) && { enum: [...(prop.enum as unknown[]), null] }) };
  if (Array.isArray(prop.type)) return prop.type.includes('null') ? prop : { ...prop, type: [...(prop.type as string[]), 'null'] };
  return { anyOf: [prop, { type: 'null' }] };
}

/** A JSON Schema whose root is an object, as every provider requires of a tool's parameters. */
export interface ObjectJsonSchema {
  type: 'object';
  properties?: Record<string, object>;
  required?: string[];
  [keyword: string]: unknown;
}

// The shapes of each format, declared so that a caller (and the tests, against the providers' own SDK
// types) gets them checked by the compiler rather than an `unknown` to cast.
export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description: string; strict: boolean; parameters: ObjectJsonSchema };
}
export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description: string;
  strict: boolean;
  parameters: ObjectJsonSchema;
}
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ObjectJsonSchema;
}
export interface McpToolList {
  tools: { name: string; title: string; description: string; inputSchema: ObjectJsonSchema; annotations: ReturnType<typeof toolAnnotations> }[];
}

const objectSchema = (schema: unknown): ObjectJsonSchema => schema as ObjectJsonSchema;

export function exportTools(tools: readonly ToolDefinition[], format: 'openai'): OpenAIChatTool[];
export function exportTools(tools: readonly ToolDefinition[], format: 'openai-responses'): OpenAIResponsesTool[];
export function exportTools(tools: readonly ToolDefinition[], format: 'anthropic'): AnthropicTool[];
export function exportTools(tools: readonly ToolDefinition[], format: 'mcp'): McpToolList;
export function exportTools(tools: readonly ToolDefinition[], format: ToolFormat): unknown;
export function exportTools(tools: readonly ToolDefinition[], format: ToolFormat): unknown {
  switch (format) {
    case 'openai':
      return tools.map((t): OpenAIChatTool => ({ type: 'function', function: { name: t.name, description: t.description, ...openAiParameters(t) } }));
    case 'openai-responses':
      // The Responses API's flat shape: name and parameters beside type, no nested `function`.
      return tools.map((t): OpenAIResponsesTool => ({ type: 'function', name: t.name, description: t.description, ...openAiParameters(t) }));
    case 'anthropic':
      return tools.map((t): AnthropicTool => ({ name: t.name, description: t.description, input_schema: objectSchema(inputJsonSchema(t)) }));
    case 'mcp':
      return {
        tools: tools.map((t) => {
          const annotations = toolAnnotations(t);
          return { name: t.name, title: annotations.title, description: t.description, inputSchema: objectSchema(strictConvertibleJsonSchema(inputJsonSchema(t))), annotations };
        }),
      } satisfies McpToolList;
    default:
      return {
        tools: tools.map((t) => ({
          name: t.name,
          description: t.description,
          risk: t.risk,
          risk_level: t.riskLevel,
          aliases: t.aliases ?? [],
          param_aliases: t.paramAliases ?? {},
          input_schema: inputJsonSchema(t),
        })),
      };
  }
}
