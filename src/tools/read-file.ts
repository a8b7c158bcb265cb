import { z } from 'zod';
import { E } from '../errors.js';
import { readLineRange, readTailLines } from '../workspace/lines.js';
import { mediaTypeOf } from '../workspace/media-type.js';
import { closeSync } from 'node:fs';
import { openVerifiedRetrying } from '../workspace/sandbox.js';
import { readAll, readAt } from '../workspace/sync-first-io.js';
import { checkEncoding, countLines, decodeText, formatBytes, looksBinary } from '../workspace/encoding.js';
import { sha256Hex, versionOf } from '../workspace/versions.js';
import { defineTool } from './define.js';
import { PathArg, VersionSchema } from './args.js';

const Input = z.strictObject({
  path: PathArg,
  encoding: z.string().optional().describe('utf-8 (default), any iconv-lite encoding (latin1, windows-1251, shift_jis, utf-16le…), or base64 for binary files.'),
  start_line: z.number().int().optional().describe('First line to read (1-based, inclusive); negative counts from the end (-100 = the last 100 lines, as tail).'),
  end_line: z.number().int().min(1).optional().describe('Last line to read (1-based, inclusive).'),
  view_range: z.array(z.number().int()).length(2).optional().describe('[start_line, end_line] in one argument; -1 as end_line reads to the end.'),
  tail: z.number().int().min(1).optional().describe('Read the last N lines, found from the end of the file (as fast on a huge file as reading its first lines).'),
  line_numbers: z.boolean().default(false).describe('Prefix every line with its number and a tab.'),
});

const Output = z.object({
  content: z.string(),
  encoding: z.string(),
  total_lines: z.number().int().nullable().describe('null when the file was read by range and not scanned to its end'),
  start_line: z.number().int(),
  end_line: z.number().int(),
  truncated: z.boolean(),
  next_start_line: z.number().int().nullable().describe('Pass as start_line to continue after a truncated read.'),
  bom: z.boolean(),
  media_type: z.string().optional().describe('Set for images, PDF, audio and video (by magic bytes): content is then base64 of the bytes.'),
  version: VersionSchema,
});

function withLineNumbers(text: string, first: number): string {
  if (text.length === 0) return text;
  const lines = text.split('\n');
  const last = lines.length - 1;
  return lines.map((l, i) => (i === last && l === '' ? '' : `${String(first + i).padStart(6)}\t${l}`)).join('\n');
}

