// Elicitation over the stateless Streamable HTTP door (docs/approvals.md): a client that declared elicitation gets a
// marked session id from initialize, its tools/call that needs approval is answered as an SSE stream that
// carries an elicitation/create request named after the approval, and the client's answer (a new POST, to any
// replica) decides the request in the shared store, where the waiting call sees it.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { agent, EXAMPLES, ide, makePolicyApp, person, reader, type PolicyApp } from '../approvals/approval-helpers.js';
import { makeTempDir, pathExists } from '../helpers.js';
import { envelopeOf, httpClient, mcpUrl, textOf } from './mcp-helpers.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
});

const exists = pathExists;

interface Asked {
  params: ElicitRequest['params'];
  requestId: RequestId;
}

/** A client with form elicitation whose person answers with `answer` (in order), recording what it was asked. */
async function elicitingClient(url: string, headers: Record<string, string>, answer: (asked: Asked) => ElicitResult | Promise<ElicitResult>, fetchFn?: typeof fetch) {
  const asked: Asked[] = [];
  const client = await httpClient(url, headers, { capabilities: { elicitation: {} } }, fetchFn ? { fetch: fetchFn } : {}, (c: Client) =>
    c.setRequestHandler(ElicitRequestSchema, (req, extra) => {
      const one = { params: req.params, requestId: extra.requestId };
      asked.push(one);
      return answer(one);
    }),
  );
  cleanup.push(() => client.close());
  return { client, asked, sessionId: (client.transport as StreamableHTTPClientTransport).sessionId };
}

async function arrange(env: Record<string, string> = {}): Promise<{ t: PolicyApp; url: string }> {
  const t = await makePolicyApp('ide.yaml', env);
  cleanup.push(() => t.close());
  return { t, url: await mcpUrl(t.app) };
}

const approvalIdOf = (asked: Asked) => String(asked.requestId).replace(/^toolgate-approval:/, '');

describe('MCP over Streamable HTTP: elicitation', () => {
  it('approve: the person is asked on the call\'s stream, the call runs and the file changes', async () => {
    const { t, url } = await arrange();
    const { client, asked, sessionId } = await elicitingClient(url, ide.header, () => ({ action: 'accept', content: { decision: 'approve' } }));
    // The marked session id stands in for the capability; the stateless transport does not check it.
    expect(sessionId).toMatch(/^tg-e1-/);

    const result = await client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'approved line\n' } });
    expect(envelopeOf(result)).toMatchObject({ status: 'success', data: { applied: true } });
    expect(await fs.readFile(t.file('a.txt'), 'utf8')).toBe('approved line\n');

    expect(asked).toHaveLength(1);
    const [first] = asked as [Asked];
    expect(String(first.requestId)).toMatch(/^toolgate-approval:/);
    const params = first.params as { message: string; requestedSchema: { properties: Record<string, unknown>; required?: string[] } };
    expect(params.message).toContain('write_file on a.txt');
    expect(params.message).toContain('+approved line');
    expect(params.message).toContain(approvalIdOf(first));
    expect(Object.keys(params.requestedSchema.properties)).toEqual(['decision', 'reason']);
    expect(params.requestedSchema.required).toEqual(['decision']);
    // Decided by the client's own token, once; then used by the call.
    const record = await t.app.toolgate.policy.get(null, approvalIdOf(first));
    expect(record).toMatchObject({ status: 'used', decided_by: 'ide' });
  });

  it('reject (with a reason) and decline refuse the call with USER_REJECTED and change nothing', async () => {
    const { t, url } = await arrange();
    const answers: ElicitResult[] = [{ action: 'accept', content: { decision: 'reject', reason: 'not in this file' } }, { action: 'decline' }];
    const { client, asked } = await elicitingClient(url, ide.header, () => answers.shift() ?? { action: 'cancel' });

    const rejected = await client.callTool({ name: 'write_file', arguments: { path: 'b.txt', content: 'x\n' } });
    expect(rejected.isError).toBe(true);
    expect(envelopeOf(rejected).error).toMatchObject({ code: 'USER_REJECTED' });
    expect(textOf(rejected)).toContain('not in this file');
    expect(await exists(t.file('b.txt'))).toBe(false);

    const declined = await client.callTool({ name: 'write_file', arguments: { path: 'c.txt', content: 'x\n' } });
    expect(envelopeOf(declined).error?.code).toBe('USER_REJECTED');
    expect(await exists(t.file('c.txt'))).toBe(false);
    expect(asked).toHaveLength(2);
  });

  it('cancel decides nothing: after the wait the call answers pending with its approval_id', async () => {
    // The shortest wait the settings allow, so that the test does not sit out the 30 s.
    const { t, url } = await arrange({ TOOLGATE_APPROVAL_MAX_WAIT_S: '1' });
    const { client, asked } = await elicitingClient(url, ide.header, () => ({ action: 'cancel' }));
    const result = await client.callTool({ name: 'write_file', arguments: { path: 'd.txt', content: 'x\n' } });
    expect(result.isError).toBe(false);
    const env = envelopeOf(result);
    expect(env).toMatchObject({ status: 'partial', data: { applied: false, approval: { status: 'pending' } } });
    const id = (env.data as { approval: { id: string } }).approval.id;
    expect(approvalIdOf(asked[0] as Asked)).toBe(id);
    expect(textOf(result)).toContain(`"approval_id": "${id}"`);
    expect(await exists(t.file('d.txt'))).toBe(false);
  });

  it('a client without elicitation gets a plain session id (never asked) and the pending answer', async () => {
    const { url } = await arrange();
    const client = await httpClient(url, ide.header);
    cleanup.push(() => client.close());
    expect((client.transport as StreamableHTTPClientTransport).sessionId).toMatch(/^tg-s1-/);
    const result = await client.callTool({ name: 'write_file', arguments: { path: 'e.txt', content: 'x\n' } });
    expect(envelopeOf(result)).toMatchObject({ status: 'partial', data: { approval: { status: 'pending' } } });
  });

  it('a forged answer from a token that may not decide is ACCESS_DENIED and leaves the request pending', async () => {
    const { t, url } = await arrange();
    const forged: { status: number; body: { error?: { data?: { code?: string } } } }[] = [];
    const statusAfter: string[] = [];
    const { client, sessionId } = await elicitingClient(url, ide.header, async (asked) => {
      // Another caller (no approve risk) posts an answer to the same request, with the same session id.
      for (const token of [agent, reader]) {
        const res = await fetch(url, {
          method: 'POST',
          headers: { ...token.header, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId ?? '' },
          body: JSON.stringify({ jsonrpc: '2.0', id: asked.requestId, result: { action: 'accept', content: { decision: 'approve' } } }),
        });
        forged.push({ status: res.status, body: (await res.json()) as { error?: { data?: { code?: string } } } });
      }
      statusAfter.push((await t.app.toolgate.policy.get(null, approvalIdOf(asked))).status);
      return { action: 'accept', content: { decision: 'reject', reason: 'not by them' } };
    });
    const result = await client.callTool({ name: 'write_file', arguments: { path: 'f.txt', content: 'x\n' } });
    expect(forged.map((f) => [f.status, f.body.error?.data?.code])).toEqual([
      [403, 'ACCESS_DENIED'],
      [403, 'ACCESS_DENIED'],
    ]);
    expect(statusAfter).toEqual(['pending']);
    expect(envelopeOf(result).error?.code).toBe('USER_REJECTED');
    expect(await exists(t.file('f.txt'))).toBe(false);
  });

  it('a token that may not decide its own calls is not asked, even with elicitation declared', async () => {
    const { t, url } = await arrange();
    const { client, asked } = await elicitingClient(url, agent.header, () => ({ action: 'accept', content: { decision: 'approve' } }));
    const result = await client.callTool({ name: 'write_file', arguments: { path: 'g.txt', content: 'x\n' } });
    expect(envelopeOf(result)).toMatchObject({ status: 'partial', data: { approval: { status: 'pending' } } });
    expect(asked).toHaveLength(0);
    expect(await exists(t.file('g.txt'))).toBe(false);
  });
});

