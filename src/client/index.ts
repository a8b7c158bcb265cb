// The typed TypeScript client (`toolgate/client`; published on its own as `toolgate-client`, scripts/client-package.mjs): openapi-fetch over the types openapi-typescript generates
// from openapi.yaml (src/client/schema.ts), plus callTool, which answers every tool call with its envelope
// typed as the document declares it. It imports nothing from the service, so it ships on its own.
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };

/** Every tool's name, as its operation in the OpenAPI document (`POST /v1/tools/{name}`). */
export type ToolName = { [P in keyof paths]: P extends `/v1/tools/${infer N}` ? N : never }[keyof paths];

type ToolPath<N extends ToolName> = `/v1/tools/${N}`;
type ToolOperation<N extends ToolName> = NonNullable<paths[ToolPath<N>]['post']>;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never;

/** A tool's arguments (the request body). */
export type ToolArgs<N extends ToolName> = JsonOf<ToolOperation<N>['requestBody']>;
type Documented200<N extends ToolName> = JsonOf<ToolOperation<N>['responses'][200]>;
/**
 * The 200 envelope of a tool: status success or partial, `data` typed by the tool's output schema. The
 * document's envelope allows a null `data` (errors carry none); a 200 always carries it.
 */
export type ToolSuccessEnvelope<N extends ToolName> = Omit<Documented200<N>, 'data'> & { data: NonNullable<Documented200<N>['data']> };
/** Every 4XX/5XX answer: status "error", data null, `error.code` one of the documented codes. */
export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
export type ErrorCode = ErrorEnvelope['error']['code'];
/** The 202 answer of a call a policy holds for a person's decision: nothing changed yet. */
export type PendingApprovalEnvelope = components['schemas']['PendingApprovalEnvelope'];
/** GET /v1/tools with the default format. */
export type ToolList = components['schemas']['ToolList'];

/** What callTool answers; `kind` tells the three envelope shapes apart (a 202 is `partial` too). */
export type ToolCallResult<N extends ToolName> =
  | { kind: 'success'; httpStatus: 200; envelope: ToolSuccessEnvelope<N>; /** The file's version after the call (If-Match). */ etag: string | undefined }
  | { kind: 'pending'; httpStatus: 202; envelope: PendingApprovalEnvelope; etag: undefined }
  | { kind: 'error'; httpStatus: number; envelope: ErrorEnvelope; etag: undefined };

export interface ToolCallOptions {
  /** The ETag of the version you read: the call is CONFLICT when the file changed since. */
  ifMatch?: string;
  /** `Prefer: wait=N`: hold a call that needs approval up to N seconds for the decision. */
  waitSeconds?: number;
  /** X-Toolgate-Switches, e.g. `memory=on`. */
  switches?: string;
  /** Toolgate-Turn: the agent turn the call belongs to; its changes are recorded under it (list_checkpoints, rewind). */
  turn?: string;
  signal?: AbortSignal;
}

export interface ToolgateClientOptions {
  /** Where the service listens, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** A bearer token (TOOLGATE_TOKENS_FILE); none when the service runs without tokens. */
  token?: string;
  /** The project of every call (multi-project mode), sent as X-Project-Id. */
  project?: string;
  /** Another fetch (a test double, a proxy agent); default the global fetch. */
  fetch?: (input: Request) => Promise<Response>;
}

export interface ToolgateClient extends Client<paths> {
  /** Calls a tool; every answer, error or not, comes back as its envelope (never thrown). */
  callTool<N extends ToolName>(name: N, args: ToolArgs<N>, options?: ToolCallOptions): Promise<ToolCallResult<N>>;
  /** The tools this caller may use (GET /v1/tools). */
  listTools(): Promise<ToolList>;
}

/** Thrown when the service answers something that is not its envelope (a proxy's error page, a network failure). */
export class ToolgateClientError extends Error {
  readonly httpStatus: number | undefined;
  constructor(message: string, httpStatus?: number) {
    super(message);
    this.name = 'ToolgateClientError';
    this.httpStatus = httpStatus;
  }
}

export function createToolgateClient(options: ToolgateClientOptions): ToolgateClient {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.project !== undefined) headers['x-project-id'] = options.project;
  const client = createClient<paths>({ baseUrl: options.baseUrl, headers, ...(options.fetch && { fetch: options.fetch }) });

  async function callTool<N extends ToolName>(name: N, args: ToolArgs<N>, call: ToolCallOptions = {}): Promise<ToolCallResult<N>> {
    const header: Record<string, string> = {};
    if (call.ifMatch !== undefined) header['if-match'] = call.ifMatch;
    if (call.waitSeconds !== undefined) header.prefer = `wait=${call.waitSeconds}`;
    if (call.switches !== undefined) header['x-toolgate-switches'] = call.switches;
    if (call.turn !== undefined) header['toolgate-turn'] = call.turn;
    // One generic call for every tool: TypeScript cannot pick the operation of a name not yet known, so
    // the typing is checked at callTool's signature and the union it returns, not here.
    const post = client.POST as unknown as (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const { data, error, response } = await post(`/v1/tools/${name}`, { body: args, params: { header }, signal: call.signal });
    const envelope = (data ?? error) as { status?: unknown } | undefined;
    if (typeof envelope?.status !== 'string') throw new ToolgateClientError(`Not a toolgate envelope (HTTP ${response.status}).`, response.status);
    if (envelope.status === 'error') return { kind: 'error', httpStatus: response.status, envelope: envelope as ErrorEnvelope, etag: undefined };
    if (response.status === 202) return { kind: 'pending', httpStatus: 202, envelope: envelope as PendingApprovalEnvelope, etag: undefined };
    return { kind: 'success', httpStatus: 200, envelope: envelope as ToolSuccessEnvelope<N>, etag: response.headers.get('etag') ?? undefined };
  }

  async function listTools(): Promise<ToolList> {
    const { data, response } = await client.GET('/v1/tools', { params: { query: { format: 'toolgate' } } });
    if (!data || Array.isArray(data) || !data.tools.every((t) => 'risk' in t)) throw new ToolgateClientError(`GET /v1/tools answered HTTP ${response.status}.`, response.status);
    return data as ToolList;
  }

  return Object.assign(client, { callTool, listTools });
}
