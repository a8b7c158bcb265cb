// Issue 12, finding 2: "TOOLGATE_TOOL_TIMEOUT_MS=1000 with the file lock held for 2.5 s by another process: the
// call answers TIMEOUT and the file changes 1.5 s later." A call past its limit either does not commit or
// reports what it committed, never both: its lock wait ends at the limit and it refuses to commit after it.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockPathFor } from '../../src/workspace/locks.js';
import { holdFileLock, makeApp, type TestApp } from '../helpers.js';
import { expectEnvelope } from '../security/envelope-checks.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const BEFORE = 'one\ntwo\n';

let t: TestApp;
let after: TestApp;
beforeEach(async () => {
  // The lock wait alone would last ten minutes: only the tool's time limit can end it.
  t = await makeApp({ TOOLGATE_TOOL_TIMEOUT_MS: '200', TOOLGATE_LOCK_TIMEOUT_MS: '600000' });
  // The checks afterwards must not time out on a busy machine: the same workspace in the same process (the
  // in-process lock queue is per file, not per app) with a limit no machine reaches.
  after = await makeApp({ TOOLGATE_ROOT: t.root, TOOLGATE_TOOL_TIMEOUT_MS: '600000' });
});
afterEach(async () => {
  await t.close();
  await after.close();
});

/** Takes the file's cross-process lock the way another replica would; returns its release. */
async function holdLockOf(rel: string): Promise<() => Promise<void>> {
  const ws = t.app.toolgate.workspace;
  if (!ws) throw new Error('single-workspace app expected');
  const real = await fs.realpath(t.file(rel));
  const lockfilePath = lockPathFor(ws, real);
  await fs.mkdir(path.dirname(lockfilePath), { recursive: true });
  return lockfile.lock(real, { lockfilePath, realpath: false });
}

const calls: [string, Record<string, unknown>][] = [
  ['write_file', { content: 'changed\n', expected_sha256: sha256(BEFORE) }],
  ['append_to_file', { content: 'three\n' }],
  ['replace_in_file', { old: 'one', new: 'uno' }],
  ['edit_file', { old_text: 'two', new_text: 'dos' }],
  ['delete_file', {}],
];

describe('a call past its time limit while another process holds the file lock', () => {
  it.each(calls)('%s answers TIMEOUT and the file does not change after the lock is released', async (tool, args) => {
    await fs.writeFile(t.file('held.txt'), BEFORE);
    const release = await holdLockOf('held.txt');
    let res;
    try {
      res = await t.call(tool, { path: 'held.txt', ...args });
    } finally {
      await release();
    }
    expectEnvelope(res.body, res.status);
    expect(res.status).toBe(504);
    expect(res.body.error?.code).toBe('TIMEOUT');
    // Refused before its backup too: nothing to undo.
    expect((await after.call('list_backups', {})).body.data).toMatchObject({ backups: [] });
    // A writer that had lingered would hold this process's lock queue and commit first; this one would
    // then get CONFLICT. Its success against the old version shows the timed-out call changed nothing.
    const next = await after.call('write_file', { path: 'held.txt', content: 'next\n', expected_sha256: sha256(BEFORE) });
    expect(next.body.status, JSON.stringify(next.body.error)).toBe('success');
    expect(await fs.readFile(t.file('held.txt'), 'utf8')).toBe('next\n');
  });
});

describe('a call past its time limit while queued behind a writer of this process', () => {
  it('answers TIMEOUT, leaves no timer of its wait, changes nothing, and the queue goes on', async () => {
    await fs.writeFile(t.file('queued.txt'), BEFORE);
    const ws = t.app.toolgate.workspace;
    if (!ws) throw new Error('single-workspace app expected');
    const holder = await holdFileLock(ws, await fs.realpath(t.file('queued.txt')), 'queued.txt');
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    let res;
    try {
      // The wait for its turn would last ten minutes (the lock timeout): only the call's limit ends it.
      res = await t.call('write_file', { path: 'queued.txt', content: 'changed\n', expected_sha256: sha256(BEFORE) });
      expect(timers()).toBeLessThanOrEqual(before);
    } finally {
      await holder.release();
    }
    expectEnvelope(res.body, res.status);
    expect(res.status).toBe(504);
    expect(res.body.error?.code).toBe('TIMEOUT');
    const next = await after.call('write_file', { path: 'queued.txt', content: 'next\n', expected_sha256: sha256(BEFORE) });
    expect(next.body.status, JSON.stringify(next.body.error)).toBe('success');
    expect(await fs.readFile(t.file('queued.txt'), 'utf8')).toBe('next\n');
  });
});