describe('MCP over Streamable HTTP: elicitation across two replicas', () => {
  /** Two apps on one workspace and one state directory (the shared volume), each listening on its own port. */
  async function twoReplicas(): Promise<{ root: string; a: FastifyInstance; urlA: string; urlB: string }> {
    const dir = await makeTempDir('toolgate-mcp-replicas-');
    const root = path.join(dir, 'ws');
    await fs.mkdir(root);
    const env = {
      TOOLGATE_ROOT: root,
      TOOLGATE_STATE_DIR: path.join(dir, 'state'),
      TOOLGATE_POLICY: path.join(EXAMPLES, 'ide.yaml'),
      TOOLGATE_AUDIT_STDOUT: 'false',
      TOOLGATE_RATE_LIMIT: '0',
    };
    const tokens = [agent, person, ide, reader].map((x) => x.entry);
    const a = await buildApp(loadConfig({ ...env, TOOLGATE_INSTANCE_ID: 'a' }), { tokens });
    const b = await buildApp(loadConfig({ ...env, TOOLGATE_INSTANCE_ID: 'b' }), { tokens });
    cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
    cleanup.push(() => a.close());
    cleanup.push(() => b.close());
    return { root, a, urlA: await mcpUrl(a), urlB: await mcpUrl(b) };
  }

  it('the answer posted to replica B releases the call held on replica A, approved', async () => {
    const { root, a, urlA, urlB } = await twoReplicas();
    const sentTo = { a: [] as string[], b: [] as string[] };
    // A load balancer in miniature: the client's answers (JSON-RPC responses) go to B, everything else to A.
    const balancer: typeof fetch = async (input, init) => {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : null;
      const toB = body !== null && !('method' in body) && ('result' in body || 'error' in body);
      const label = `${init?.method ?? 'GET'} ${typeof body?.method === 'string' ? body.method : String(body?.id ?? '')}`;
      (toB ? sentTo.b : sentTo.a).push(label);
      return fetch(toB ? urlB : input, init);
    };
    const { client, asked } = await elicitingClient(urlA, ide.header, () => ({ action: 'accept', content: { decision: 'approve', reason: 'fine' } }), balancer);

    const result = await client.callTool({ name: 'write_file', arguments: { path: 'h.txt', content: 'from two replicas\n' } });
    expect(envelopeOf(result)).toMatchObject({ status: 'success', data: { applied: true } });
    expect(await fs.readFile(path.join(root, 'h.txt'), 'utf8')).toBe('from two replicas\n');
    expect(asked).toHaveLength(1);
    expect(sentTo.b).toEqual([`POST ${String((asked[0] as Asked).requestId)}`]);
    expect(sentTo.a).toContain('POST tools/call');
    const record = await a.toolgate.policy.get(null, approvalIdOf(asked[0] as Asked));
    expect(record).toMatchObject({ status: 'used', decided_by: 'ide', reason: 'fine' });
  });
});
