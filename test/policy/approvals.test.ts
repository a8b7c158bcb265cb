// The approval store in one process: the life cycle on both stores, binding checks, expiry, waiting, the
// secret, hostile ids and altered records.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { VersionStamp } from '../../src/envelope.js';
import {
  ApprovalError,
  ApprovalStoreImpl,
  argsHash,
  canonicalJson,
  isApprovalId,
  loadApprovalSecret,
  newApprovalId,
  openApprovalStore,
  RecordSigner,
  type ApprovalStore,
  type NewApproval,
} from '../../src/policy/approvals.js';
import { FileApprovalBackend } from '../../src/policy/approvals-file.js';
import { makeTempDir } from '../helpers.js';
import { startRedis, type RedisServer } from '../ops/redis-server.js';

const V1: VersionStamp = { mtime_ms: 1000, size_bytes: 8, sha256: 'a'.repeat(64) };
const V2: VersionStamp = { mtime_ms: 2000, size_bytes: 9, sha256: 'b'.repeat(64) };
const ARGS = { path: 'SOUL.md', content: 'new persona\n' };
const TTL = 60_000;

function request(over: Partial<NewApproval> = {}): NewApproval {
  return {
    caller: 'agent',
    project: null,
    tool: 'write_file',
    path: 'SOUL.md',
    risk: 'write',
    risk_level: 'high',
    args_hash: argsHash(ARGS),
    file_version: V1,
    summary: "Overwrite 'SOUL.md'",
    diff_preview: '-old\n+new\n',
    diff_truncated: false,
    rule: { index: 1, name: 'soul' },
    ttlMs: TTL,
    ...over,
  };
}
const binding = { caller: 'agent', project: null, tool: 'write_file', args_hash: argsHash(ARGS) };

async function rejection(p: Promise<unknown>): Promise<ApprovalError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApprovalError);
    return err as ApprovalError;
  }
  throw new Error('expected a refusal');
}

