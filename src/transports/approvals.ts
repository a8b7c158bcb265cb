// Approval routes (docs/approvals.md): list and read requests, approve or reject one with a reason. Thin: the rules of
// who may see and decide live in src/policy/approval-operations.ts, the record's life cycle in src/policy/approvals.ts and its
// fields in src/policy/approval-record.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ErrorEnvelopeSchema } from '../envelope.js';
import { E } from '../errors.js';
import { isLoopbackHost } from '../ops/auth.js';
import type { PolicyService } from '../pipeline/policy-gate.js';
import { APPROVAL_ID, APPROVAL_STATUSES, ApprovalSchema } from '../policy/approval-record.js';
import { approvalView } from '../policy/approval-view.js';
import { noValidation, plainJson } from './route-compilers.js';

export interface ApprovalsOptions {
  policy: PolicyService;
  authEnabled: boolean;
}

// Refusals (ACCESS_DENIED, NOT_FOUND, CONFLICT, APPROVAL_EXPIRED) are the standard error envelope.
const refused = { '4XX': ErrorEnvelopeSchema.describe('error envelope') };
const DecisionBody = z.object({ reason: z.string().max(2000).optional().describe('Why; a rejection reason reaches the model.') }).nullable().optional();
const IdParams = z.object({ id: z.string().max(100) });

export async function registerApprovals(app: FastifyInstance, opts: ApprovalsOptions): Promise<void> {
  const { policy } = opts;
  // Without tokens the service listens on loopback only; a proxied request from elsewhere still may not decide.
  const assertMayAccess = (req: FastifyRequest) => {
    if (!opts.authEnabled && !isLoopbackHost(req.ip)) throw E.approvalsLoopbackOnly();
  };
  const idOf = (req: FastifyRequest) => {
    const { id } = req.params as { id: string };
    if (!APPROVAL_ID.test(id)) throw E.approvalRequestNotFound();
    return id;
  };
  const common = { serializerCompiler: plainJson, tags: ['approvals'] };

  app.get(
    '/v1/approvals',
    {
      serializerCompiler: plainJson,
      schema: {
        summary: 'List approval requests',
        description: 'Requests this caller may see (a token with `approve`: all of its projects; any other token: its own), oldest first.',
        tags: common.tags,
        querystring: z.object({ status: z.enum(APPROVAL_STATUSES).optional() }),
        response: { 200: z.object({ approvals: z.array(ApprovalSchema) }), ...refused },
      },
    },
    async (req) => {
      assertMayAccess(req);
      const { status } = req.query as { status?: (typeof APPROVAL_STATUSES)[number] };
      return { approvals: (await policy.list(req.principal, status)).map(approvalView) };
    },
  );

  app.get(
    '/v1/approvals/:id',
    {
      serializerCompiler: plainJson,
      schema: { summary: 'Read one approval request', tags: common.tags, params: IdParams, response: { 200: z.object({ approval: ApprovalSchema }), ...refused } },
    },
    async (req) => {
      assertMayAccess(req);
      return { approval: approvalView(await policy.get(req.principal, idOf(req))) };
    },
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post(
      `/v1/approvals/:id/${decision}`,
      {
        serializerCompiler: plainJson,
        validatorCompiler: noValidation,
        schema: {
          summary: decision === 'approve' ? 'Approve a request' : 'Reject a request',
          description:
            'Needs a token with the `approve` risk class (without tokens: a loopback caller); a token decides its own request only when marked `self_approve`. Deciding twice is CONFLICT, an expired request APPROVAL_EXPIRED.',
          tags: common.tags,
          params: IdParams,
          body: DecisionBody,
          response: { 200: z.object({ approval: ApprovalSchema }), ...refused },
        },
      },
      async (req) => {
        assertMayAccess(req);
        const body = DecisionBody.safeParse(req.body);
        if (!body.success) throw E.approvalBodyInvalid();
        const record = await policy.decideRequest(req.principal, idOf(req), decision === 'approve' ? 'approved' : 'rejected', body.data?.reason ?? null);
        return { approval: approvalView(record) };
      },
    );
  }
}
