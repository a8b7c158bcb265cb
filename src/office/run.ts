// Reads .docx and .xlsx/.xlsm documents for read_docx / read_excel: the zip guard checks and inflates the
// entries here (streaming, counted, on zlib's thread pool), then one worker thread per document parses a
// stored copy of the checked entries under a heap limit and a timer. Workers start from source text, as
// search/pool.ts and search/regex.ts do, so the same code runs under tsx/vitest, from tsc's output and from the
// esbuild bundle.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { docxToMarkdown } from './docx.js';
import { OfficeError, isOfficeErrorCode } from './errors.js';
import { officeWorkerMain, type ParserModules, type WorkerJob, type WorkerReply } from './worker.js';
import { xlsxToText, type SheetSummary } from './xlsx.js';
import { checkZip, storedZip, type FdSource, type ZipLimits } from './zip-guard.js';

export type { SheetSummary } from './xlsx.js';

// esbuild's keepNames (tsx) wraps nested functions in __name(); the worker has no such helper.
const WORKER_SOURCE = `"use strict";\nvar __name = (f) => f;\n(${officeWorkerMain.toString()})({ docx: (${docxToMarkdown.toString()}), xlsx: (${xlsxToText.toString()}) });\n`;

export interface OfficeReadOptions {
  /** Output cap in UTF-8 bytes (read_file's TOOLGATE_MAX_OUTPUT_BYTES); longer output is cut at a line. */
  maxOutputBytes?: number;
  /** Wall time of the parse, worker start included; past it the worker is terminated (TIMEOUT). */
  timeoutMs?: number;
  /** The worker's old-generation heap limit (ARCHIVE_TOO_LARGE when the parser needs more). */
  memoryMb?: number;
  /** Zip guard limits (zip-guard.ts DEFAULT_ZIP_LIMITS for the rest). */
  zipLimits?: Partial<ZipLimits>;
  /** Images returned as attachments, and their bytes in all; the rest are counted in imagesOmitted. */
  maxImages?: number;
  maxImageBytes?: number;
}

export interface ExcelReadOptions extends OfficeReadOptions {
  /** The file's name or path, to refuse .xls/.xlsb by name before looking inside. */
  fileName?: string;
  sheet?: string | number;
  range?: string;
  /** Show formulas next to their cached values. */
  formulas?: boolean;
}

export interface OfficeAttachment {
  name: string;
  media_type: string;
  bytes: Buffer;
}

export interface OfficeReadResult {
  /** Markdown: the document, or one table per sheet. */
  text: string;
  truncated: boolean;
  attachments: OfficeAttachment[];
  imagesOmitted: number;
  /** Parser complaints worth passing on (unreadable parts), at most 20. */
  warnings: string[];
  /** Inflated bytes the guard let through. */
  inflatedBytes: number;
  /** Workbooks only: every sheet, selected or not. */
  sheets?: SheetSummary[];
  /** Workbooks only, when truncated: the sheet and first row not shown (ask for a range from there). */
  truncatedAt?: { sheet: string; row: number } | null;
}

export const OFFICE_DEFAULTS = {
  maxOutputBytes: 256 * 1024,
  timeoutMs: 30_000,
  memoryMb: 512,
  maxImages: 50,
  maxImageBytes: 32 * 1024 * 1024,
  /** Documents parsed at once; more wait their turn, so N requests cannot start N heaps of memoryMb. */
  concurrency: 2,
} as const;

// Parts no reader here needs: embedded objects (themselves zips, so never inflated), macros and other
// binary blobs, thumbnails, obfuscated fonts.
const SKIP_PARTS = /(^|\/)embeddings\/|\.bin$|^docProps\/thumbnail\.|^word\/fonts\//i;
const skip = (name: string) => SKIP_PARTS.test(name);

const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

// Legacy .xls (BIFF in an OLE container) is refused: the npm `xlsx` package (SheetJS) is frozen at 0.18.5
// with published advisories (prototype pollution, ReDoS) fixed only in releases that are not on the
// registry, `@e965/xlsx` is one person's unofficial republish of them, and no other maintained reader
// exists. The zip guard cannot vouch for an OLE file either, so the parser would see raw hostile input.
const XLS_REFUSED =
  'Legacy .xls workbooks are not read: no maintained reader without published advisories is available. Save the workbook as .xlsx (Excel or LibreOffice: Save As) and read that file.';

let modules: ParserModules | undefined;

/** Parser entry points, resolved from node_modules next to this module (or the bundle): loaded by the worker. */
function parserModules(): ParserModules {
  if (!modules) {
    const require = createRequire(import.meta.url);
    modules = {
      mammoth: require.resolve('mammoth'),
      turndown: require.resolve('turndown'),
      gfm: require.resolve('@joplin/turndown-plugin-gfm'),
      exceljs: require.resolve('exceljs'),
    };
  }
  return modules;
}

let running = 0;
const waiting: Array<() => void> = [];

async function withSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= OFFICE_DEFAULTS.concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Runs one job in a fresh worker (a hostile document leaves nothing behind), under memoryMb and timeoutMs. */
function runInWorker(job: WorkerJob, timeoutMs: number, memoryMb: number): Promise<WorkerReply> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    });
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      settle();
    };
    // A parser stuck in a loop never yields, so it cannot answer: terminate it.
    const timer = setTimeout(
      () => finish(() => reject(new OfficeError('TIMEOUT', `Parsing the document took longer than ${timeoutMs} ms and was stopped; try a smaller document or, for a workbook, one sheet or range.`))),
      timeoutMs,
    );
    worker.once('message', (reply: WorkerReply) => finish(() => resolve(reply)));
    worker.once('error', (err: Error & { code?: string }) =>
      finish(() =>
        reject(
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new OfficeError('ARCHIVE_TOO_LARGE', `Parsing the document needs more than the ${memoryMb} MiB memory limit; try a smaller document or, for a workbook, one sheet or range.`)
            : new OfficeError('DOCUMENT_INVALID', `The document parser failed (${err.message.split('\n')[0]?.slice(0, 200)}).`),
        ),
      ),
    );
    worker.once('exit', (code) => finish(() => reject(new OfficeError('DOCUMENT_INVALID', `The document parser stopped unexpectedly (exit code ${code}).`))));
    worker.postMessage(job, [job.zip]);
  });
}

