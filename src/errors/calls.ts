// The catalogue's errors of a request and a call around the tool: what the HTTP doors refuse before a tool
// runs (body, headers, routes), and what the pipeline answers (unknown tool, arguments, time limit, a client
// gone). src/errors.ts says how to add one.
import { ToolError } from './tool-error.js';

export const callErrors = {
  bodyOverLimit: () => new ToolError('FILE_TOO_LARGE', 'Request body is over the size limit (TOOLGATE_BODY_LIMIT_BYTES); send less content per call.'),
  /** A 413 that Fastify's error carries without its code. */
  bodyOverSizeLimit: () => new ToolError('FILE_TOO_LARGE', 'Request body is over the size limit.'),
  bodyNotJsonMediaType: () => new ToolError('INVALID_PARAM', 'Send the tool arguments as application/json.'),
  bodyEmpty: () => new ToolError('INVALID_PARAM', 'The request body is empty; send a JSON object of tool arguments.'),
  bodyNotJson: () => new ToolError('INVALID_PARAM', 'The request body is not valid JSON.'),
  requestInvalid: (message: string) => new ToolError('INVALID_PARAM', `Invalid request: ${message}`),
  requestFailed: () => new ToolError('EXECUTION_ERROR', 'Internal error; the request was not completed.'),
  headersOverLimit: () => new ToolError('FILE_TOO_LARGE', 'The request headers are over the size limit; send fewer or shorter headers.'),
  requestTimedOut: () => new ToolError('INVALID_PARAM', 'The request did not arrive in time; send it again.'),
  requestNotHttp: () =>
    new ToolError('INVALID_PARAM', 'The request is not valid HTTP (e.g. a control character in a header value such as X-Request-Id); send printable header values.'),
  /** `url` is the request's path, shortened. */
  routeNameTooLong: (url: string) => new ToolError('NOT_FOUND', `No tool or project at '${url}' (a name is at most 100 characters); GET /v1/tools lists the available tools.`),
  urlNotDecodable: (url: string) => new ToolError('INVALID_PARAM', `The URL '${url}' does not decode (bad percent-encoding); encode it and retry.`),
  routeUnroutable: (url: string) => new ToolError('INVALID_PARAM', `The request to '${url}' could not be routed; tools are called with POST /v1/tools/{tool}.`),
  routeNotFound: (method: string, url: string) => new ToolError('NOT_FOUND', `No route ${method} ${url}; tools are called with POST /v1/tools/{tool}.`),
  projectHeaderMismatch: () => new ToolError('INVALID_PARAM', 'The X-Project-Id header names another project than the URL; send one of them.'),
  attachmentNotFound: () =>
    new ToolError('NOT_FOUND', 'No such attachment for this caller and project (attachments expire after TOOLGATE_ATTACHMENT_RETENTION_S); read the document again.'),
  authBlocked: (waitS: number) => new ToolError('RATE_LIMITED', `Too many failed authentications from this address; retry in ${waitS} s.`, { retry_after_s: waitS }),
  /** `name` is the name as called, shortened; `tools` the list of tool names. */
  toolUnknown: (name: string, tools: string) => new ToolError('NOT_FOUND', `Unknown tool '${name}'; the tools are: ${tools}.`),
  toolNotOffered: (tool: string) => new ToolError('NOT_FOUND', `Tool '${tool}' is not offered by this service (off in its settings; docs/run-command.md for run_command).`),
  argumentsNotObject: () => new ToolError('INVALID_PARAM', 'The request body must be a JSON object of tool arguments.'),
  approvalIdNotString: () => new ToolError('INVALID_PARAM', "Invalid parameter 'approval_id': expected the id of an approval request (apr_…)."),
  /** `message` names what was wrong and what the tool accepts (src/pipeline/arguments.ts). */
  argumentsInvalid: (message: string, issues: { path: string; message: string }[]) => new ToolError('INVALID_PARAM', message, { issues }),
  clientGone: (tool: string) => new ToolError('EXECUTION_ERROR', `The client went away; tool '${tool}' was stopped.`),
  toolTimedOut: (tool: string, timeoutMs: number) =>
    new ToolError('TIMEOUT', `Tool '${tool}' ran longer than ${timeoutMs} ms; narrow the request (path, line range, limit) and retry.`),
};
