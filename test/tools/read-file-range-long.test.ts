// read_file by line range through a 64 MiB file (over TOOLGATE_MAX_READ_BYTES: the streamed scan of
// src/workspace/lines.ts). The scan gives the event loop back as it goes, so other calls are answered while it
// runs, and TOOLGATE_TOOL_TIMEOUT_MS stops it with TIMEOUT instead of letting it run on.
import fs from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type ReadFileData as ReadData, type TestApp } from '../helpers.js';
import { expectEnvelope } from '../security/envelope-checks.js';


const MIB = 1024 * 1024;
const BLOCKS = 64;
const LINE_BYTES = 64;
const LINES_PER_BLOCK = MIB / LINE_BYTES;
const TOTAL = BLOCKS * LINES_PER_BLOCK;
/** 1 MiB of 64-byte numbered lines; the file is this block repeated, so its last lines are the block's. */
const block = Buffer.from(Array.from({ length: LINES_PER_BLOCK }, (_, i) => `line ${String(i + 1).padStart(8, '0')} `.padEnd(LINE_BYTES - 1, '.') + '\n').join(''));
const lastLines = (n: number) => block.subarray(block.length - n * LINE_BYTES).toString();

async function writeBigFile(file: string): Promise<void> {
  const fh = await fs.open(file, 'w');
  try {
    for (let i = 0; i < BLOCKS; i++) await fh.write(block);
  } finally {
    await fh.close();
  }
}

/** Bytes this process has read (Linux: /proc/self/io rchar), or null elsewhere. */
function bytesReadByProcess(): number | null {
  if (!existsSync('/proc/self/io')) return null;
  return Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);
}

/** Whether this process still has `file` open (Linux: /proc/self/fd), or null elsewhere. */
function isOpen(file: string): boolean | null {
  if (!existsSync('/proc/self/fd')) return null;
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false; // closed meanwhile (the directory's own fd)
    }
  });
}

describe('read_file: a long range scan', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ TOOLGATE_MAX_READ_BYTES: String(MIB) });
    await writeBigFile(t.file('big.txt'));
    await fs.writeFile(t.file('small.txt'), 'small\n');
  });
  afterAll(async () => t?.close());

  it('answers other calls while it runs', async () => {
    let done = false;
    const long = t.call('read_file', { path: 'big.txt', start_line: TOTAL - 9 }).then((res) => {
      done = true;
      return res;
    });
    let answeredMeanwhile = 0;
    while (!done) {
      const res = await t.call('read_file', { path: 'small.txt' });
      expect((res.body.data as ReadData).content).toBe('small\n');
      if (!done) answeredMeanwhile++;
    }
    const res = await long;
    expectEnvelope(res.body, res.status);
    expect(res.body.data).toMatchObject({ content: lastLines(10), end_line: TOTAL, total_lines: TOTAL });
    expect(res.body.stats.bytes_read).toBe(BLOCKS * MIB);
    // Before the scan gave the loop back, it held every other call until its end: none was answered meanwhile.
    expect(answeredMeanwhile).toBeGreaterThanOrEqual(3);
  });
});

describe('read_file: TOOLGATE_TOOL_TIMEOUT_MS during a long range scan', () => {
  let t: TestApp;
  let after: TestApp;
  beforeAll(async () => {
    // 1 ms: the call resolves and opens the file without waiting on the loop, so the limit fires at the
    // scan's first turns, long before its end.
    t = await makeApp({ TOOLGATE_MAX_READ_BYTES: String(MIB), TOOLGATE_TOOL_TIMEOUT_MS: '1' });
    // "The service keeps working" is asked of the same workspace in this process under a limit no busy
    // machine reaches, so only the long scan meets the 1 ms one.
    after = await makeApp({ TOOLGATE_ROOT: t.root, TOOLGATE_MAX_READ_BYTES: String(MIB), TOOLGATE_TOOL_TIMEOUT_MS: '600000' });
    await writeBigFile(t.file('big.txt'));
    await fs.writeFile(t.file('small.txt'), 'small\n');
  });
  afterAll(async () => {
    await t?.close();
    await after?.close();
  });

  it('stops the scan with TIMEOUT, closes the file and leaves the service working', async () => {
    const readBefore = bytesReadByProcess();
    const res = await t.call('read_file', { path: 'big.txt', start_line: TOTAL - 9 });
    expectEnvelope(res.body, res.status);
    expect(res.status).toBe(504);
    expect(res.body.error?.code).toBe('TIMEOUT');
    expect(res.body.error?.message).toMatch(/ran longer than 1 ms/);

    // The scan noticed at its next turn and closed the file, having read a small part of it.
    for (const deadline = Date.now() + 60_000; isOpen(t.file('big.txt')) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
    expect(isOpen(t.file('big.txt'))).not.toBe(true);
    const readAfter = bytesReadByProcess();
    if (readBefore !== null && readAfter !== null) expect(readAfter - readBefore).toBeLessThan((BLOCKS * MIB) / 4);

    const small = await after.call('read_file', { path: 'small.txt' });
    expect((small.body.data as ReadData).content).toBe('small\n');
    const head = await after.call('read_file', { path: 'big.txt', start_line: 1, end_line: 2 });
    expect(head.body.status).toBe('success');
    expect((head.body.data as ReadData).content).toBe(block.subarray(0, 2 * LINE_BYTES).toString());
  });
});
