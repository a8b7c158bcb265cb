// Tool definitions exported for registration with model APIs, generated from the one registry.
import { z } from 'zod';
import { toolAnnotations, type ToolDefinition } from '../tools/define.js';

export type ToolFormat = 'toolgate' | 'openai' | 'anthropic' | 'mcp';

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

export function exportTools(tools: readonly ToolDefinition[], format: ToolFormat): unknown {
  switch (format) {
    case 'openai':
      return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: inputJsonSchema(t) } }));
    case 'anthropic':
      return tools.map((t) => ({ name: t.name, description: t.description, input_schema: inputJsonSchema(t) }));
    case 'mcp':
      return {
        tools: tools.map((t) => {
          const annotations = toolAnnotations(t);
          return { name: t.name, title: annotations.title, description: t.description, inputSchema: inputJsonSchema(t), annotations };
        }),
      };
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
