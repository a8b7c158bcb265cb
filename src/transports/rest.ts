// REST door: POST /v1/tools/{tool} (and the per-project form), GET /v1/tools. No file logic here:
// it hands the body to the pipeline and writes the envelope, its HTTP status, headers and the ETag.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { envelopeJson, ErrorEnvelopeSchema, PendingApprovalEnvelopeSchema, RISK_LEVELS, RISKS, successEnvelopeSchema, ToolError, type Envelope } from '../envelope.js';
import { E } from '../errors.js';
import type { CallerInfo, Pipeline } from '../pipeline/execute-tool.js';
import type { ToolDefinition } from '../tools/define.js';
import { TOOLS } from '../tools/registry.js';
import { etagOf, parseIfMatch } from '../workspace/versions.js';
import { headerValue, httpCaller } from './caller.js';
import { refuseToolCall } from './http-gate.js';
import { noValidation, plainJson } from './route-compilers.js';
import { exportTools, TOOL_FORMATS, type ToolFormat } from './function-defs.js';
import { exampleRef, pendingExample, restOpenApiTransform, summaryOf } from './rest-openapi.js';

/** GET /v1/tools: the toolgate list by default, the function definitions of another `format` as they are. */
const ToolListSchema = z
  .union([
    z
      .object({
        tools: z.array(
          z.object({
            name: z.string(),
            description: z.string(),
            risk: z.enum(RISKS),
            risk_level: z.enum(RISK_LEVELS),
            aliases: z.array(z.string()),
            param_aliases: z.record(z.string(), z.string()),
            input_schema: z.record(z.string(), z.unknown()).describe('JSON Schema of the arguments.'),
          }),
        ),
      })
      .meta({ id: 'ToolList', description: 'format=toolgate (the default).' }),
    z.array(z.record(z.string(), z.unknown())).describe('format=openai, openai-responses or anthropic: one function definition per tool.'),
    z.object({ tools: z.array(z.record(z.string(), z.unknown())) }).describe('format=mcp: the tools/list result.'),
  ])
  .describe('The tools this caller may use.');

export interface RestOptions {
  pipeline: Pipeline;
  /** The tools this caller may use, as the policy describes them to it (GET /v1/tools). */
  toolsFor?: (req: FastifyRequest) => readonly ToolDefinition[];
}

interface ToolSchemas {
  body: z.ZodType;
  success: z.ZodType;
}

/** The envelope's JSON text, sent as it is: Fastify then looks up no serializer per answer. */
export function sendEnvelope(reply: FastifyReply, status: number, envelope: Envelope, etag?: string): FastifyReply {
  if (etag) void reply.header('etag', etag);
  return reply.code(status).type('application/json; charset=utf-8').send(envelopeJson(envelope));
}

// The answers' examples, by reference (components.examples); a 200 answer's data differs per tool, so the 200
// examples sit on the tools they were taken from.
const SUCCESS_EXAMPLES: Readonly<Record<string, Record<string, { $ref: string }>>> = {
  write_file: { created: exampleRef('Created') },
  edit_file: { dry_run: exampleRef('DryRun') },
};
const ANSWER_EXAMPLES = { '4XX': { conflict: exampleRef('Conflict') }, '5XX': { disk_full: exampleRef('DiskFull') } };
/** The 202 example of a tool: its own example request, held for a person. */
const pendingExamples = (tool: ToolDefinition) => ({ 202: { pending: { summary: 'a policy rule asks a person first; nothing changed yet', value: pendingExample(tool, tool.example) } } });

/**
 * The REST request as the pipeline's plain caller values; If-Match and Prefer are parsed here, at the door.
 * Throws INVALID_PARAM when the URL and X-Project-Id name different projects.
 */
