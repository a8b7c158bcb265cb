// Line ranges of a file, streamed in chunks, so a file of any size is never loaded whole.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { readAt } from './sync-first-io.js';

/** Bytes read at a time; `bytesScanned` of a range that stops early is a multiple of it. */
export const LINE_RANGE_CHUNK_BYTES = 64 * 1024;
const CHUNK = LINE_RANGE_CHUNK_BYTES;

/**
 * Bytes scanned between two turns of the event loop. The chunks are read synchronously (sync-first-io.ts), so a
 * scan through a large file would otherwise hold every other request, and the tool's time limit, until it
 * ends (bench/README.md, "Decisions").
 */
export const LINE_RANGE_YIELD_BYTES = 1024 * 1024;

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface LineRange {
  /** The raw bytes of the selected lines, line endings included. */
  bytes: Buffer;
  startLine: number;
  /** Last line included (startLine - 1 when none). */
  endLine: number;
  /** Known only when the scan reached the end of the file. */
  totalLines: number | null;
  truncated: boolean;
  nextStartLine: number | null;
  /** The first selected line alone was over the cap and was cut. */
  partialLine: boolean;
  bytesScanned: number;
}

export interface LineRangeOptions {
  start: number;
  end?: number | undefined;
  maxOutputBytes: number;
  /** Keep scanning to the end to learn total_lines (cheap memchr scan). */
  countAll?: boolean;
  /** Checked before every chunk (the scan throws its reason); a timer can only abort the scan at one of its turns of the event loop. */
  signal?: AbortSignal;
  /**
   * Leave a UTF-8 BOM at the start of the file out of line 1, as a whole read does: it is neither returned
   * nor counted against the cap (it is still scanned and counted in `bytesScanned`).
   */
  skipBom?: boolean;
}

/** Reads lines [start, end] (1-based, inclusive) of an open file, stopping at the output cap. */
export async function readLineRange(fd: number, opts: LineRangeOptions): Promise<LineRange> {
  const buf = Buffer.allocUnsafe(CHUNK);
  const scan = new RangeScan(opts);
  let position = 0;
  let stoppedEarly = false;
  let lastByte = -1;
  let skipped = 0; // bytes of a skipped BOM
  let sinceTurn = 0;
  while (!stoppedEarly) {
    if (sinceTurn >= LINE_RANGE_YIELD_BYTES) {
      sinceTurn = 0;
      await nextTurn();
    }
    if (opts.signal?.aborted) throw opts.signal.reason;
    const bytesRead = await readAt(fd, buf, CHUNK, position);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    let from = 0;
    if (position === 0 && opts.skipBom && chunk.subarray(0, 3).equals(BOM)) from = skipped = BOM.length;
    position += bytesRead;
    sinceTurn += bytesRead;
    lastByte = buf[bytesRead - 1] as number;
    stoppedEarly = scan.chunk(chunk, from);
  }
  // A last line without a final newline (only kept when selected; otherwise just counted).
  if (!stoppedEarly && (scan.carryLen > 0 || (position > skipped && lastByte !== 10))) scan.finishLine(Buffer.alloc(0));
  const totalLines = stoppedEarly ? null : scan.line - 1;
  const { endLine, truncated, nextStartLine, partialLine } = scan;
  return { bytes: Buffer.concat(scan.parts), startLine: opts.start, endLine, totalLines, truncated, nextStartLine, partialLine, bytesScanned: position };
}

/** The lines of one range as its chunks go by: counted before and after it, copied within it up to the cap. */
class RangeScan {
  readonly #opts: LineRangeOptions;
  /**
   * Lines before the range (or up to just past `end` when it is below `start`) are only counted, never copied:
   * copying the millions of lines before a range near the end of a huge file was most of the cost of reading it.
   * Nothing of such a line is ever carried, so one cut by a chunk's end needs no state but `line`.
   */
  readonly #countUntil: number;
  readonly parts: Buffer[] = [];
  #outBytes = 0;
  /** Number of the line that starts at the current position. */
  line = 1;
  /** Pieces of the current (selected) line not yet terminated. */
  #carry: Buffer[] = [];
  carryLen = 0;
  truncated = false;
  partialLine = false;
  nextStartLine: number | null = null;
  endLine: number;

  constructor(opts: LineRangeOptions) {
    this.#opts = opts;
    this.endLine = opts.start - 1;
    this.#countUntil = opts.end !== undefined ? Math.min(opts.start, opts.end + 1) : opts.start;
  }

