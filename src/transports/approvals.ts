// Approval routes (docs/approvals.md): list and read requests, approve or reject one with a reason. Thin: the rules of
// who may see and decide live in src/ops/policy.ts, the record's life cycle in src/policy/approvals.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ErrorEnvelopeSchema } from '../envelope.js';
import { E } from '../errors.js';
import { isLoopbackHost } from '../ops/auth.js';
import { approvalView, type PolicyService } from '../ops/policy.js';
import { APPROVAL_ID, APPROVAL_STATUSES } from '../policy/approvals.js';
import { CHANGE_OPS } from '../tools/plan.js';

export interface ApprovalsOptions {
  policy: PolicyService;
  authEnabled: boolean;
}

const ChangeSchema = z
  .object({
    path: z.string().describe('The path changed; for a move or copy its source.'),
    op: z.enum(CHANGE_OPS),
    kind: z.enum(['file', 'directory']),
    from: z.string().optional().describe('Move or copy: the source.'),
    to: z.string().optional().describe('Move or copy: the destination.'),
    diff: z.string().describe("Unified diff of the content change ('' when the content stays as it is), cut at 100 lines or 10 KiB."),
    content: z.string().nullable().describe('A delete: the content that goes (cut like a diff); a directory moved: the entries it holds, one per line; null otherwise.'),
    truncated: z.boolean().describe('diff or content was cut.'),
    lines_added: z.number(),
    lines_removed: z.number(),
    sha256_before: z.string().nullable().describe('sha256 of the file before (null: new, or a directory).'),
    sha256_after: z.string().nullable().describe('sha256 of the file the change leaves (null: a delete, or a directory).'),
  })
  .meta({ id: 'ApprovalChange' });

const ApprovalSchema = z
  .object({
    id: z.string(),
    status: z.enum(APPROVAL_STATUSES),
    caller: z.string().nullable().describe('Token id that asked (null without auth).'),
    project: z.string().nullable(),
    tool: z.string(),
    path: z.string().nullable(),
    risk: z.enum(['read', 'write', 'destructive', 'execute']),
    risk_level: z.enum(['low', 'medium', 'high']),
    args_hash: z.string(),
    file_version: z.object({ mtime_ms: z.number(), size_bytes: z.number(), sha256: z.string().nullable() }).nullable(),
    summary: z.string(),
    diff_preview: z.string(),
    diff_truncated: z.boolean(),
    changes: z.array(ChangeSchema).describe('Every change the call makes, each with its operation and diff (a delete: the content that goes); diff_preview is their concatenation.'),
    changes_hash: z.string().nullable().describe('What the approval binds to: the repeat must plan these very changes, else CONFLICT. null for a call that changes no file.'),
    rule: z.object({ index: z.number(), name: z.string().optional() }).nullable(),
    ttl_ms: z.number(),
    created_at: z.string(),
    expires_at: z.string(),
    decided_at: z.string().nullable(),
    decided_by: z.string().nullable(),
    reason: z.string().nullable(),
    used_at: z.string().nullable(),
  })
  .meta({ id: 'Approval' });

// Refusals (ACCESS_DENIED, NOT_FOUND, CONFLICT, APPROVAL_EXPIRED) are the standard error envelope.
const refused = { '4XX': ErrorEnvelopeSchema.describe('error envelope') };
const DecisionBody = z.object({ reason: z.string().max(2000).optional().describe('Why; a rejection reason reaches the model.') }).nullable().optional();
const IdParams = z.object({ id: z.string().max(100) });
const plainJson = () => (data: unknown) => JSON.stringify(data);
const noValidation = () => (data: unknown) => ({ value: data });

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
