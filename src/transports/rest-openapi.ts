// What the REST door adds to its OpenAPI operations: short summaries, Markdown-safe descriptions, and one
// answer of each envelope shape as the service really gives it (taken from a run of the tools' own request
// examples), so that Swagger shows what a caller will parse.
import type { SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { ErrorEnvelopeSchema, PendingApprovalEnvelopeSchema, Risk, RiskLevel, successEnvelopeSchema } from '../envelope.js';

type SuccessEnvelope = z.input<ReturnType<typeof successEnvelopeSchema<z.ZodUnknown>>>;

const NOTES_V1 = { mtime_ms: 1767225600000, size_bytes: 6, sha256: '5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03' };
const context = (tool: { risk: Risk; risk_level: RiskLevel }, params: unknown) => ({
  cwd: '.' as const,
  project: null,
  params_input: params,
  path_resolved: 'notes.txt',
  ...tool,
  request_id: '0b7e1c9a-4f3d-4b8e-9a51-2d6f0c8e7a13',
});

/** write_file's example, run in an empty workspace. */
export const SUCCESS_EXAMPLE = {
  status: 'success',
  data: {
    operation: 'create',
    created_directory: null,
    applied: true,
    diff_preview: '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,1 @@\n+hello\n',
    diff_truncated: false,
    lines_added: 1,
    lines_removed: 0,
    backup_id: null,
    version: NOTES_V1,
  },
  text: "Created 'notes.txt' (1 lines, 6 bytes). Version: sha256 5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03 (pass it as expected_sha256 to change this file).",
  stats: { time_ms: 4, bytes_written: 6, original_size: 0, new_size: 6, lines_added: 1, lines_removed: 0 },
  context: context({ risk: 'write', risk_level: 'medium' }, { path: 'notes.txt', content: 'hello\n' }),
} satisfies SuccessEnvelope;

/** edit_file's example as a dry run: status partial, nothing written. */
export const PARTIAL_EXAMPLE = {
  status: 'partial',
  data: {
    replacements: 1,
    edits: [{ stage: 'exact', replacements: 1, start_line: 1, end_line: 1 }],
    snippet: '1: hello, world',
    applied: false,
    diff_preview: '--- a/notes.txt\n+++ b/notes.txt\n@@ -1,1 +1,1 @@\n-hello\n+hello, world\n',
    diff_truncated: false,
    lines_added: 1,
    lines_removed: 1,
    backup_id: null,
    version: NOTES_V1,
  },
  text: "[Dry Run] Would edit 'notes.txt' (1 replacement(s), +1/-1 lines). Version: sha256 5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03 (pass it as expected_sha256 to change this file).",
  stats: { time_ms: 3, replacements: 1, bytes_written: 0, original_size: 6, new_size: 13, lines_added: 1, lines_removed: 1 },
  context: context({ risk: 'write', risk_level: 'high' }, { path: 'notes.txt', old_text: 'hello', new_text: 'hello, world', dry_run: true }),
} satisfies SuccessEnvelope;

const conflict = "File 'notes.txt' changed since you read it (sha256 differs); read it again and retry with the new version.";
/** edit_file with a version that is no longer current: 409 CONFLICT. */
export const ERROR_EXAMPLE = {
  status: 'error',
  data: null,
  text: conflict,
  stats: { time_ms: 2 },
  context: context({ risk: 'write', risk_level: 'high' }, { path: 'notes.txt', old_text: 'hello', new_text: 'hi', expected_sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }),
  error: {
    code: 'CONFLICT',
    message: conflict,
    details: { current: NOTES_V1, expected: { sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' } },
  },
} satisfies z.input<typeof ErrorEnvelopeSchema>;

/** A server-side failure: the same envelope, another code. */
export const SERVER_ERROR_EXAMPLE = {
  ...ERROR_EXAMPLE,
  text: 'The volume is full; nothing was written. Free some space and retry.',
  error: { code: 'DISK_FULL', message: 'The volume is full; nothing was written. Free some space and retry.' },
} satisfies z.input<typeof ErrorEnvelopeSchema>;

const approvalId = 'apr_ElJ9D3P5MoHMCqunNBnc_g';
/**
 * A tool's 202 answer under a policy rule `action: ask`, for its own example request: nothing changed yet.
 * (What the dry run showed joins `data` when the tool has one; the request is what every tool's answer holds.)
 */
export function pendingExample(tool: { name: string; risk: Risk; riskLevel: RiskLevel }, request: unknown) {
  const args = (request ?? {}) as { path?: unknown };
  const target = typeof args.path === 'string' ? args.path : null;
  const summary = target === null ? `${tool.name}.` : `${tool.name} on '${target}'.`;
  return {
    status: 'partial',
    data: {
      applied: false,
      approval: {
        id: approvalId,
        status: 'pending',
        expires_at: '2026-01-01T00:15:00.000Z',
        tool: tool.name,
        path: target,
        risk: tool.risk,
        risk_level: tool.riskLevel,
        summary,
        diff_preview: '',
        diff_truncated: false,
      },
    },
    text:
      `Waiting for approval ${approvalId}: ${summary} Nothing was changed. A person approves or rejects it ` +
      `(the console at /console, or POST /v1/approvals/${approvalId}/approve); then repeat this call with "approval_id": "${approvalId}".`,
    stats: { time_ms: 5 },
    context: { ...context({ risk: tool.risk, risk_level: tool.riskLevel }, request ?? {}), path_resolved: target },
  } satisfies z.input<typeof PendingApprovalEnvelopeSchema>;
}

/**
 * An operation summary that says what the tool does: the first sentence of its description without its
 * period (the name alone told a reader of Swagger nothing), cut at its first clause when that runs long.
 */
export function summaryOf(description: string): string {
  const end = /\.(?:\s|$)/.exec(description);
  const sentence = end ? description.slice(0, end.index) : description;
  if (sentence.length <= 72) return sentence;
  // A separator inside braces, brackets or a code span (`{title, url, snippet}`) does not end a clause.
  const outside = sentence.replace(/\{[^{}]*\}|\[[^[\]]*\]|`[^`]*`/g, (m) => 'x'.repeat(m.length));
  const clause = /: |; | \(|, /.exec(outside);
  return clause ? sentence.slice(0, clause.index) : sentence;
}

/**
 * Swagger renders descriptions as Markdown, where `<path>` or `<sha256>` outside a code span is taken for an
 * HTML tag and disappears; such placeholders become code spans. Tool texts keep them as written for models.
 */
export function markdownSafe(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.replace(/<[^<>\n]*>/g, (tag) => `\`${tag}\``)))
    .join('');
}