export const readFile = defineTool({
  name: 'read_file',
  aliases: ['read', 'file-read'],
  paramAliases: { file_path: 'path' },
  description:
    'Read a text file, or a range of its lines. Returns the content and the version to pass back when you change the file. Large files must be read by line range (start_line/end_line, or view_range) or from the end (tail: N); output is capped and `next_start_line` tells where to continue. Images, PDF and other media come back as base64 with media_type.',
  summary: 'whole file up to 10 MiB, or a line range of any size (streamed); output capped with `truncated`/`next_start_line`; encodings via iconv-lite, `base64` for binary; `view_range`, `tail: N` (or a negative `start_line`) read from the end; images, PDF and other media as base64 with `media_type`',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { path: 'notes.txt' },
  output: Output,
  async run(ctx, rawInput) {
    const { input, tail } = rangeOf(rawInput);
    const resolved = await ctx.resolve(input.path);
    const encoding = checkEncoding(input.encoding);
    if (input.end_line !== undefined && input.start_line !== undefined && input.end_line < input.start_line) {
      throw E.readRangeReversed();
    }
    const ranged = input.start_line !== undefined || input.end_line !== undefined || tail !== null;
    if (encoding === 'base64' && ranged) throw E.readRangeWithBase64();
    const { maxReadBytes, maxOutputBytes } = ctx.ws.limits;
    const { p, fd, stat: st } = await openVerifiedRetrying(resolved, () => ctx.resolve(input.path));
    try {
      if (st.size > maxReadBytes) {
        const part = await readPartOfLarge(fd, st.size, p.rel, input, tail, encoding, maxReadBytes, maxOutputBytes, ctx.signal);
        return answer(part.text, part.startLine, part.endLine, part.totalLines, part.truncated, part.next, versionOf(st, null), part.bytesScanned, part.bom);
      }
      const buf = await readAll(fd, st.size);
      const version = versionOf(st, sha256Hex(buf));
      const mediaType = input.encoding === undefined && !ranged ? mediaTypeOf(buf.subarray(0, 64)) : null;
      if (encoding === 'base64' || mediaType) return base64Answer(buf, p.rel, mediaType, version, maxOutputBytes);
      if (encoding === 'utf-8' && looksBinary(buf)) throw E.readBinary(p.rel);
      let text = decodeText(buf, encoding, p.rel);
      const bom = text.charCodeAt(0) === 0xfeff;
      if (bom) text = text.slice(1);
      if (!ranged && buf.length <= maxOutputBytes) {
        // The common case: the whole file fits the output; no need to split it into lines.
        const total = countLines(text);
        return answer(text, 1, total, total, false, null, version, buf.length, bom);
      }
      const cut = cutLines(text, input.start_line ?? 1, input.end_line, tail, p.rel, maxOutputBytes);
      return answer(cut.text, cut.startLine, cut.endLine, cut.totalLines, cut.truncated, cut.next, version, buf.length, bom);
    } finally {
      closeSync(fd);
    }

    function answer(content: string, startLine: number, endLine: number, totalLines: number | null, truncated: boolean, next: number | null, version: ReturnType<typeof versionOf>, bytesRead: number, bom = false) {
      const shown = input.line_numbers ? withLineNumbers(content, startLine) : content;
      const span = ranged || truncated ? `lines ${startLine}-${endLine} of ` : '';
      const of = totalLines !== null ? ` (${totalLines} lines)` : '';
      const more = truncated ? ` Output truncated at ${formatBytes(maxOutputBytes)}; continue with start_line ${next}.` : '';
      return {
        data: { content: shown, encoding, total_lines: totalLines, start_line: startLine, end_line: endLine, truncated, next_start_line: next, bom, version },
        text: `Read ${span}'${p.rel}'${of}.${more}`,
        stats: { bytes_read: bytesRead, lines: Math.max(0, endLine - startLine + 1) },
        partial: truncated,
        pathResolved: p.rel,
        version,
        audit: { sha256_before: version.sha256, bytes_read: bytesRead },
      };
    }
  },
});

/** The lines a read returns, before they are numbered and described. */
interface LinesRead {
  text: string;
  startLine: number;
  endLine: number;
  /** null when the file was not scanned to its end. */
  totalLines: number | null;
  truncated: boolean;
  next: number | null;
}

/**
 * A file over TOOLGATE_MAX_READ_BYTES: never loaded whole, only its last lines (tail: counted from the end,
 * -N … -1, since numbering them needs a scan from the top) or a line range, scanned from the top.
 */
async function readPartOfLarge(
  fd: number,
  size: number,
  rel: string,
  input: z.output<typeof Input>,
  tail: number | null,
  encoding: string,
  maxReadBytes: number,
  maxOutputBytes: number,
  signal: AbortSignal,
): Promise<LinesRead & { bytesScanned: number; bom: boolean }> {
  if (tail === null && input.start_line === undefined && input.end_line === undefined) {
    throw E.readOverLimit(rel, size, maxReadBytes);
  }
  if (encoding !== 'utf-8' && !isAsciiCompatible(encoding)) {
    throw E.readOverLimitEncoding(rel, encoding, tail !== null ? 'from the end' : 'by line range');
  }
  const head = Buffer.alloc(Math.min(8192, size));
  await readAt(fd, head, head.length, 0);
  if (looksBinary(head)) throw E.readBinary(rel);
  // As for a whole file: the BOM is left out of line 1 and reported, whatever the range.
  const bom = startsWithBom(head, encoding);
  if (tail !== null) {
    const got = await readTailLines(fd, size, tail, { maxOutputBytes, signal, skipBom: bom });
    return { text: decodeText(got.bytes, encoding, rel), startLine: -got.lines, endLine: -1, totalLines: null, truncated: got.truncated, next: null, bytesScanned: got.bytesScanned, bom };
  }
  const range = await readLineRange(fd, { start: input.start_line ?? 1, end: input.end_line, maxOutputBytes, signal, skipBom: bom });
  return {
    text: decodeText(range.bytes, encoding, rel),
    startLine: range.startLine,
    endLine: range.endLine,
    totalLines: range.totalLines,
    truncated: range.truncated,
    next: range.nextStartLine,
    bytesScanned: range.bytesScanned,
    bom,
  };
}

