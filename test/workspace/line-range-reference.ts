// A plain reference for readLineRange: the file split into lines in memory, the selection and the output cap
// applied line by line, and where the streamed scan stops worked out from the chunk size.
import { LINE_RANGE_CHUNK_BYTES, type LineRange } from '../../src/workspace/lines.js';

/** What readLineRange should answer (its startLine is the caller's start). */
export type ExpectedRange = Omit<LineRange, 'startLine'>;

/** The file's lines, each with its '\n' (a CRLF line keeps its '\r'); a last line without newline counts. */
export function splitLines(file: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  for (let p = 0; p < file.length; ) {
    const nl = file.indexOf(10, p);
    const e = nl === -1 ? file.length : nl + 1;
    lines.push(file.subarray(p, e));
    p = e;
  }
  return lines;
}

/** `skipBom`: a UTF-8 BOM at the start of the file belongs to no line (as with readLineRange's skipBom), but is scanned. */
export function expectedRange(file: Buffer, start: number, end: number | undefined, cap: number, countAll = false, skipBom = false): ExpectedRange {
  const skipped = skipBom && file.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])) ? 3 : 0;
  const lines = splitLines(file.subarray(skipped));
  const total = lines.length;
  const out: Buffer[] = [];
  let outBytes = 0;
  let endLine = start - 1;
  let truncated = false;
  let partialLine = false;
  let nextStartLine: number | null = null;
  let last = end; // the line after which the scan has all it needs
  for (let n = start; n <= Math.min(end ?? total, total); n++) {
    const l = lines[n - 1] as Buffer;
    if (outBytes + l.length > cap) {
      truncated = true;
      last = n;
      if (outBytes === 0) {
        let cut = cap;
        while (cut > 0 && ((l[cut] as number) & 0xc0) === 0x80) cut--;
        out.push(l.subarray(0, cut));
        partialLine = true;
        endLine = n;
        nextStartLine = n + 1;
      } else nextStartLine = n;
      break;
    }
    out.push(l);
    outBytes += l.length;
    endLine = n;
  }
  // The scan stops in the chunk holding the '\n' that ends line `last`; a line ended by the end of the file
  // (or a `last` past it, or countAll) means reading to the end, and only then is total_lines known.
  let stopsAfter: number | null = null;
  if (!countAll && last !== undefined && last <= total && (lines[last - 1] as Buffer).at(-1) === 10) {
    stopsAfter = lines.slice(0, last).reduce((s, l) => s + l.length, skipped);
  }
  return {
    bytes: Buffer.concat(out),
    endLine,
    totalLines: stopsAfter === null ? total : null,
    truncated,
    nextStartLine,
    partialLine,
    bytesScanned: stopsAfter === null ? file.length : Math.min(file.length, Math.ceil(stopsAfter / LINE_RANGE_CHUNK_BYTES) * LINE_RANGE_CHUNK_BYTES),
  };
}

/** Number of the line holding byte `offset`. */
export function lineAtByte(file: Buffer, offset: number): number {
  let n = 1;
  for (let p = file.indexOf(10); p !== -1 && p < offset; p = file.indexOf(10, p + 1)) n++;
  return n;
}