  #selected(n: number): boolean {
    return n >= this.#opts.start && (this.#opts.end === undefined || n <= this.#opts.end);
  }

  /** Scans one chunk from `from`. True when the range is complete and the file need not be read further. */
  chunk(chunk: Buffer, from: number): boolean {
    const opts = this.#opts;
    for (;;) {
      const nl = chunk.indexOf(10, from);
      if (this.line < this.#countUntil) {
        // Before the range: nothing is selected, nothing truncated and `line` is not past `end` yet, so the
        // check after a finished line can wait for the last line before the range.
        if (nl === -1) break;
        this.line++;
        if (this.line < this.#countUntil) {
          from = nl + 1;
          continue;
        }
      } else if (!this.#selected(this.line) || this.truncated) {
        // After the range (counting them all) or after the cap: counted, not copied either.
        if (nl === -1) break;
        this.line++;
      } else if (nl === -1) {
        this.#carryRest(Buffer.from(chunk.subarray(from)));
        break;
      } else {
        this.finishLine(Buffer.from(chunk.subarray(from, nl + 1)));
      }
      from = nl + 1;
      const pastEnd = this.truncated || (opts.end !== undefined && this.line > opts.end);
      if (pastEnd && !opts.countAll) return true;
    }
    return false;
  }

  /** A selected line goes on past the chunk: its piece is kept, up to just over the cap. */
  #carryRest(rest: Buffer): void {
    this.#carry.push(rest);
    this.carryLen += rest.length;
    if (this.carryLen > this.#opts.maxOutputBytes + 4) {
      // A selected line longer than the cap: no need to keep more of it.
      this.#carry = [Buffer.concat(this.#carry).subarray(0, this.#opts.maxOutputBytes + 4)];
      this.carryLen = this.#carry[0]?.length ?? 0;
    }
  }

  /** Called with the last piece of line `line` (including its '\n' when present). */
  finishLine(piece: Buffer): void {
    if (this.#selected(this.line) && !this.truncated) {
      const whole = this.carryLen > 0 ? Buffer.concat([...this.#carry, piece]) : piece;
      if (this.#outBytes + whole.length > this.#opts.maxOutputBytes) {
        this.truncated = true;
        if (this.#outBytes === 0) {
          this.parts.push(cutAtCharBoundary(whole, this.#opts.maxOutputBytes));
          this.partialLine = true;
          this.endLine = this.line;
          this.nextStartLine = this.line + 1;
        } else {
          this.nextStartLine = this.line;
        }
      } else {
        this.parts.push(whole);
        this.#outBytes += whole.length;
        this.endLine = this.line;
      }
    }
    this.#carry = [];
    this.carryLen = 0;
    this.line++;
  }
}

/** Cuts a UTF-8 buffer to at most `max` bytes without splitting a character. */
export function cutAtCharBoundary(buf: Buffer, max: number): Buffer {
  if (buf.length <= max) return buf;
  let end = max;
  while (end > 0 && ((buf[end] as number) & 0xc0) === 0x80) end--;
  return buf.subarray(0, end);
}

export interface TailLines {
  /** The raw bytes of the last lines, line endings included. */
  bytes: Buffer;
  /** How many lines `bytes` holds. */
  lines: number;
  /** Fewer lines than asked because the output cap was reached (the earliest ones were left out). */
  truncated: boolean;
  bytesScanned: number;
}

/**
 * The last `count` lines of an open file of `size` bytes, found by reading chunks backwards from its end: the
 * cost follows the lines asked for, not the file's size. A final newline ends the last line (it starts none).
 * Over `maxOutputBytes` the earliest of those lines are left out, whole.
 */
export async function readTailLines(fd: number, size: number, count: number, opts: { maxOutputBytes: number; signal?: AbortSignal; skipBom?: boolean }): Promise<TailLines> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let pos = size;
  let start = 0;
  let found = 0;
  let first = true;
  let scanned = 0;
  // Past the cap nothing more could be returned: the scan stops there too.
  const floor = Math.max(0, size - opts.maxOutputBytes);
  let capped = false;
  scan: while (pos > 0) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    const from = Math.max(0, pos - CHUNK);
    const n = await readAt(fd, buf, pos - from, from);
    scanned += n;
    let i = n - 1;
    if (first && n > 0 && buf[n - 1] === 10) i--; // the final newline ends the last line
    first = false;
    for (; i >= 0; i--) {
      i = buf.lastIndexOf(10, i);
      if (i < 0) break;
      const lineStart = from + i + 1;
      if (lineStart < floor) {
        capped = true;
        break scan;
      }
      start = lineStart;
      if (++found === count) break scan;
    }
    pos = from;
    if (pos === 0) start = 0;
    if (pos < floor) {
      capped = true;
      break;
    }
  }
  if (capped && found === 0) start = floor; // one line longer than the cap: its end
  if (!capped && found < count) start = 0;
  if (start === 0 && opts.skipBom && size >= 3) {
    const head = Buffer.alloc(3);
    await readAt(fd, head, 3, 0);
    if (head.equals(BOM)) start = 3;
  }
  const bytes = Buffer.allocUnsafe(size - start);
  await readAt(fd, bytes, bytes.length, start);
  let lines = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) lines++;
  if (bytes.length > 0 && bytes[bytes.length - 1] !== 10) lines++;
  return { bytes, lines, truncated: capped && found < count, bytesScanned: scanned + bytes.length };
}