/** A file in memory answered as base64: asked for, or media (by magic bytes) read without an encoding. */
function base64Answer(buf: Buffer, rel: string, mediaType: string | null, version: ReturnType<typeof versionOf>, maxOutputBytes: number) {
  const content = buf.toString('base64');
  if (content.length > maxOutputBytes) {
    throw E.readBase64OverOutput(rel, buf.length, maxOutputBytes);
  }
  return {
    data: { content, encoding: 'base64', total_lines: null, start_line: 1, end_line: 0, truncated: false, next_start_line: null, bom: false, ...(mediaType && { media_type: mediaType }), version },
    text: `Read '${rel}' as base64 (${mediaType ? `${mediaType}, ` : ''}${formatBytes(buf.length)}).`,
    stats: { bytes_read: buf.length },
    pathResolved: rel,
    version,
    audit: { sha256_before: version.sha256, bytes_read: buf.length },
  };
}

/**
 * Lines `start`..`end` (or the last `tail`) of a text in memory, cut at TOOLGATE_MAX_OUTPUT_BYTES on a line
 * boundary; a first line alone over the limit is cut at a character boundary.
 */
function cutLines(text: string, start: number, end: number | undefined, tail: number | null, rel: string, maxOutputBytes: number): LinesRead {
  const lines = text.split(/(?<=\n)/);
  const total = text.length === 0 ? 0 : lines.length;
  if (tail !== null) start = Math.max(1, total - tail + 1);
  // Unranged, start is 1: past the end only of an empty text.
  if (total > 0 && start > total) {
    throw E.readStartPastEnd(start, rel, total);
  }
  const endWanted = Math.min(end ?? total, total);
  let out = '';
  let outBytes = 0;
  let last = start - 1;
  let truncated = false;
  let next: number | null = null;
  for (let n = start; n <= endWanted; n++) {
    const line = lines[n - 1] as string;
    const size = Buffer.byteLength(line);
    if (outBytes + size > maxOutputBytes) {
      truncated = true;
      if (outBytes === 0) {
        out = Buffer.from(line).subarray(0, maxOutputBytes).toString('utf8').replace(/\uFFFD$/, '');
        last = n;
        next = n + 1 <= total ? n + 1 : null;
      } else next = n;
      break;
    }
    out += line;
    outBytes += size;
    last = n;
  }
  return { text: out, startLine: start, endLine: last, totalLines: total, truncated, next };
}

/**
 * One spelling of the range: view_range as start_line/end_line (-1 = to the end), and the last N lines (tail, or
 * a negative start_line) apart, since they are read from the end.
 */
function rangeOf(raw: z.output<typeof Input>): { input: z.output<typeof Input>; tail: number | null } {
  const input = { ...raw };
  if (input.view_range !== undefined) {
    if (input.start_line !== undefined || input.end_line !== undefined || input.tail !== undefined) throw E.readRangeFormsMixed();
    const [start, end] = input.view_range as [number, number];
    if (start < 1 || (end !== -1 && end < start)) throw E.readViewRangeInvalid(start, end);
    input.start_line = start;
    input.end_line = end === -1 ? undefined : end;
  }
  if (input.start_line === 0) throw E.readStartLineZero();
  let tail = input.tail ?? null;
  if (input.start_line !== undefined && input.start_line < 0) {
    if (tail !== null) throw E.readTailTwice();
    tail = -input.start_line;
    input.start_line = undefined;
  }
  if (tail !== null && (input.start_line !== undefined || input.end_line !== undefined)) throw E.readTailWithRange();
  return { input, tail };
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Whether the file's text, decoded in `encoding`, starts with U+FEFF from a UTF-8 BOM (what a whole read strips). */
function startsWithBom(head: Buffer, encoding: string): boolean {
  return head.subarray(0, 3).equals(UTF8_BOM) && decodeText(UTF8_BOM, encoding, '').charCodeAt(0) === 0xfeff;
}

function isAsciiCompatible(encoding: string): boolean {
  return !/^(utf-?16|ucs-?2|utf-?32)/.test(encoding);
}
