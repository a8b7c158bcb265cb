// The office engine and its packages load on the first office call, not when the server starts: a fresh
// process (lazy-load-child.ts) builds the app, lists what Node has loaded, then reads a workbook.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO } from '../compiled.js';

describe('office packages at start-up', () => {
  it('are not loaded until the first office call, and are after it', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(REPO, 'test/office/lazy-load-child.ts')], { cwd: REPO, maxBuffer: 1024 * 1024 });
    const { atStart, afterCall, status } = JSON.parse(stdout) as { atStart: string[]; afterCall: string[]; status: number };
    expect(status).toBe(200);
    expect(atStart).toEqual([]);
    // The zip guard runs in this process; the parsers only ever load inside the office worker.
    expect(afterCall).toEqual(['yauzl']);
  }, 120_000);
});
