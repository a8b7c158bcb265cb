// Approvals over MCP (docs/approvals.md): a stdio client with elicitation decides in band (over HTTP see
// mcp-http-elicitation.test.ts); a client without it gets the pending answer and repeats the call with
// approval_id once a person decided. tools/list answers per caller like GET /v1/tools.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { agent, EXAMPLES, makePolicyApp, person, reader, type PolicyApp } from '../approvals/approval-helpers.js';
import { makeTempDir, pathExists } from '../helpers.js';
import { envelopeOf, httpClient, mcpUrl, stdioClient, textOf } from './mcp-helpers.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
});

const exists = pathExists;

/** A workspace and state directory for `toolgate mcp` under the IDE example policy (every write asks). */
async function stdioWorkspace(): Promise<{ root: string; env: Record<string, string> }> {
  const base = await makeTempDir('toolgate-mcp-');
  cleanup.push(() => fs.rm(base, { recursive: true, force: true }));
  const root = path.join(base, 'ws');
  await fs.mkdir(root);
  return { root, env: { TOOLGATE_POLICY: path.join(EXAMPLES, 'ide.yaml'), TOOLGATE_STATE_DIR: path.join(base, 'state') } };
}

function pendingIdOf(result: unknown): string {
  const env = envelopeOf(result);
  expect(env).toMatchObject({ status: 'partial', data: { applied: false, approval: { status: 'pending' } } });
  return (env.data as { approval: { id: string } }).approval.id;
}

describe('MCP over stdio: elicitation', () => {
  it('asks the person through elicitation: approve runs the call, reject/decline refuse it, cancel leaves it pending', async () => {
    const { root, env: base } = await stdioWorkspace();
    // No tokens on stdio: the client is asked only because the operator said so (docs/operations.md).
    const env = { ...base, TOOLGATE_SELF_APPROVE: 'true' };
    const answers: ElicitResult[] = [
      { action: 'accept', content: { decision: 'approve' } },
      { action: 'accept', content: { decision: 'reject', reason: 'not in this file' } },
      { action: 'decline' },
      { action: 'cancel' },
    ];
    const asked: ElicitRequest['params'][] = [];
    const { client } = await stdioClient(root, env, { capabilities: { elicitation: {} } }, (c: Client) =>
      c.setRequestHandler(ElicitRequestSchema, (req) => {
        asked.push(req.params);
        return answers.shift() ?? { action: 'cancel' };
      }),
    );
    cleanup.push(() => client.close());

    const approved = await client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'approved line\n' } });
    expect(envelopeOf(approved)).toMatchObject({ status: 'success', data: { applied: true } });
    expect(await fs.readFile(path.join(root, 'a.txt'), 'utf8')).toBe('approved line\n');
    // The person saw what would change: the summary, the tool and path, and the dry run's diff.
    const first = asked[0] as { message: string; requestedSchema: { properties: Record<string, unknown>; required?: string[] } };
    expect(first.message).toContain('write_file on a.txt');
    expect(first.message).toContain('+approved line');
    expect(first.requestedSchema.required).toEqual(['decision']);
    expect(Object.keys(first.requestedSchema.properties)).toEqual(['decision', 'reason']);

    const rejected = await client.callTool({ name: 'write_file', arguments: { path: 'b.txt', content: 'x\n' } });
    expect(rejected.isError).toBe(true);
    expect(envelopeOf(rejected).error).toMatchObject({ code: 'USER_REJECTED' });
    expect(textOf(rejected)).toContain('not in this file');
    expect(await exists(path.join(root, 'b.txt'))).toBe(false);

    const declined = await client.callTool({ name: 'write_file', arguments: { path: 'c.txt', content: 'x\n' } });
    expect(envelopeOf(declined).error?.code).toBe('USER_REJECTED');
    expect(await exists(path.join(root, 'c.txt'))).toBe(false);

    // Cancel is no decision: the request stays open and the model is told how to repeat the call.
    const cancelled = await client.callTool({ name: 'write_file', arguments: { path: 'd.txt', content: 'x\n' } });
    expect(cancelled.isError).toBe(false);
    const id = pendingIdOf(cancelled);
    expect(textOf(cancelled)).toContain(`"approval_id": "${id}"`);
    expect(await exists(path.join(root, 'd.txt'))).toBe(false);
    expect(asked).toHaveLength(4);
  }, 60_000);

  it('without the elicitation capability: the pending answer, then the repeat with approval_id once decided', async () => {
    const { root, env } = await stdioWorkspace();
    const { client } = await stdioClient(root, env);
    cleanup.push(() => client.close());

    // The listing says where the tool asks and offers approval_id to tools that change files.
    const { tools } = await client.listTools();
    const write = tools.find((t) => t.name === 'write_file');
    expect(write?.description).toMatch(/Asks for approval on: /);
    expect(write?.inputSchema.properties).toHaveProperty('approval_id');
    expect(tools.find((t) => t.name === 'read_file')?.inputSchema.properties).not.toHaveProperty('approval_id');

    const args = { path: 'e.txt', content: 'after approval\n' };
    const pending = await client.callTool({ name: 'write_file', arguments: args });
    const id = pendingIdOf(pending);
    expect(textOf(pending)).toContain(`call write_file again with the same arguments plus "approval_id": "${id}"`);
    expect(textOf(pending)).toContain('+after approval');
    expect(await exists(path.join(root, 'e.txt'))).toBe(false);

    // A person decides through the service that shares the stdio server's state directory.
    const app: FastifyInstance = await buildApp(loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', ...env }));
    cleanup.push(() => app.close());
    const early = await client.callTool({ name: 'write_file', arguments: { ...args, approval_id: id } });
    expect(pendingIdOf(early)).toBe(id);
    await app.toolgate.policy.decideRequest(null, id, 'approved', null);

    const done = await client.callTool({ name: 'write_file', arguments: { ...args, approval_id: id } });
    expect(envelopeOf(done)).toMatchObject({ status: 'success', data: { applied: true } });
    expect(await fs.readFile(path.join(root, 'e.txt'), 'utf8')).toBe('after approval\n');

    const bad = await client.callTool({ name: 'write_file', arguments: { ...args, approval_id: 42 } });
    expect(envelopeOf(bad).error?.code).toBe('INVALID_PARAM');
  }, 60_000);
});

