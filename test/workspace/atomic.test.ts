// A durable write of a stopped call changes nothing: its temp file goes instead of being renamed over the
// target (src/workspace/atomic.ts, commitTempFile's `signal`).
import { readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitTempFile, writeFileAtomic, writeTempFile } from '../../src/workspace/atomic.js';
import type { Workspace } from '../../src/workspace/workspace.js';

let dir: string;
let ws: Workspace;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-atomic-'));
  ws = { stateDir: path.join(dir, 'state'), instanceId: 'test' } as Workspace;
  await fs.writeFile(path.join(dir, 'target'), 'old\n');
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const tempFiles = () => readdirSync(path.join(dir, 'state', 'tmp', 'test')).filter((n) => n !== '.owner');

describe('commitTempFile', () => {
  it('removes the temp file and leaves the target when the call was stopped while it was written', async () => {
    const stop = new AbortController();
    const temp = await writeTempFile(ws, Buffer.from('new\n'));
    stop.abort(new Error('stopped'));
    await expect(commitTempFile(temp, path.join(dir, 'target'), { stop: stop.signal })).rejects.toThrow('stopped');
    expect(readFileSync(path.join(dir, 'target'), 'utf8')).toBe('old\n');
    expect(tempFiles()).toEqual([]);
  });

  it('renames the temp file over the target while the call runs', async () => {
    const st = await writeFileAtomic(ws, path.join(dir, 'target'), Buffer.from('new\n'), { stop: new AbortController().signal });
    expect(readFileSync(path.join(dir, 'target'), 'utf8')).toBe('new\n');
    expect(st.size).toBe(4);
    expect(tempFiles()).toEqual([]);
  });
});