function replyError(reply: Extract<WorkerReply, { ok: false }>, what: string): OfficeError {
  const code = isOfficeErrorCode(reply.code) ? reply.code : 'DOCUMENT_INVALID';
  if (code === 'DOCUMENT_INVALID') return new OfficeError(code, `The file is a zip archive but not a readable ${what} (${reply.message}).`);
  return new OfficeError(code, reply.message);
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes, at the last line end that fits (else at a character). */
export function capText(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  let cut = bytes.lastIndexOf(0x0a, maxBytes - 1) + 1;
  if (cut === 0) {
    cut = maxBytes;
    while (cut > 0 && ((bytes[cut] as number) & 0xc0) === 0x80) cut--; // not inside a UTF-8 sequence
  }
  return { text: bytes.subarray(0, cut).toString('utf8'), truncated: true };
}

function toAttachments(raw: Array<{ name: string; media_type: string; bytes: Uint8Array }>): OfficeAttachment[] {
  return raw.map((a) => ({ name: a.name, media_type: a.media_type, bytes: Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength) }));
}

async function checkedOoxml(source: Buffer | FdSource, options: OfficeReadOptions, what: string, mainPart: RegExp) {
  const archive = await checkZip(source, { limits: options.zipLimits, skip });
  if (!archive.entries.has('[Content_Types].xml') || ![...archive.entries.keys()].some((n) => mainPart.test(n))) {
    throw new OfficeError('DOCUMENT_INVALID', `The file is a zip archive but not a ${what} (no Office Open XML parts); check the file type.`);
  }
  return { zip: storedZip(archive), inflatedBytes: archive.inflatedBytes };
}

/** A .docx as Markdown (headings, lists, tables, emphasis), its images as attachments. Throws OfficeError. */
export async function readDocx(source: Buffer | FdSource, options: OfficeReadOptions = {}): Promise<OfficeReadResult> {
  const o = { ...OFFICE_DEFAULTS, ...options };
  const { zip, inflatedBytes } = await checkedOoxml(source, options, '.docx document', /^word\/[^/]+\.xml$/);
  const job: WorkerJob = { kind: 'docx', zip: zip.buffer as ArrayBuffer, modules: parserModules(), options: { maxImages: o.maxImages, maxImageBytes: o.maxImageBytes } };
  const reply = await withSlot(() => runInWorker(job, o.timeoutMs, o.memoryMb));
  if (!reply.ok) throw replyError(reply, '.docx document');
  if (reply.kind !== 'docx') throw new OfficeError('DOCUMENT_INVALID', 'The document parser answered for the wrong kind of document.');
  const { text, truncated } = capText(reply.result.markdown, o.maxOutputBytes);
  return { text, truncated, attachments: toAttachments(reply.result.attachments), imagesOmitted: reply.result.imagesOmitted, warnings: reply.result.warnings, inflatedBytes };
}

/** A .xlsx/.xlsm workbook as one Markdown table per sheet (cached formula values), images as attachments. */
export async function readExcel(source: Buffer | FdSource, options: ExcelReadOptions = {}): Promise<OfficeReadResult> {
  const o = { ...OFFICE_DEFAULTS, ...options };
  const name = options.fileName?.toLowerCase() ?? '';
  if (name.endsWith('.xls')) throw new OfficeError('UNSUPPORTED_FORMAT', XLS_REFUSED);
  if (name.endsWith('.xlsb')) throw new OfficeError('UNSUPPORTED_FORMAT', 'Binary .xlsb workbooks are not read; save the workbook as .xlsx and read that file.');
  if (Buffer.isBuffer(source) && source.subarray(0, 8).equals(OLE_MAGIC)) {
    throw new OfficeError('UNSUPPORTED_FORMAT', `The file is an OLE compound file: a legacy .xls workbook or a password-protected one. ${XLS_REFUSED}`);
  }
  const { zip, inflatedBytes } = await checkedOoxml(source, options, '.xlsx workbook', /^xl\/workbook\.xml$/);
  const job: WorkerJob = {
    kind: 'xlsx',
    zip: zip.buffer as ArrayBuffer,
    modules: parserModules(),
    options: { sheet: options.sheet, range: options.range, formulas: options.formulas ?? false, maxOutputBytes: o.maxOutputBytes, maxImages: o.maxImages, maxImageBytes: o.maxImageBytes },
  };
  const reply = await withSlot(() => runInWorker(job, o.timeoutMs, o.memoryMb));
  if (!reply.ok) throw replyError(reply, '.xlsx workbook');
  if (reply.kind !== 'xlsx') throw new OfficeError('DOCUMENT_INVALID', 'The document parser answered for the wrong kind of document.');
  const r = reply.result;
  // The worker already stopped at the cap; capText only guards the invariant.
  const capped = capText(r.text, o.maxOutputBytes);
  return {
    text: capped.text,
    truncated: r.truncatedAt !== null || capped.truncated,
    truncatedAt: r.truncatedAt,
    attachments: toAttachments(r.attachments),
    imagesOmitted: r.imagesOmitted,
    warnings: [],
    inflatedBytes,
    sheets: r.sheets,
  };
}
