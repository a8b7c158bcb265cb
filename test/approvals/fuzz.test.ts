// Approval ids and records an attacker controls, through the routes and the repeat (issue 14): random and
// malformed ids are answered 4xx, never 5xx, never run anything; a record altered on disk is refused
// everywhere, and nothing in the workspace is written.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agent, approvalOf, makePolicyApp, person, type PolicyApp } from './approval-helpers.js';

const POLICY = 'rules:\n  - paths: [SOUL.md]\n    risks: [write]\n    action: ask\n';
const edit = { path: 'SOUL.md', old_text: 'kind', new_text: 'cruel' };

let t: PolicyApp;
afterEach(async () => t?.close());

/** A deterministic generator, so a failure names a reproducible case. */
function* ids(seed: number): Generator<string> {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31);
  const alphabet = 'abcAZ09_-/.%?#&=:;\\\'"<>{}[]~`! \t';
  yield 'apr_';
  yield `apr_${'A'.repeat(22)}`;
  yield `apr_${'A'.repeat(23)}`;
  yield `APR_${randomBytes(16).toString('base64url')}`;
  yield '../approvals/x';
  yield '%2e%2e%2fapproval-secret';
  yield 'approval-secret';
  yield 'x'.repeat(99);
  for (let i = 0; i < 150; i++) {
    const kind = next() % 3;
    if (kind === 0) yield `apr_${randomBytes(16).toString('base64url')}`; // well-formed, unknown
    else {
      let s = kind === 1 ? 'apr_' : '';
      const len = next() % 40;
      for (let j = 0; j < len; j++) s += alphabet[next() % alphabet.length];
      yield s;
    }
  }
}

async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out[path.join(e.parentPath, e.name)] = await fs.readFile(path.join(e.parentPath, e.name), 'utf8');
  }
  return out;
}

describe('fuzzed approval ids', () => {
  it('routes and the repeat answer 4xx for every id, and nothing runs', async () => {
    t = await makePolicyApp(POLICY);
    await fs.writeFile(t.file('SOUL.md'), 'I am kind.\n');
    const real = approvalOf((await t.as(agent, 'edit_file', edit)).body);
    const before = await snapshot(t.root);
    for (const id of ids(7)) {
      const enc = encodeURIComponent(id);
      for (const [method, url] of [
        ['GET', `/v1/approvals/${enc}`],
        ['POST', `/v1/approvals/${enc}/approve`],
        ['POST', `/v1/approvals/${enc}/reject`],
      ] as const) {
        const res = await t.app.inject({ method, url, headers: person.header, ...(method === 'POST' && { payload: {} }) });
        expect(res.statusCode, `${method} ${url}`).toBeGreaterThanOrEqual(400);
        expect(res.statusCode, `${method} ${url}`).toBeLessThan(500);
      }
      const repeat = await t.as(agent, 'edit_file', { ...edit, approval_id: id });
      expect([400, 410], id).toContain(repeat.status);
    }
    expect(await snapshot(t.root)).toEqual(before);
    // The real request is untouched by all of that.
    expect((await t.get(person, `/v1/approvals/${real.id}`)).json.approval).toMatchObject({ status: 'pending' });
    // Non-string approval ids are a schema error (null means "not given", as for every optional argument).
    for (const bad of [1, true, ['apr_x'], { id: real.id }]) expect((await t.as(agent, 'edit_file', { ...edit, approval_id: bad })).status).toBe(400);
  });
});

describe('tampered records', () => {
  it('an approval altered on disk is refused by the routes and the repeat; nothing is written', async () => {
    t = await makePolicyApp(POLICY);
    await fs.writeFile(t.file('SOUL.md'), 'I am kind.\n');
    const stateDir = t.app.toolgate.config.stateDir as string;
    const cases: ((text: string) => string)[] = [
      (text) => text.replace('"status":"pending"', '"status":"approved"'),
      (text) => text.replace('"caller":"agent"', '"caller":"person"'),
      (text) => text.replace(/"sig":"([0-9a-f])/, (_m, c: string) => `"sig":"${c === '0' ? '1' : '0'}"`),
      (text) => text.replace(/"args_hash":"[0-9a-f]+"/, `"args_hash":"${'0'.repeat(64)}"`),
      () => '{"not":"a record"}',
      () => '',
    ];
    for (const change of cases) {
      const a = approvalOf((await t.as(agent, 'edit_file', edit)).body);
      const file = path.join(stateDir, 'approvals', `${a.id}.json`);
      await fs.writeFile(file, change(await fs.readFile(file, 'utf8')));
      const before = await snapshot(t.root);
      expect((await t.get(person, `/v1/approvals/${a.id}`)).status).toBe(404);
      expect(((await t.get(person, '/v1/approvals')).json.approvals as { id: string }[]).map((x) => x.id)).not.toContain(a.id);
      expect((await t.decide(person, a.id, 'approve')).status).toBeGreaterThanOrEqual(400);
      const repeat = await t.as(agent, 'edit_file', { ...edit, approval_id: a.id });
      expect([400, 410]).toContain(repeat.status);
      expect(await fs.readFile(t.file('SOUL.md'), 'utf8')).toBe('I am kind.\n');
      expect(await snapshot(t.root)).toEqual(before);
    }
  });
});