export function restCaller(req: FastifyRequest, urlProject?: string): CallerInfo {
  // httpCaller's object, completed in place: a copy per call showed in a small read's profile.
  const caller = httpCaller(req);
  const headerProject = caller.projectId;
  if (urlProject !== undefined && headerProject !== undefined && urlProject !== headerProject) {
    throw E.projectHeaderMismatch();
  }
  const ifMatch = headerValue(req.headers['if-match']);
  caller.projectId = urlProject ?? headerProject;
  caller.expectedVersion = ifMatch === undefined ? undefined : parseIfMatch(ifMatch);
  const prefer = req.headers.prefer;
  caller.waitS = prefer === undefined ? undefined : preferWait(prefer);
  // The agent turn the call belongs to (docs/api.md, "Turns, checkpoints and rewind"); the executor checks it.
  caller.turn = req.headers['toolgate-turn'];
  return caller;
}

/** `Prefer: wait=N` (RFC 7240), seconds; undefined when absent or malformed. */
export function preferWait(header: string | string[] | undefined): number | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  const m = text === undefined ? null : /(?:^|[,;\s])wait\s*=\s*"?(\d{1,6})"?/i.exec(text);
  return m ? Number(m[1]) : undefined;
}

type ToolCallHandler = (req: FastifyRequest, reply: FastifyReply, toolName: string, urlProject?: string) => Promise<FastifyReply>;

export async function registerRest(app: FastifyInstance, opts: RestOptions): Promise<void> {
  registerToolRoutes(app, toolCallHandler(opts.pipeline));
  registerToolList(app, opts);
}

/** A tool call over REST: its caller from the request, the pipeline's outcome as the answer (ETag for a version). */
function toolCallHandler(pipeline: Pipeline): ToolCallHandler {
  return async (req, reply, toolName, urlProject) => {
    let caller: CallerInfo;
    try {
      caller = restCaller(req, urlProject);
    } catch (err) {
      const refused = refuseToolCall(pipeline, req, reply, toolName, err as ToolError);
      return sendEnvelope(reply, refused.httpStatus, refused.envelope);
    }
    const outcome = await pipeline.executeTool(caller, toolName, req.body);
    const headers = outcome.headers;
    for (const k in headers) void reply.header(k, headers[k] as string);
    const etag = outcome.version ? etagOf(outcome.version) : undefined;
    return sendEnvelope(reply, outcome.httpStatus, outcome.envelope, etag);
  };
}

