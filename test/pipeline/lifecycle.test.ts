// The lifecycle of a call (docs/development.md, "The lifecycle of a call"): each step refuses before the steps
// after it run, so a call that two steps would refuse is refused by the earlier one, and a refused step leaves
// the later ones untouched (a call refused by its risk costs no rate-limit budget). Metrics and audit count every call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePolicyApp, agent, person, type PolicyApp } from '../approvals/approval-helpers.js';

const POLICY = `rules:
  - name: secret
    paths: [secret.txt]
    action: deny
`;

describe('the steps of a call run in their order', () => {
  let t: PolicyApp;
  beforeAll(async () => {
    t = await makePolicyApp(POLICY, { TOOLGATE_RATE_LIMIT: '2', TOOLGATE_EXEC: 'off', TOOLGATE_AUDIT: 'true' });
  });
  afterAll(async () => t.close());

  it('1 before 3: a bad token is UNAUTHORIZED even for a tool that does not exist', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/tools/no_such_tool', payload: {}, headers: { authorization: 'Bearer tg_wrong' } });
    expect(r.json().error.code).toBe('UNAUTHORIZED');
  });

  it('4 before 6: arguments are checked before the risk (a read-only token sending a bad write)', async () => {
    const r = await t.as(person, 'write_file', { path: 'a.txt', content: 5 });
    expect(r.body.error?.code).toBe('INVALID_PARAM');
  });

  it('5 before 6: a tool the service does not offer is NOT_FOUND whatever the token may do', async () => {
    const r = await t.as(person, 'run_command', { command: 'true' });
    expect(r.body.error?.code).toBe('NOT_FOUND');
    expect(r.body.error?.message).toMatch(/not offered/);
  });

  it('6 before 7 before 8: a risk refusal costs no budget; past the budget even a denied path is RATE_LIMITED', async () => {
    const denied = await t.as(person, 'write_file', { path: 'a.txt', content: 'x' });
    expect(denied.body.error?.code).toBe('ACCESS_DENIED');
    expect(denied.body.error?.message).not.toMatch(/polic/i);
    // The agent's budget of 2: the first call meets the policy (8), the second runs, the third is refused at 7.
    const byPolicy = await t.as(agent, 'write_file', { path: 'secret.txt', content: 'x' });
    expect(byPolicy.body.error?.code).toBe('ACCESS_DENIED');
    expect(byPolicy.body.error?.message).toMatch(/secret/);
    expect((await t.as(agent, 'write_file', { path: 'b.txt', content: 'x' })).status).toBe(200);
    const limited = await t.as(agent, 'write_file', { path: 'secret.txt', content: 'x' });
    expect(limited.body.error?.code).toBe('RATE_LIMITED');
    // The person's budget was not spent by its refused write: two reads still pass.
    expect((await t.as(person, 'read_file', { path: 'b.txt' })).status).toBe(200);
    expect((await t.as(person, 'read_file', { path: 'b.txt' })).status).toBe(200);
    expect((await t.as(person, 'read_file', { path: 'b.txt' })).body.error?.code).toBe('RATE_LIMITED');
  });

  it('13 and 14: every refused step is counted and audited with its code', async () => {
    await t.app.toolgate.audit.flush();
    const codes = t
      .audit()
      .filter((l) => l.event === undefined || l.event === 'tool_call')
      .map((l) => l.error_code ?? null);
    expect(codes).toEqual(expect.arrayContaining(['UNAUTHORIZED', 'INVALID_PARAM', 'NOT_FOUND', 'ACCESS_DENIED', 'RATE_LIMITED', null]));
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const code of ['INVALID_PARAM', 'NOT_FOUND', 'ACCESS_DENIED', 'RATE_LIMITED']) expect(metrics).toContain(`code="${code}"`);
  });
});

describe('1: an admission counts only when the pipeline made it', () => {
  let t: PolicyApp;
  beforeAll(async () => {
    t = await makePolicyApp(POLICY, { TOOLGATE_AUDIT: 'true' });
  });
  afterAll(async () => t.close());

  it("the gate's admission stands for the token; a look-alike admission without one is UNAUTHORIZED", async () => {
    const { pipeline } = t.app.toolgate;
    const auth = pipeline.authenticate(agent.header.authorization, '127.0.0.1');
    const admitted = auth instanceof Promise ? await auth : auth;
    if (!admitted.ok) throw new Error('the agent token was refused');
    // The pipeline's own admission is taken as it is: no token is needed with it.
    const kept = await pipeline.executeTool({ authorization: undefined, admitted: admitted.admission, clientIp: '127.0.0.1' }, 'write_file', { path: 'kept.txt', content: 'x' });
    expect(kept.httpStatus).toBe(200);
    // The same shape made by anyone else, frozen or copied from the real one, is not.
    const forged = [{ principal: admitted.admission.principal }, Object.freeze({ principal: admitted.admission.principal }), Object.create(Object.getPrototypeOf(admitted.admission) as object) as object, { ...admitted.admission }];
    for (const admission of forged) {
      const r = await pipeline.executeTool({ authorization: undefined, admitted: admission as typeof admitted.admission, clientIp: '127.0.0.1' }, 'write_file', { path: 'forged.txt', content: 'x' });
      expect(r.envelope.error?.code).toBe('UNAUTHORIZED');
    }
    expect((await t.as(agent, 'read_file', { path: 'forged.txt' })).body.error?.code).toBe('NOT_FOUND');
  });
});
