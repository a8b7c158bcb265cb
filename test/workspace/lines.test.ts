// readLineRange against the in-memory reference on seeded random files and ranges, including what read_file
// cannot ask for (countAll, end below start).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINE_RANGE_CHUNK_BYTES as CHUNK, LINE_RANGE_YIELD_BYTES, readLineRange } from '../../src/workspace/lines.js';
import { expectedRange, splitLines } from './line-range-reference.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-lines-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function seeded(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((seed / 2 ** 31) * n);
  };
}

/** Empty, short, long (some over a chunk) and multi-byte lines, LF or CRLF, with or without a final newline. */
function randomFile(size: number, rand: (n: number) => number): Buffer {
  const pieces = ['', 'a', 'line', 'ж✓ü', 'x'.repeat(200), '\u{1F600}'.repeat(50)];
  let s = '';
  while (s.length < size) {
    const kind = rand(100);
    const text = kind < 2 ? 'y'.repeat(CHUNK + rand(CHUNK)) : (pieces[rand(pieces.length)] as string).repeat(1 + rand(4));
    s += text + (rand(4) === 0 ? '\r\n' : '\n');
  }
  if (rand(2) === 0) s += 'no newline at the end';
  return Buffer.from(s);
}

/** Writes `file` under `name` in the test directory and runs `fn` with it open for reading. */
async function withOpenFile(name: string, file: Buffer, fn: (fd: number) => Promise<void>): Promise<void> {
  const p = path.join(dir, name);
  fs.writeFileSync(p, file);
  const fd = fs.openSync(p, 'r');
  try {
    await fn(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** readLineRange against the in-memory reference for one range of one file. */
async function expectAsReference(fd: number, file: Buffer, label: string, start: number, end: number | undefined, cap: number, countAll: boolean, skipBom = false): Promise<void> {
  const got = await readLineRange(fd, { start, end, maxOutputBytes: cap, countAll, ...(skipBom && { skipBom }) });
  const want = expectedRange(file, start, end, cap, countAll, skipBom);
  expect({ ...got, bytes: got.bytes.toString('latin1') }, `file ${label}, ${start}-${end ?? ''} cap ${cap} countAll ${countAll}`).toEqual({
    ...want,
    bytes: want.bytes.toString('latin1'),
    startLine: start,
  });
}

describe('readLineRange', () => {
  it('matches the reference on random files, ranges, caps and countAll', async () => {
    const rand = seeded(42);
    for (let f = 0; f < 8; f++) {
      const file = randomFile([0, 10, 5000, CHUNK - 1, CHUNK, 3 * CHUNK + 77][f % 6] as number, rand);
      const total = splitLines(file).length;
      await withOpenFile(`f${f}`, file, async (fd) => {
        for (let r = 0; r < 40; r++) {
          const start = 1 + rand(total + 3);
          const endKind = rand(5);
          const end = endKind === 0 ? undefined : endKind === 1 ? Math.max(1, start - 1 - rand(3)) : start + rand(total + 2);
          const cap = [1, 7, 300, 4096, 256 * 1024][rand(5)] as number;
          for (const countAll of [false, true]) {
            await expectAsReference(fd, file, String(f), start, end, cap, countAll);
          }
        }
      });
    }
  });

  it('counts the lines before a range far into the file without losing any at chunk boundaries', async () => {
    // Every line ends on a different byte of the chunk over a few hundred chunks.
    let s = '';
    for (let i = 1; s.length < 40 * CHUNK; i++) s += `${i}${i % 3 === 0 ? '\r\n' : '\n'}`;
    const file = Buffer.from(s);
    const total = splitLines(file).length;
    await withOpenFile('many', file, async (fd) => {
      for (const start of [total - 100, total, total + 1]) {
        const got = await readLineRange(fd, { start, end: start + 99, maxOutputBytes: 256 * 1024 });
        const want = expectedRange(file, start, start + 99, 256 * 1024);
        expect(got.bytes.toString()).toBe(want.bytes.toString());
        expect(got).toMatchObject({ endLine: want.endLine, totalLines: want.totalLines, bytesScanned: want.bytesScanned });
      }
      expect((await readLineRange(fd, { start: total - 1, maxOutputBytes: 256 * 1024 })).bytes.toString()).toBe(Buffer.concat(splitLines(file).slice(-2)).toString());
    });
  });
});

describe('readLineRange with skipBom', () => {
  it('leaves a UTF-8 BOM out of line 1 (content and cap), still scanning it, and changes nothing without one', async () => {
    const rand = seeded(7);
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const files = [
      Buffer.alloc(0),
      bom,
      Buffer.concat([bom, Buffer.from('\n')]),
      Buffer.concat([bom, Buffer.from('one line, no newline')]),
      Buffer.concat([bom, Buffer.from(`${'z'.repeat(CHUNK - 3)}\nsecond\n`)]), // line 1 ends on a chunk's last byte
      Buffer.concat([bom, randomFile(3 * CHUNK, rand)]),
      randomFile(2 * CHUNK, rand),
      Buffer.from([0xef, 0xbb, 0x0a, 0x41]), // not a BOM
    ];
    for (const [f, file] of files.entries()) {
      const total = splitLines(file).length;
      await withOpenFile(`bom${f}`, file, async (fd) => {
        for (let r = 0; r < 30; r++) {
          const start = r < 3 ? 1 + r : 1 + rand(total + 2);
          const end = rand(3) === 0 ? undefined : start + rand(total + 2);
          const cap = [1, 3, 5, 300, CHUNK - 3, 256 * 1024][rand(6)] as number;
          for (const countAll of [false, true]) {
            await expectAsReference(fd, file, String(f), start, end, cap, countAll, true);
          }
        }
      });
    }
  });
});

describe('readLineRange on a long scan', () => {
  // Numbered lines over 8 turns' worth of bytes.
  let file: Buffer;
  let total: number;
  let fd: number;
  beforeAll(() => {
    const parts: string[] = [];
    let size = 0;
    for (let i = 1; size < 8 * LINE_RANGE_YIELD_BYTES; i++) {
      const line = `${i} ${'.'.repeat(i % 70)}\n`;
      parts.push(line);
      size += line.length;
    }
    file = Buffer.from(parts.join(''));
    total = parts.length;
    const p = path.join(dir, 'long');
    fs.writeFileSync(p, file);
    fd = fs.openSync(p, 'r');
  });
  afterAll(() => fs.closeSync(fd));

  it('gives the event loop back every LINE_RANGE_YIELD_BYTES, with the same result', async () => {
    let turns = 0;
    let scanning = true;
    const probe = () => {
      if (!scanning) return;
      turns++;
      setImmediate(probe);
    };
    setImmediate(probe);
    const got = await readLineRange(fd, { start: total - 9, maxOutputBytes: 256 * 1024 });
    scanning = false;
    const want = expectedRange(file, total - 9, undefined, 256 * 1024);
    expect({ ...got, bytes: got.bytes.toString() }).toEqual({ ...want, bytes: want.bytes.toString(), startLine: total - 9 });
    // One turn per full LINE_RANGE_YIELD_BYTES read before the last chunk (the probe runs once per turn).
    expect(turns).toBe(Math.floor((file.length - 1) / LINE_RANGE_YIELD_BYTES));
  });

  it('takes no turn of the event loop for a range within the first LINE_RANGE_YIELD_BYTES', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    const got = await readLineRange(fd, { start: 10, end: 20, maxOutputBytes: 256 * 1024 });
    expect(turned).toBe(false);
    expect(got.bytes.toString()).toBe(expectedRange(file, 10, 20, 256 * 1024).bytes.toString());
  });

  it('stops at an abort that fires while it scans and throws the reason', async () => {
    const controller = new AbortController();
    const reason = new Error('time is up');
    let turnsAfterAbort = -1;
    const probe = () => {
      if (controller.signal.aborted) turnsAfterAbort++;
      else controller.abort(reason);
      if (turnsAfterAbort < 10) setImmediate(probe);
    };
    setImmediate(probe);
    await expect(readLineRange(fd, { start: total, maxOutputBytes: 256 * 1024, signal: controller.signal })).rejects.toBe(reason);
    // Aborted at its first turn, it noticed at the next one.
    expect(turnsAfterAbort).toBeLessThanOrEqual(1);
  });
});