/** Every file under dir with its bytes' hash: to show that nothing was written. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(e.parentPath, e.name);
    const rel = path.relative(dir, full);
    out[rel] = e.isFile() ? createHash('sha256').update(await fs.readFile(full)).digest('hex') : e.isDirectory() ? 'dir' : 'other';
  }
  return out;
}

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.kill();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Clock {
  now: number;
}

async function openStore(kind: 'files' | 'redis', clock?: Clock): Promise<{ store: ApprovalStore; stateDir: string; base: string }> {
  const base = await makeTempDir();
  const stateDir = path.join(base, 'state');
  const store = await openApprovalStore({
    stateDir,
    ...(kind === 'redis' && { redisUrl: redis.url, redisPrefix: `t${randomBytes(4).toString('hex')}:{approvals}:` }),
    ...(clock && { now: () => clock.now }),
  });
  cleanups.push(async () => {
    await store.close();
    await fs.rm(base, { recursive: true, force: true });
  });
  return { store, stateDir, base };
}

describe('canonical arguments', () => {
  it('sorts keys at every depth and leaves out approval_id', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: null, y: 'x' }], c: true } })).toBe('{"a":{"c":true,"d":[1,{"y":"x","z":null}]},"b":1}');
    expect(argsHash({ content: 'x', path: 'a' })).toBe(argsHash({ path: 'a', content: 'x', approval_id: 'apr_whatever' }));
    expect(argsHash({ path: 'a', content: 'x' })).not.toBe(argsHash({ path: 'a', content: 'x ' }));
    expect(canonicalJson({ a: undefined, b: [undefined], c: -0 })).toBe('{"b":[null],"c":0}');
  });

  it('refuses what JSON cannot hold', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(ApprovalError);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function/);
    let deep: unknown = 1;
    for (let i = 0; i < 1000; i++) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(/nested deeper/);
  });
});

describe.each(['files', 'redis'] as const)('approval store (%s)', (kind) => {
  it('creates an unguessable pending request bound to caller, project, tool, arguments and version', async () => {
    const { store } = await openStore(kind);
    const r = await store.create(request());
    expect(isApprovalId(r.id)).toBe(true);
    expect(r).toMatchObject({ status: 'pending', caller: 'agent', tool: 'write_file', args_hash: binding.args_hash, file_version: V1, rule: { index: 1, name: 'soul' } });
    expect(Date.parse(r.expires_at) - Date.parse(r.created_at)).toBe(TTL);
    expect(await store.get(r.id)).toEqual(r);
    const other = await store.create(request({ project: 'p2' }));
    expect((await store.list({ status: 'pending' })).map((x) => x.id).sort()).toEqual([r.id, other.id].sort());
    expect((await store.list({ project: 'p2' })).map((x) => x.id)).toEqual([other.id]);
  });

  it('approved runs once; the repeat is APPROVAL_EXPIRED', async () => {
    const { store } = await openStore(kind);
    const r = await store.create(request());
    expect(await store.consume(r.id, binding, V1)).toMatchObject({ kind: 'pending' });
    const approved = await store.decide(r.id, { decision: 'approved', by: 'person', reason: 'fine' });
    expect(approved).toMatchObject({ status: 'approved', decided_by: 'person', reason: 'fine' });
    const first = await store.consume(r.id, binding, V1);
    expect(first).toMatchObject({ kind: 'run', record: { status: 'used' } });
    const second = await store.consume(r.id, binding, V1);
    expect(second.kind).toBe('refused');
    expect(second.kind === 'refused' && [second.error.code, second.error.httpStatus, second.error.message]).toEqual([
      'APPROVAL_EXPIRED',
      410,
      `Approval ${r.id} was already used; repeat the call without approval_id to ask again.`,
    ]);
    expect((await store.get(r.id))?.status).toBe('used');
  });

  it('rejected is USER_REJECTED with the reason; deciding twice is CONFLICT', async () => {
    const { store } = await openStore(kind);
    const r = await store.create(request());
    await store.decide(r.id, { decision: 'rejected', by: 'person', reason: 'keep the persona' });
    const out = await store.consume(r.id, binding, V1);
    expect(out.kind === 'refused' && [out.error.code, out.error.httpStatus, out.error.message]).toEqual(['USER_REJECTED', 403, 'The user rejected this change. Reason: keep the persona']);
    const e = await rejection(store.decide(r.id, { decision: 'approved', by: 'person' }));
    expect([e.code, e.httpStatus]).toEqual(['CONFLICT', 409]);
  });

  it('another caller, project, tool or other arguments are INVALID_PARAM and leave the approval usable', async () => {
    const { store } = await openStore(kind);
    const r = await store.create(request());
    await store.decide(r.id, { decision: 'approved', by: 'person' });
    for (const [field, value] of [
      ['caller', 'intruder'],
      ['project', 'other'],
      ['tool', 'delete_file'],
      ['args_hash', argsHash({ ...ARGS, content: 'something else' })],
    ] as const) {
      const out = await store.consume(r.id, { ...binding, [field]: value }, V1);
      expect(out).toMatchObject({ kind: 'refused', record: null, error: { code: 'INVALID_PARAM', details: { mismatch: field === 'args_hash' ? 'arguments' : field } } });
    }
    expect((await store.consume(r.id, binding, V1)).kind).toBe('run');
  });

  it('a file changed since the approval is CONFLICT with the current version', async () => {
    const { store } = await openStore(kind);
    const r = await store.create(request());
    await store.decide(r.id, { decision: 'approved', by: null });
    const out = await store.consume(r.id, binding, V2);
    expect(out).toMatchObject({ kind: 'refused', error: { code: 'CONFLICT', details: { current: V2, approved: V1 } } });
    // A touch that keeps the content is not a change.
    expect((await store.consume(r.id, binding, { ...V1, mtime_ms: 5 })).kind).toBe('run');
    const created = await store.create(request({ file_version: null }));
    await store.decide(created.id, { decision: 'approved', by: null });
    expect(await store.consume(created.id, binding, V1)).toMatchObject({ kind: 'refused', error: { code: 'CONFLICT' } });
    expect((await store.consume(created.id, binding, null)).kind).toBe('run');
  });

  it('a token does not approve its own request unless marked self_approve', async () => {
    const { store } = await openStore(kind);
    const r = await store.create(request());
    expect((await rejection(store.decide(r.id, { decision: 'approved', by: 'agent' }))).code).toBe('ACCESS_DENIED');
    expect((await store.get(r.id))?.status).toBe('pending');
    expect((await store.decide(r.id, { decision: 'approved', by: 'agent', selfApprove: true })).status).toBe('approved');
  });

  it('unknown ids: NOT_FOUND to decide, APPROVAL_EXPIRED to use, null to wait for', async () => {
    const { store } = await openStore(kind);
    const id = newApprovalId();
    expect((await rejection(store.decide(id, { decision: 'approved', by: null }))).code).toBe('NOT_FOUND');
    expect(await store.consume(id, binding, V1)).toMatchObject({ kind: 'refused', error: { code: 'APPROVAL_EXPIRED' } });
    expect(await store.waitForDecision(id, 10)).toBeNull();
    expect(await store.get(id)).toBeNull();
  });

  it('expiry: pending past its time reads expired, is swept once, then removed after the retention', async () => {
    const clock = { now: Date.parse('2030-01-01T00:00:00Z') };
    const { store } = await openStore(kind, clock);
    const r = await store.create(request());
    const kept = await store.create(request({ ttlMs: 10 * TTL }));
    clock.now += TTL;
    expect((await store.get(r.id))?.status).toBe('expired');
    expect((await rejection(store.decide(r.id, { decision: 'approved', by: null }))).code).toBe('APPROVAL_EXPIRED');
    expect(await store.consume(r.id, binding, V1)).toMatchObject({ kind: 'refused', error: { code: 'APPROVAL_EXPIRED' } });
    const swept = await store.sweepExpired();
    expect(swept.expired.map((x) => x.id)).toEqual([r.id]);
    expect(swept.removed).toEqual([]);
    expect((await store.sweepExpired()).expired).toEqual([]);
    clock.now += 2 * 60 * 60 * 1000; // past the one-hour retention (and past `kept`)
    const later = await store.sweepExpired();
    expect(later.removed).toEqual([r.id]);
    expect(later.expired.map((x) => x.id)).toEqual([kept.id]);
    expect(await store.get(r.id)).toBeNull();
  });

  it('approving late still leaves a whole window to use it; an approval unused past it expires', async () => {
    const clock = { now: Date.parse('2030-01-01T00:00:00Z') };
    const { store } = await openStore(kind, clock);
    const r = await store.create(request());
    clock.now += TTL - 1;
    const approved = await store.decide(r.id, { decision: 'approved', by: null });
    expect(Date.parse(approved.expires_at)).toBe(clock.now + TTL);
    clock.now += TTL;
    expect(await store.consume(r.id, binding, V1)).toMatchObject({ kind: 'refused', error: { code: 'APPROVAL_EXPIRED' } });
    expect((await store.sweepExpired()).expired.map((x) => x.status)).toEqual(['expired']);
  });

  it('a waiter is released by a decision, and otherwise returns the pending record at its bound', async () => {
    const { store } = await openStore(kind);
    const r = await store.create(request());
    expect((await store.waitForDecision(r.id, 50))?.status).toBe('pending');
    const ac = new AbortController();
    const aborted = store.waitForDecision(r.id, 60_000, ac.signal);
    ac.abort();
    expect((await aborted)?.status).toBe('pending');
    const waiting = store.waitForDecision(r.id, 60_000);
    await store.decide(r.id, { decision: 'rejected', by: null, reason: 'no' });
    expect(await waiting).toMatchObject({ status: 'rejected', reason: 'no' });
  });
});

describe('the approval secret', () => {
  it('is generated once into the state directory with mode 0600 and reused', async () => {
    const dir = await makeTempDir();
    const a = await loadApprovalSecret(dir);
    const b = await loadApprovalSecret(dir);
    expect(a.equals(b)).toBe(true);
    expect(a).toHaveLength(32);
    expect((await fs.stat(path.join(dir, 'approval-secret'))).mode & 0o777).toBe(0o600);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('comes from the configuration when set; a short one is refused', async () => {
    const dir = await makeTempDir();
    expect((await loadApprovalSecret(dir, 'x'.repeat(32))).toString()).toBe('x'.repeat(32));
    await expect(loadApprovalSecret(dir, 'short')).rejects.toThrow(/at least 16/);
    await expect(fs.stat(path.join(dir, 'approval-secret'))).rejects.toMatchObject({ code: 'ENOENT' });
    await fs.writeFile(path.join(dir, 'approval-secret'), 'not a key at all, clearly: it has spaces and is long enough to be whole\n');
    await expect(loadApprovalSecret(dir)).rejects.toThrow(/is not an approval secret/);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('records signed with another secret are refused', async () => {
    const { store, stateDir } = await openStore('files');
    const r = await store.create(request());
    const foreign = new ApprovalStoreImpl(await FileApprovalBackend.open(path.join(stateDir, 'approvals'), new RecordSigner(randomBytes(32))));
    expect(await foreign.get(r.id)).toBeNull();
    await foreign.close();
  });
});

describe('hostile approval ids', () => {
  const hostile = fc.oneof(
    fc.constantFrom('../../x', '../approval-secret', '..', '.', '', '/etc/passwd', 'apr_../../../../tmp/x', 'apr_' + 'a'.repeat(21) + '/', 'apr_' + 'a'.repeat(5000), 'apr_ÄÖÜäöüßéèêëàáâ', 'apr_\0aaaaaaaaaaaaaaaaaaaaa', 'APR_aaaaaaaaaaaaaaaaaaaaaa', 'apr_aaaaaaaaaaaaaaaaaaaaaa\n'),
    fc.string({ unit: 'grapheme', maxLength: 80 }),
    fc.string({ maxLength: 300 }).map((s) => `apr_${s}`),
    fc.array(fc.constantFrom('..', '.', 'approvals', 'x', '%2e%2e', 'apr_aaaaaaaaaaaaaaaaaaaaaa'), { maxLength: 6 }).map((a) => a.join('/')),
  );

  it.each(['files', 'redis'] as const)('are refused and write nothing (%s)', async (kind) => {
    const { store, base } = await openStore(kind);
    const real = await store.create(request());
    const before = await snapshot(base);
    const client = new Redis(redis.url);
    cleanups.push(async () => client.disconnect());
    const redisKeys = await client.keys('*');
    await fc.assert(
      fc.asyncProperty(hostile, async (id) => {
        fc.pre(!isApprovalId(id));
        expect(await store.get(id)).toBeNull();
        expect(await store.waitForDecision(id, 1)).toBeNull();
        expect(await store.consume(id, binding, V1)).toMatchObject({ kind: 'refused', error: { code: 'INVALID_PARAM' } });
        const e = await rejection(store.decide(id, { decision: 'approved', by: null }));
        expect(e.code).toBe('NOT_FOUND');
        expect(e.message).toBe('No approval request with that id; it may have been swept after it expired.'); // not echoed
      }),
      { numRuns: 150 },
    );
    expect(await snapshot(base)).toEqual(before);
    expect((await client.keys('*')).sort()).toEqual(redisKeys.sort());
    expect((await store.get(real.id))?.status).toBe('pending');
  });
});

describe('altered records are refused and nothing is written', () => {
  async function tamperCase(change: (file: string, text: string) => Promise<void>, stage: 'json' | 'decided' = 'json') {
    const { store, base, stateDir } = await openStore('files');
    const r = await store.create(request());
    if (stage === 'decided') await store.decide(r.id, { decision: 'rejected', by: 'person', reason: 'no' });
    const file = path.join(stateDir, 'approvals', `${r.id}.${stage}`);
    await change(file, await fs.readFile(file, 'utf8'));
    const before = await snapshot(base);
    expect(await store.get(r.id)).toBeNull();
    expect(await store.list()).toEqual([]);
    const e = await rejection(store.decide(r.id, { decision: 'approved', by: 'person' }));
    expect(e.code).toBe('INVALID_PARAM');
    expect(e.message).toMatch(/failed its integrity check/);
    expect(await store.consume(r.id, binding, V1)).toMatchObject({ kind: 'refused', error: { code: 'INVALID_PARAM' } });
    expect((await store.sweepExpired(Date.now() + 365 * 24 * 3600 * 1000)).removed).toEqual([]);
    expect(await snapshot(base)).toEqual(before);
  }

  it('a flipped byte anywhere in the record', async () => {
    for (const at of [12, 40, 200, -70, -3]) {
      await tamperCase(async (file, text) => {
        const buf = Buffer.from(text);
        const i = at < 0 ? buf.length + at : at;
        buf[i] = buf[i]! ^ 0x01;
        await fs.writeFile(file, buf);
      });
    }
  });

  it('a changed signature, a missing signature', async () => {
    await tamperCase(async (file, text) => fs.writeFile(file, text.replace(/"sig":"([0-9a-f])/, (_m, c: string) => `"sig":"${c === '0' ? '1' : '0'}`)));
    await tamperCase(async (file, text) => fs.writeFile(file, JSON.stringify({ record: JSON.parse(text).record })));
  });

  it('a changed field with the old signature (the request, and the decision)', async () => {
    const edit = (mutate: (r: Record<string, unknown>) => void) => async (file: string, text: string) => {
      const sealed = JSON.parse(text) as { record: Record<string, unknown>; sig: string };
      mutate(sealed.record);
      await fs.writeFile(file, JSON.stringify(sealed));
    };
    await tamperCase(edit((r) => (r.caller = 'intruder')));
    await tamperCase(edit((r) => (r.expires_at = '2999-01-01T00:00:00.000Z')));
    await tamperCase(edit((r) => (r.extra = 1)));
    await tamperCase(edit((r) => (r.status = 'approved')), 'decided');
  });

  it("another request's record copied over this one", async () => {
    const { store, stateDir } = await openStore('files');
    const a = await store.create(request());
    const b = await store.create(request());
    await store.decide(b.id, { decision: 'approved', by: 'person' });
    const dir = path.join(stateDir, 'approvals');
    await fs.copyFile(path.join(dir, `${b.id}.decided`), path.join(dir, `${a.id}.decided`));
    expect(await store.get(a.id)).toBeNull();
    expect(await store.consume(a.id, binding, V1)).toMatchObject({ kind: 'refused', error: { code: 'INVALID_PARAM' } });
  });

  it('in Redis too', async () => {
    const prefix = `t${randomBytes(4).toString('hex')}:{approvals}:`;
    const base = await makeTempDir();
    const store = await openApprovalStore({ stateDir: base, redisUrl: redis.url, redisPrefix: prefix });
    const client = new Redis(redis.url);
    try {
      const r = await store.create(request());
      const key = `${prefix}rec:${r.id}`;
      const text = (await client.get(key))!;
      await client.set(key, text.replace('"caller":"agent"', '"caller":"other"'));
      const altered = await client.get(key);
      expect(await store.get(r.id)).toBeNull();
      expect((await rejection(store.decide(r.id, { decision: 'approved', by: 'person' }))).code).toBe('INVALID_PARAM');
      expect(await store.consume(r.id, { ...binding, caller: 'other' }, V1)).toMatchObject({ kind: 'refused', error: { code: 'INVALID_PARAM' } });
      expect(await client.get(key)).toBe(altered);
    } finally {
      client.disconnect();
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
  });
});
