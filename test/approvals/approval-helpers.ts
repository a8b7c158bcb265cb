// Helpers of the approval tests: an app with a policy (text or an example file) and tokens, and the calls a
// person makes on /v1/approvals.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Envelope } from '../../src/envelope.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { makeToken, type TestToken } from '../ops/ops-helpers.js';

export const EXAMPLES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../examples/policies');

export interface PolicyApp extends TestApp {
  audit: () => Record<string, unknown>[];
  as(token: TestToken | null, tool: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Envelope }>;
  get(token: TestToken | null, url: string): Promise<{ status: number; json: Record<string, unknown> }>;
  decide(token: TestToken | null, id: string, decision: 'approve' | 'reject', reason?: string): Promise<{ status: number; json: Record<string, unknown> }>;
}

export const agent = makeToken('agent', { risks: ['read', 'write', 'destructive'] });
export const person = makeToken('person', { risks: ['read', 'approve'] });
export const ide = { ...makeToken('ide', { risks: ['read', 'write', 'approve'] }) };
ide.entry = { ...ide.entry, self_approve: true };
export const reader = makeToken('reader', { risks: ['read', 'write'] });
/** An IDE that also deletes (apply_patch, delete_file) and shows its own dialog. */
export const ideAll = { ...makeToken('ide-all', { risks: ['read', 'write', 'destructive', 'approve'] }) };
ideAll.entry = { ...ideAll.entry, self_approve: true };

/** An app with `policy` (YAML text, or the name of an example in examples/policies) and the tokens above. */
export async function makePolicyApp(policy: string, env: Record<string, string> = {}, withTokens = true): Promise<PolicyApp> {
  const dir = await makeTempDir('toolgate-policy-');
  const file = policy.endsWith('.yaml') && !policy.includes('\n') ? path.join(EXAMPLES, policy) : path.join(dir, 'policy.yaml');
  if (file.startsWith(dir)) await fs.writeFile(file, policy);
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const t = await makeApp({ TOOLGATE_POLICY: file, TOOLGATE_STATE_DIR: path.join(dir, 'state'), ...env }, { auditStream: stream, ...(withTokens && { tokens: [agent, person, ide, reader, ideAll].map((x) => x.entry) }) });
  const auth = (token: TestToken | null): Record<string, string> => (token ? token.header : {});
  return {
    ...t,
    audit: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    async as(token, tool, body, headers = {}) {
      const res = await t.app.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body as object, headers: { ...auth(token), ...headers } });
      return { status: res.statusCode, body: res.json() as Envelope };
    },
    async get(token, url) {
      const res = await t.app.inject({ method: 'GET', url, headers: auth(token) });
      return { status: res.statusCode, json: res.json() as Record<string, unknown> };
    },
    async decide(token, id, decision, reason) {
      const res = await t.app.inject({ method: 'POST', url: `/v1/approvals/${id}/${decision}`, payload: reason === undefined ? {} : { reason }, headers: auth(token) });
      return { status: res.statusCode, json: res.json() as Record<string, unknown> };
    },
    async close() {
      await t.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

export function approvalOf(body: Envelope): { id: string; status: string; diff_preview: string; path: string; tool: string } {
  return (body.data as { approval: { id: string; status: string; diff_preview: string; path: string; tool: string } }).approval;
}