function escapeDescriptions(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(escapeDescriptions);
  if (node === null || typeof node !== 'object') return;
  const obj = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'description' && typeof value === 'string') obj[key] = markdownSafe(value);
    // Examples are values, not prose: left as they are.
    else if (key !== 'examples' && key !== 'example') escapeDescriptions(value);
  }
}

export interface NamedExample {
  summary: string;
  value: unknown;
}

/**
 * The envelope examples as `components.examples` (see restOpenApiObjectTransform): every tool operation refers to
 * them, where a copy per operation made the document two thirds larger.
 */
export const ENVELOPE_EXAMPLES = {
  Created: { summary: 'success: write_file created the file', value: SUCCESS_EXAMPLE },
  DryRun: { summary: 'partial: an edit_file dry run, nothing written', value: PARTIAL_EXAMPLE },
  Conflict: { summary: 'CONFLICT: the file changed since it was read', value: ERROR_EXAMPLE },
  DiskFull: { summary: 'DISK_FULL: nothing was written', value: SERVER_ERROR_EXAMPLE },
} satisfies Record<string, NamedExample>;

/** A media `examples` entry that refers to one of ENVELOPE_EXAMPLES. */
export const exampleRef = (name: keyof typeof ENVELOPE_EXAMPLES) => ({ $ref: `#/components/examples/${name}` });

/**
 * The zod provider's transform, then escaped descriptions and named examples on the answers (the provider
 * keeps neither `examples` of a response nor the metadata of a named schema's copy).
 */
export function restOpenApiTransform(responseExamples: Readonly<Record<string, Readonly<Record<string, { $ref: string } | NamedExample>>>>): SwaggerTransform {
  return (args) => {
    const out = jsonSchemaTransform(args as Parameters<typeof jsonSchemaTransform>[0]);
    const schema = out.schema as Record<string, unknown> & { response?: Record<string, Record<string, unknown>> };
    escapeDescriptions(schema);
    for (const [status, examples] of Object.entries(responseExamples)) {
      const response = schema.response?.[status];
      if (!response) continue;
      const { description, ...json } = response;
      schema.response![status] = { description, content: { 'application/json': { schema: json, examples } } };
    }
    return out;
  };
}

/** The zod provider's document transform, plus the envelope examples and escaped descriptions of the components. */
export const restOpenApiObjectTransform: SwaggerTransformObject = (document) => {
  const out = jsonSchemaTransformObject(document) as { components?: Record<string, unknown> };
  escapeDescriptions(out.components?.schemas);
  out.components = { ...out.components, examples: ENVELOPE_EXAMPLES };
  return out as ReturnType<SwaggerTransformObject>;
};
