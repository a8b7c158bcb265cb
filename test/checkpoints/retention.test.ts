// Checkpoint retention at its edges (docs/api.md, "Turns, checkpoints and rewind"): TOOLGATE_CHECKPOINT_MAX_TURNS
// checkpoints are kept and one more goes; one exactly TOOLGATE_CHECKPOINT_MAX_AGE_DAYS old stays, older goes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { applyRetention, groupCheckpoints, newRecordId, readPruned, readRecords, timeOfRecordId, writeRecord, type CheckpointRecord } from '../../src/workspace/checkpoints.js';
import { closeWorkspace, type Workspace } from '../../src/workspace/workspace.js';
import { makeTempDir, openTestWorkspace } from '../helpers.js';

const DAY = 24 * 3600 * 1000;
let base: string;
let ws: Workspace;

beforeEach(async () => {
  base = await makeTempDir();
  await fs.mkdir(path.join(base, 'ws'));
  ws = await openTestWorkspace(path.join(base, 'ws'), 'retention-test', { checkpointMaxTurns: 4, checkpointMaxAgeMs: 2 * DAY });
});
afterEach(async () => {
  closeWorkspace(ws);
  await fs.rm(base, { recursive: true, force: true });
});

const record = (turn: string | null): CheckpointRecord => ({ id: newRecordId(), turn, at: new Date().toISOString(), actor: null, tool: 'write_file', request_id: 'r', changes: [] });

it('keeps TOOLGATE_CHECKPOINT_MAX_TURNS checkpoints (a turn of several calls is one), and one more goes, counted', async () => {
  for (const turn of ['a', 'a', null, 'b', 'b']) await writeRecord(ws, record(turn));
  await writeRecord(ws, record('c'));
  expect(await applyRetention(ws)).toBe(0);
  expect(groupCheckpoints(await readRecords(ws))).toHaveLength(4);
  await writeRecord(ws, record(null));
  expect(await applyRetention(ws)).toBe(1);
  const kept = groupCheckpoints(await readRecords(ws));
  expect(kept.map((c) => c.turn)).toEqual([null, 'b', 'c', null]);
  expect((await readPruned(ws)).count).toBe(1);
});

it('keeps a checkpoint exactly TOOLGATE_CHECKPOINT_MAX_AGE_DAYS old and drops it a millisecond later', async () => {
  const r = record('old');
  await writeRecord(ws, r);
  const born = timeOfRecordId(r.id);
  expect(await applyRetention(ws, born + 2 * DAY)).toBe(0);
  expect(await applyRetention(ws, born + 2 * DAY + 1)).toBe(1);
  expect(await readRecords(ws)).toEqual([]);
  expect(await readPruned(ws)).toMatchObject({ count: 1, before: r.at });
});

it('a pass that prunes reads the records and the watermark and replaces the watermark on the event loop while no fsync runs', async () => {
  // Small file work runs as src/workspace/sync-first-io.ts runs it: a pass every tenth of the turn limit
  // made about eighteen round trips through the thread pool, four per file read.
  for (let n = 0; n < 4; n++) await writeRecord(ws, record(null));
  expect(await applyRetention(ws)).toBe(0);
  await writeRecord(ws, record(null));
  const pooled = ['open', 'readFile', 'readdir', 'writeFile', 'rename', 'stat'].map((m) => vi.spyOn(fs, m as 'open'));
  try {
    expect(await applyRetention(ws)).toBe(1);
    for (const spy of pooled) expect(spy).not.toHaveBeenCalled();
  } finally {
    for (const spy of pooled) spy.mockRestore();
  }
  expect(await readPruned(ws)).toMatchObject({ count: 1 });
  expect(groupCheckpoints(await readRecords(ws))).toHaveLength(4);
  expect((await fs.readdir(path.join(ws.stateDir, 'checkpoints'))).filter((n) => n.startsWith('pruned.json.'))).toEqual([]);
});
