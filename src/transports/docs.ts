// The OpenAPI document and Swagger UI (/docs), loaded when first asked for. @fastify/swagger would read the
// YAML writer and its spec builder at every start, and @fastify/swagger-ui @fastify/static with its file
// serving stack, for pages an agent never opens. A start only records the routes (as @fastify/swagger's
// onRoute hook does); the first /docs request or openApiDocument() call builds a Fastify instance of its own
// holding both plugins and those routes, and /docs answers through it (docs/development.md, "Start-up").
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, FastifyServerOptions, RouteOptions } from 'fastify';
import Fastify from 'fastify';

export interface DocsOptions {
  version: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI 3.1 document of every route (YAML with `{ yaml: true }`), as @fastify/swagger builds it. */
    openApiDocument(opts?: { yaml?: boolean }): Promise<string | Record<string, unknown>>;
  }
  interface FastifyContextConfig {
    /** The /docs door's own routes, which the document leaves out. */
    docsDoor?: true;
    /**
     * The route's schema as the document shows it, completed when the document is built: schemas only the
     * document reads are not built at every start (docs/development.md, "Start-up").
     */
    docsSchema?: (schema: FastifySchema | undefined) => FastifySchema;
  }
}

/** Set on the requests the /docs door forwards, so that their own routes stay out of the document. */
const DOCS_DOOR = { docsDoor: true as const };
/** The docs instance answers a path it does not know with this header: the service's 404 then answers. */
const NOT_FOUND = 'x-toolgate-docs-not-found';
/** Names each forwarded request, so that an error thrown for it finds its way back. */
const CALL = 'x-toolgate-docs-call';
/** Headers of the docs instance's answer that belong to that connection, not to this one. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length']);

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
// The docs instance never validates or serializes a tool call: it only holds the schemas for the document.
const NO_COMPILERS = { buildValidator: () => () => () => true, buildSerializer: () => () => JSON.stringify } as unknown as CompilersFactory;

/**
 * Records every route added from here on (the place @fastify/swagger was registered) and serves /docs. The
 * routes must be recorded before they are added, so this is called before the doors register theirs.
 */
export function registerDocs(app: FastifyInstance, opts: DocsOptions): void {
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    if (route.config?.docsDoor) return;
    routes.push(route);
  });

  // An error inside the docs instance is the service's error (its handler makes the envelope): handed back by call.
  const failures = new Map<string, unknown>();
  let calls = 0;
  let built: Promise<FastifyInstance> | null = null;
  const docs = (): Promise<FastifyInstance> => {
    built ??= buildDocs(routes, opts, failures).catch((err: unknown) => {
      built = null;
      throw err;
    });
    return built;
  };
  app.decorate('openApiDocument', async (o?: { yaml?: boolean }) => {
    const d = await docs();
    return o?.yaml ? d.swagger({ yaml: true }) : (d.swagger() as unknown as Record<string, unknown>);
  });
  app.addHook('onClose', async () => {
    if (built) await (await built.catch(() => null))?.close();
  });

  const forward = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const d = await docs();
    const call = String(++calls);
    const res = await d.inject({ method: req.method as 'GET' | 'HEAD', url: req.url, headers: { ...req.headers, [CALL]: call } });
    const failed = failures.get(call);
    if (failed !== undefined) {
      failures.delete(call);
      throw failed;
    }
    if (res.headers[NOT_FOUND] !== undefined) {
      reply.callNotFound();
      return reply;
    }
    for (const [name, value] of Object.entries(res.headers)) {
      if (!HOP_HEADERS.has(name) && value !== undefined) void reply.header(name, value);
    }
    return reply.code(res.statusCode).send(res.rawPayload);
  };
  const door = { schema: { hide: true }, config: DOCS_DOOR };
  app.get('/docs', door, forward);
  app.get('/docs/*', door, forward);
}

async function buildDocs(routes: readonly RouteOptions[], opts: DocsOptions, failures: Map<string, unknown>): Promise<FastifyInstance> {
  const [{ default: fastifySwagger }, { default: fastifySwaggerUi }, { jsonSchemaTransform }, { restOpenApiObjectTransform }] = await Promise.all([
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
    import('fastify-type-provider-zod'),
    import('./rest-openapi.js'),
  ]);
  const d = Fastify({ logger: false, schemaController: { compilersFactory: NO_COMPILERS } });
  await d.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'toolgate',
        version: opts.version,
        description:
          'Sandboxed tool-execution service for AI agents: file tools over HTTP. Every answer is the standard envelope. ' +
          'In multi-project mode every tool is also served at POST /v1/projects/{projectId}/tools/{tool} (or send X-Project-Id).',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: restOpenApiObjectTransform,
  });
  await d.register(fastifySwaggerUi, { routePrefix: '/docs' });
  // The service's routes as they were added (HEAD copies included, as @fastify/swagger saw them, so none is
  // made again), with a handler that never runs: the docs instance serves only /docs.
  const unused = () => {
    throw new Error('the docs instance serves only /docs');
  };
  for (const r of routes) {
    const { links } = r as { links?: unknown };
    const schema = r.config?.docsSchema ? r.config.docsSchema(r.schema) : r.schema;
    const route = { method: r.method, url: r.url, schema, config: r.config, exposeHeadRoute: false, handler: unused };
    d.route({ ...route, ...(r.constraints && { constraints: r.constraints }), ...(links !== undefined && { links }) } as RouteOptions);
  }
  d.setNotFoundHandler((_req, reply) => reply.code(404).header(NOT_FOUND, '1').send());
  d.setErrorHandler((err, req, reply) => {
    failures.set(String(req.headers[CALL]), err);
    return reply.code(500).send();
  });
  await d.ready();
  return d;
}
