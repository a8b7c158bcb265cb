// An approved call whose repeat cannot apply because its files moved on (issue 36 point 3): the repeat answers
// CONFLICT naming the files, as the README's table says of a changed file, and the approval stays usable until
// it expires or a repeat applies; the repeat that applies uses it up. On both stores, over REST.
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startRedis, type RedisServer } from '../ops/redis-server.js';
import { agent, approvalOf, makePolicyApp, person, type PolicyApp } from './approval-helpers.js';

let t: PolicyApp | undefined;
let redis: RedisServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await redis?.kill();
  redis = undefined;
});

const PATCH = '*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch\n';

/** a.txt and b.txt, and an approved patch of both (a.txt asks first, so the record's file_version is a.txt's). */
async function approvedPatch(env: Record<string, string> = {}): Promise<{ app: PolicyApp; id: string }> {
  const app = await makePolicyApp('ide.yaml', env);
  t = app;
  await fs.writeFile(app.file('a.txt'), 'a\n');
  await fs.writeFile(app.file('b.txt'), 'b\n');
  const asked = await app.as(agent, 'apply_patch', { patch: PATCH });
  expect(asked.status).toBe(202);
  const { id, path } = approvalOf(asked.body);
  expect(path).toBe('a.txt');
  expect((await app.decide(person, id, 'approve')).status).toBe(200);
  return { app, id };
}

async function removedFileThenBack(env: Record<string, string> = {}) {
  const { app, id } = await approvedPatch(env);
  await fs.rm(app.file('b.txt'));

  const refused = await app.as(agent, 'apply_patch', { patch: PATCH, approval_id: id });
  expect(refused.status, JSON.stringify(refused.body.error)).toBe(409);
  expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { approval_id: id, mismatch: 'files', files: [{ path: 'b.txt', current: null }], approval_kept: true } });
  expect(refused.body.error?.message).toContain('b.txt (gone)');
  expect(await fs.readFile(app.file('a.txt'), 'utf8')).toBe('a\n');
  // Nothing happened, so nothing was used up: the same answer again, not "already used".
  const again = await app.as(agent, 'apply_patch', { patch: PATCH, approval_id: id });
  expect(again.body.error?.code).toBe('CONFLICT');
  expect(((await app.get(person, `/v1/approvals/${id}`)).json.approval as { status: string }).status).toBe('approved');

  // The file is back as the person saw it: the repeat applies, once.
  await fs.writeFile(app.file('b.txt'), 'b\n');
  const applied = await app.as(agent, 'apply_patch', { patch: PATCH, approval_id: id });
  expect(applied.status, JSON.stringify(applied.body.error)).toBe(200);
  expect(await fs.readFile(app.file('a.txt'), 'utf8')).toBe('A\n');
  expect(await fs.readFile(app.file('b.txt'), 'utf8')).toBe('B\n');
  const spent = await app.as(agent, 'apply_patch', { patch: PATCH, approval_id: id });
  expect(spent.status).toBe(410);
  expect(spent.body.error?.message).toMatch(/was already used/);

  await vi.waitFor(() => expect(app.audit().filter((l) => l.approval_id === id)).toHaveLength(6));
  const events = app.audit().filter((l) => l.approval_id === id).map((l) => `${String(l.event)}${l.approval_kept === true ? ' (kept)' : ''}`);
  expect(events).toEqual(['approval_requested', 'approval_approved', 'approval_refused (kept)', 'approval_refused (kept)', 'approval_used', 'approval_refused']);
}

describe('a repeat whose files moved on since the approval', () => {
  it('a file of the patch removed: CONFLICT naming it, the approval kept until a repeat applies (files store)', async () => {
    await removedFileThenBack();
  });

  it('the same on the Redis store', async () => {
    redis = await startRedis();
    await removedFileThenBack({ TOOLGATE_REDIS_URL: redis.url, TOOLGATE_APPROVAL_SECRET: 'a-secret-of-enough-length' });
  });

  it("a file's approved lines edited away: CONFLICT naming it as changed, and the approval kept", async () => {
    const { app, id } = await approvedPatch();
    await fs.writeFile(app.file('b.txt'), 'something else\n');
    const refused = await app.as(agent, 'apply_patch', { patch: PATCH, approval_id: id });
    expect(refused.status, JSON.stringify(refused.body.error)).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { mismatch: 'files', files: [{ path: 'b.txt' }] } });
    expect(refused.body.error?.message).toContain('b.txt (changed)');
    await fs.writeFile(app.file('b.txt'), 'b\n');
    expect((await app.as(agent, 'apply_patch', { patch: PATCH, approval_id: id })).status).toBe(200);
  });

  it('a plan that differs from the approved one (CONFLICT, mismatch changes) keeps the approval too', async () => {
    const { app, id } = await approvedPatch();
    // The hunk still applies to b.txt, but would now leave other content than the person saw.
    await fs.writeFile(app.file('b.txt'), 'b\nmore\n');
    const refused = await app.as(agent, 'apply_patch', { patch: PATCH, approval_id: id });
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { mismatch: 'changes' } });
    expect(await fs.readFile(app.file('a.txt'), 'utf8')).toBe('a\n');
    await fs.writeFile(app.file('b.txt'), 'b\n');
    expect((await app.as(agent, 'apply_patch', { patch: PATCH, approval_id: id })).status).toBe(200);
    expect((await app.as(agent, 'apply_patch', { patch: PATCH, approval_id: id })).status).toBe(410);
  });
});