/** POST /v1/tools/{tool} and its per-project form for every tool, documented; aliases and unknown names too. */
function registerToolRoutes(app: FastifyInstance, handle: ToolCallHandler): void {
  // A tool's body and answer schemas, built once for its two routes and only for the document (zod builds are
  // most of a start's route registration: docs/development.md, "Start-up"); nothing validates with them here.
  const toolRoute = (tool: ToolDefinition, schemas: () => ToolSchemas, url: string, withProject: boolean) =>
    app.route({
      method: 'POST',
      url,
      validatorCompiler: noValidation,
      serializerCompiler: plainJson,
      config: {
        toolCall: tool.name,
        swaggerTransform: restOpenApiTransform({ ...ANSWER_EXAMPLES, ...pendingExamples(tool), ...(SUCCESS_EXAMPLES[tool.name] && { 200: SUCCESS_EXAMPLES[tool.name] }) }),
        docsSchema: (schema) => ({
          ...schema,
          body: schemas().body,
          response: { 200: schemas().success, 202: PendingAnswer, '4XX': ErrorAnswer4xx, '5XX': ErrorAnswer5xx },
        }),
      },
      schema: {
        // The per-project form is the same operation under /v1/projects/{projectId}; documented once.
        hide: withProject,
        summary: summaryOf(tool.description),
        description: `${tool.description}\n\nRisk: ${tool.risk} (${tool.riskLevel}).${tool.aliases?.length ? ` Aliases: ${tool.aliases.join(', ')}.` : ''}`,
        tags: withProject ? ['tools (project)'] : ['tools'],
        operationId: withProject ? `project_${tool.name}` : tool.name,
        ...(withProject && { params: ProjectParams }),
        headers: ToolCallHeaders,
      },
      handler: (req, reply) => handle(req, reply, tool.name, (req.params as { projectId?: string }).projectId),
    });

  const ProjectParams = z.object({ projectId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/) });
  const ToolCallHeaders = z.object({
    // Backticks: Swagger renders descriptions as Markdown, where a bare <sha256> was taken for an HTML tag.
    'if-match': z.string().optional().describe('ETag of the version you read (`"<sha256>"`, as the ETag header gave it); CONFLICT when the file changed.'),
    'x-request-id': z.string().optional(),
    'x-project-id': z.string().optional(),
    'x-toolgate-switches': z.string().optional().describe('Policy switches for this call, e.g. `memory=on`.'),
    'toolgate-turn': z.string().optional().describe('The agent turn this call belongs to (1 to 128 printable ASCII characters, no spaces): its changes are recorded under it, for `list_checkpoints` and `rewind`.'),
    prefer: z.string().optional().describe('`wait=N`: hold a call that needs approval up to N seconds for the decision (TOOLGATE_APPROVAL_MAX_WAIT_S at most).'),
  });
  const PendingAnswer = PendingApprovalEnvelopeSchema.describe('waiting for approval: nothing changed yet');
  const ErrorAnswer4xx = ErrorEnvelopeSchema.describe('error envelope');
  const ErrorAnswer5xx = ErrorEnvelopeSchema.describe('error envelope');
  for (const tool of TOOLS) {
    // Built once for the tool's two routes, when the document first asks.
    let built: ToolSchemas | null = null;
    const schemas = (): ToolSchemas =>
      (built ??= {
        body: tool.input
          .extend({ approval_id: z.string().optional().describe('Repeat of a call that needed approval: the id from data.approval.id.') })
          // Swagger's "Try it out" pre-fills the first: calls that run, in document order (see ToolDefinition.example).
          .meta(tool.example === undefined ? {} : { examples: [tool.example, ...(tool.moreExamples ?? [])] }),
        success: successEnvelopeSchema(tool.output).describe('success or partial'),
      });
    toolRoute(tool, schemas, `/v1/tools/${tool.name}`, false);
    toolRoute(tool, schemas, `/v1/projects/:projectId/tools/${tool.name}`, true);
  }
  // Aliases and unknown names go through the same executor (which answers NOT_FOUND for unknown tools).
  const anyTool = { validatorCompiler: noValidation, serializerCompiler: plainJson, config: { toolCall: true as const }, schema: { hide: true } };
  app.post('/v1/tools/:tool', anyTool, (req, reply) => handle(req, reply, (req.params as { tool: string }).tool));
  app.post('/v1/projects/:projectId/tools/:tool', anyTool, (req, reply) => {
    const params = req.params as { projectId: string; tool: string };
    return handle(req, reply, params.tool, params.projectId);
  });
}

/** GET /v1/tools: the tools this caller may use, in the format asked for. */
function registerToolList(app: FastifyInstance, opts: RestOptions): void {
  app.get(
    '/v1/tools',
    {
      schema: {
        summary: 'List the tools',
        description:
          "The tools this caller may use (its token's risks and the policy, with the switches of X-Toolgate-Switches): name, description (which says where a tool asks for approval), risk, aliases and the input JSON Schema; `format=openai|openai-responses|anthropic|mcp` returns ready-to-register function definitions (the OpenAI ones `strict: true` where their schema holds strict mode's rules).",
        tags: ['meta'],
        querystring: z.object({ format: z.enum(TOOL_FORMATS).default('toolgate') }),
        response: { 200: ToolListSchema, '4XX': ErrorEnvelopeSchema.describe('error envelope') },
      },
      // Documented, not checked on the way out: the list is built from the registry, the schema is for clients.
      serializerCompiler: plainJson,
    },
    (req) => exportTools(opts.toolsFor ? opts.toolsFor(req) : TOOLS, (req.query as { format: ToolFormat }).format),
  );
}
