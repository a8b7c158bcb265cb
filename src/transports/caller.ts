// What every HTTP-based door (REST, MCP over HTTP, the WebSocket upgrade) reads off its request for the
// pipeline: the credentials, the gate's admission, the address, the project and switch headers, the id.
import type { FastifyRequest } from 'fastify';
import { credentialsOf } from '../ops/auth.js';
import { gateAdmission } from './http-gate.js';
import type { CallerInfo } from '../pipeline/execute-tool.js';

/** A header's value when it was sent once and is not empty. */
export const headerValue = (v: string | string[] | undefined): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The caller values of an HTTP request; each door adds what only it knows (If-Match, a call's id, a signal). */
export function httpCaller(req: FastifyRequest): CallerInfo {
  return {
    authorization: credentialsOf(req.headers),
    admitted: gateAdmission(req),
    clientIp: req.ip,
    projectId: headerValue(req.headers['x-project-id']),
    switches: req.headers['x-toolgate-switches'],
    requestId: String(req.id),
  };
}
