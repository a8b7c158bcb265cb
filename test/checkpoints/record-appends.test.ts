// Checkpoint records appended while fsyncs run (docs/api.md, "Turns, checkpoints and rewind"): the records that
// come while one append is in the thread pool go out together in the next write, every one whole and listed.
import fsCallbacks, { closeSync, openSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { newRecordId, readRecords, writeRecord, type CheckpointRecord } from '../../src/workspace/checkpoints.js';
import { fsyncFd } from '../../src/workspace/sync-first-io.js';
import { closeWorkspace, type Workspace } from '../../src/workspace/workspace.js';
import { makeApp, makeTempDir, openTestWorkspace, type TestApp } from '../helpers.js';

const record = (n: number): CheckpointRecord => ({ id: newRecordId(), turn: `t${n}`, at: new Date().toISOString(), actor: null, tool: 'write_file', request_id: `r${n}`, changes: [] });

describe('appends while an fsync runs', () => {
  let base: string;
  let ws: Workspace;
  beforeEach(async () => {
    base = await makeTempDir();
    await fs.mkdir(path.join(base, 'ws'));
    ws = await openTestWorkspace(path.join(base, 'ws'), 'appends-test', { checkpointMaxTurns: 1000, checkpointMaxAgeMs: 1e10 });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    closeWorkspace(ws);
    await fs.rm(base, { recursive: true, force: true });
  });

  /** Starts an fsync of a scratch file (so that appends go to the thread pool) and says when it is done. */
  function fsyncRunning(): Promise<void> {
    const fd = openSync(path.join(base, 'scratch'), 'w');
    return fsyncFd(fd).finally(() => closeSync(fd));
  }

  /** The records in the segment files, line by line (each line must parse whole). */
  async function segmentLines(): Promise<CheckpointRecord[]> {
    const dir = path.join(ws.stateDir, 'checkpoints');
    const segments = (await fs.readdir(dir, { recursive: true })).filter((n) => n.endsWith('.jsonl'));
    const text = (await Promise.all(segments.map((n) => fs.readFile(path.join(dir, n), 'utf8')))).join('');
    return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as CheckpointRecord);
  }

  it('the records handed over during one append go out in one write after it, each line whole', async () => {
    const writes = vi.spyOn(fsCallbacks, 'write');
    const syncing = fsyncRunning();
    const records = Array.from({ length: 20 }, (_, n) => record(n));
    await Promise.all(records.map((r) => writeRecord(ws, r)));
    await syncing;
    // The first alone, the other 19 together once it is written.
    expect(writes).toHaveBeenCalledTimes(2);
    expect((await readRecords(ws)).map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());
    expect((await segmentLines()).map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());
  });

  it("a group's failed write fails each of its records, and the next records are written", async () => {
    const real = fsCallbacks.write.bind(fsCallbacks) as (...args: unknown[]) => void;
    let n = 0;
    vi.spyOn(fsCallbacks, 'write').mockImplementation(((...args: unknown[]) => {
      // The second write (the group) fails as a full disk would.
      if (++n === 2) return (args.at(-1) as (err: Error) => void)(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }));
      real(...args);
    }) as typeof fsCallbacks.write);
    const syncing = fsyncRunning();
    const first = writeRecord(ws, record(0));
    const group = [writeRecord(ws, record(1)), writeRecord(ws, record(2))];
    await expect(first).resolves.toBeUndefined();
    for (const g of group) await expect(g).rejects.toMatchObject({ code: 'ENOSPC' });
    await syncing;
    await writeRecord(ws, record(3));
    expect((await segmentLines()).map((r) => r.request_id).sort()).toEqual(['r0', 'r3']);
  });
});

describe('through the app', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('32 writes at once each leave their checkpoint, listed by list_checkpoints', async () => {
    t = await makeApp();
    const app = t;
    const answers = await Promise.all(Array.from({ length: 32 }, (_, n) => app.call('write_file', { path: `f${n}.txt`, content: `file ${n}\n` }, { 'toolgate-turn': `turn-${n}` })));
    expect(answers.map((a) => a.body.status)).toEqual(Array(32).fill('success'));
    const listed = (await app.call('list_checkpoints', { limit: 50 })).body.data as { checkpoints: { turn: string; files: { path: string }[] }[] };
    expect(listed.checkpoints.map((c) => `${c.turn}:${c.files.map((f) => f.path).join()}`).sort()).toEqual(Array.from({ length: 32 }, (_, n) => `turn-${n}:f${n}.txt`).sort());
  });
});