describe('MCP over Streamable HTTP: approvals', () => {
  let t: PolicyApp;
  async function arrange(policy = 'ide.yaml'): Promise<string> {
    t = await makePolicyApp(policy);
    cleanup.push(() => t.close());
    return mcpUrl(t.app);
  }

  it('answers pending, a person decides on /v1/approvals, the repeat with approval_id runs (or is refused)', async () => {
    const url = await arrange();
    await fs.writeFile(t.file('notes.md'), 'old\n');
    const client = await httpClient(url, agent.header);
    cleanup.push(() => client.close());
    const args = { path: 'notes.md', old_text: 'old', new_text: 'new' };

    const pending = await client.callTool({ name: 'edit_file', arguments: args });
    const id = pendingIdOf(pending);
    expect(textOf(pending)).toContain(`call edit_file again with the same arguments plus "approval_id": "${id}"`);
    expect(await fs.readFile(t.file('notes.md'), 'utf8')).toBe('old\n');
    expect((await t.decide(person, id, 'approve')).status).toBe(200);
    const done = await client.callTool({ name: 'edit_file', arguments: { ...args, approval_id: id } });
    expect(envelopeOf(done).status).toBe('success');
    expect(await fs.readFile(t.file('notes.md'), 'utf8')).toBe('new\n');

    const again = await client.callTool({ name: 'edit_file', arguments: { path: 'notes.md', old_text: 'new', new_text: 'newer' } });
    const second = pendingIdOf(again);
    await t.decide(person, second, 'reject', 'keep it');
    const refused = await client.callTool({ name: 'edit_file', arguments: { path: 'notes.md', old_text: 'new', new_text: 'newer', approval_id: second } });
    expect(refused.isError).toBe(true);
    expect(envelopeOf(refused).error?.code).toBe('USER_REJECTED');
    expect(textOf(refused)).toContain('keep it');
    expect(await fs.readFile(t.file('notes.md'), 'utf8')).toBe('new\n');
  });

  it("lists only the caller's tools, with the policy's notes and the switches of X-Toolgate-Switches", async () => {
    const url = await arrange('switches:\n  memory:\n    default: off\nrules:\n  - tools: [web_search]\n    when: { memory: off }\n    action: deny\n  - paths: [SOUL.md]\n    risks: [write]\n    action: ask\n');
    const names = async (headers: Record<string, string>) => {
      const c = await httpClient(url, headers);
      const { tools } = await c.listTools();
      await c.close();
      return tools;
    };
    const forReader = await names(reader.header);
    expect(forReader.map((x) => x.name)).not.toContain('delete_file');
    expect(forReader.map((x) => x.name)).not.toContain('web_search');
    expect(forReader.find((x) => x.name === 'edit_file')?.description).toMatch(/Asks for approval on: SOUL\.md/);
    const forAgent = await names({ ...agent.header, 'x-toolgate-switches': 'memory=on' });
    expect(forAgent.map((x) => x.name)).toEqual(expect.arrayContaining(['delete_file', 'web_search']));
  });
});
