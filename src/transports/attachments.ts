// GET /v1/attachments/{id} (and per project): the bytes of an attachment a tool returned (images extracted
// by read_docx / read_excel), for the caller and project that made it. Auth is the /v1 door's; every miss
// (unknown, expired, another caller's or project's id) is the same 404, so ids cannot be probed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { bareContext, ErrorEnvelopeSchema, errorEnvelope } from '../envelope.js';
import { E } from '../errors.js';
import { loadAttachment, ownerOf } from '../workspace/attachments.js';
import type { Pipeline } from '../pipeline/execute-tool.js';
import { restCaller, sendEnvelope } from './rest.js';
import { noValidation, plainJson } from './route-compilers.js';

export interface AttachmentRouteOptions {
  pipeline: Pipeline;
}

export async function registerAttachments(app: FastifyInstance, opts: AttachmentRouteOptions): Promise<void> {
  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const { id, projectId } = req.params as { id: string; projectId?: string };
    const call = await opts.pipeline.resolveCaller(restCaller(req, projectId));
    const found = await loadAttachment(call.ws, ownerOf({ actor: call.actor ?? null, clientIp: call.clientIp }), id);
    if (!found) {
      const e = E.attachmentNotFound();
      return sendEnvelope(reply, 404, errorEnvelope(bareContext(String(req.id)), e));
    }
    const { ref, data } = found;
    // Never rendered inline by a browser: the bytes come from an untrusted document.
    return reply
      .code(200)
      .header('content-type', ref.media_type)
      .header('content-disposition', `attachment; filename="${ref.name.replace(/[^A-Za-z0-9._-]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(ref.name)}`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'private, no-store')
      .send(data);
  };
  const schema = (withProject: boolean) => ({
    hide: withProject,
    summary: 'Fetch an attachment',
    description: 'The bytes of an attachment (an image read_docx or read_excel extracted), for the caller and project that read the document, until it expires (TOOLGATE_ATTACHMENT_RETENTION_S).',
    tags: ['attachments'],
    operationId: withProject ? 'project_get_attachment' : 'get_attachment',
    params: withProject ? z.object({ projectId: z.string(), id: z.string() }) : z.object({ id: z.string() }),
    response: {
      200: { description: 'The attachment bytes, with its media type as Content-Type.', content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } } },
      '4XX': ErrorEnvelopeSchema.describe('error envelope (404 for an unknown, expired or foreign id)'),
    },
  });
  const route = { validatorCompiler: noValidation, serializerCompiler: plainJson };
  app.get('/v1/attachments/:id', { ...route, schema: schema(false) }, handle);
  app.get('/v1/projects/:projectId/attachments/:id', { ...route, schema: schema(true) }, handle);
}
