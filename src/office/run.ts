// Reads .docx and .xlsx/.xlsm documents for read_docx / read_excel. Each document takes one of the
// concurrency slots and its share of the process's memory budget before a byte is inflated; then the zip
// guard checks and inflates the entries here (streaming, counted, on zlib's thread pool), and a fresh worker
// thread (src/workers/bounded-pool.ts) parses a stored copy of the checked entries under a heap limit and a
// deadline. Eight bombs sent at once thus inflate one after another, not all together (docs/operations.md,
// "Work off the main thread").
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { MemoryBudget, memoryBudgetOf } from '../workspace/memory-budget.js';
import { PartKind, type ServiceRuntime } from '../workspace/runtime.js';
import { BoundedPool, handlerSource, WorkerFailure, type WorkerJobError } from '../workers/bounded-pool.js';
import { docxToMarkdown, type HeldImages, type RawAttachment } from './docx.js';
import { E } from '../errors.js';
import { OfficeError, isOfficeErrorCode } from './errors.js';
import { officeWorkerJob, type ParserModules, type WorkerJob, type WorkerReply } from './worker.js';
import { XlsxText, type SheetSummary } from './xlsx.js';
import { parseA1Range, XlsxRange, type XlsxStreamInput } from './xlsx-stream.js';
import { XlsxFirstRows } from './xlsx-first-rows.js';
import { XlsxParts, XlsxRowSkipper } from './xlsx-parts.js';
import { checkZip, inflateLimitError, storedZip, type FdSource, type ZipLimits } from './zip-guard.js';

export type { SheetSummary } from './xlsx.js';

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
  /**
   * The service's memory budget (TOOLGATE_MEMORY_BUDGET_BYTES, src/workspace/memory-budget.ts): the document
   * holds OFFICE_MEMORY_FACTOR times its declared inflated size of it from before inflating until parsed.
   */
  memoryBudgetBytes?: number;
  /** The service whose concurrency slots, worker pools and memory budget the read uses (its runtime). */
  runtime?: ServiceRuntime;
  /** Aborts the wait for a slot or memory, and terminates the parser (the call's time limit). */
  signal?: AbortSignal;
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
  memoryBudgetBytes: 64 * 1024 * 1024,
} as const;

/**
 * Bytes held per inflated byte while a document is read: the checked entries, the stored zip built from them
 * (the parser's copy), and the parser's own strings and tree, which grow with the XML it reads.
 */
export const OFFICE_MEMORY_FACTOR = 4;

// Parts no reader here needs: embedded objects (themselves zips, so never inflated), macros and other
// binary blobs, thumbnails, obfuscated fonts.
const SKIP_PARTS = /(^|\/)embeddings\/|\.bin$|^docProps\/thumbnail\.|^word\/fonts\//i;
const skip = (name: string) => SKIP_PARTS.test(name);

// A document's images: kept in this thread (run.ts readDocx), never copied into the parser.
const DOCX_MEDIA = /^word\/media\/[^/]+$/;

// The parts a workbook read leaves compressed for the worker to inflate as far as it needs: the worksheets
// and the shared strings.
const STREAMED_PARTS = /^xl\/(worksheets\/[^/]+|sharedStrings)\.xml$/;

const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);


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
      saxes: require.resolve('saxes'),
      excelUtils: require.resolve('exceljs/lib/utils/utils.js'),
      defaultNumFormats: require.resolve('exceljs/lib/xlsx/defaultnumformats.js'),
      sharedFormula: require.resolve('exceljs/lib/utils/shared-formula.js'),
    };
  }
  return modules;
}

/**
 * One service's office readers (its ServiceRuntime holds them, OFFICE_WORKERS): the concurrency slots and the
 * worker pools, so that another service's reads neither take its slots nor end with its pools.
 */
class OfficeWorkers {
  #running = 0;
  readonly #waiting: Array<() => void> = [];
  // One pool per heap limit (a call may ask for its own) and young generation; a fresh worker per document, so
  // nothing one hostile document leaves behind meets the next. The slots above already bound how many run at once.
  readonly #pools = new Map<string, BoundedPool>();

  /** Waits for one of the concurrency slots (first in, first out), leaving the queue if `signal` aborts. */
  async withSlot<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    if (this.#running >= OFFICE_DEFAULTS.concurrency) {
      const waiting = this.#waiting;
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const i = waiting.indexOf(grant);
          if (i !== -1) waiting.splice(i, 1);
          reject(signal?.reason ?? new Error('aborted'));
        };
        const grant = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        waiting.push(grant);
      });
    }
    this.#running++;
    try {
      return await fn();
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  poolFor(memoryMb: number, youngMb: number): BoundedPool {
    const key = `${memoryMb}/${youngMb}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      pool = new BoundedPool({
        name: 'office',
        handler: handlerSource(officeWorkerJob, docxToMarkdown, XlsxText, XlsxRange, inflateLimitError, XlsxParts, XlsxFirstRows, XlsxRowSkipper),
        size: OFFICE_DEFAULTS.concurrency,
        reuse: false,
        resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: youngMb, stackSizeMb: 4 },
      });
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /** Its service closes: reads still running are stopped, and no worker is left. */
  close(): void {
    for (const pool of this.#pools.values()) pool.close();
    this.#pools.clear();
  }
}

/** The office workers of a service, made at its first office read. */
export const OFFICE_WORKERS = new PartKind(() => new OfficeWorkers());

/**
 * The worker's young generation by kind of job. Short-lived garbage is most of what a streaming workbook
 * read and a document conversion make, and the inflated chunks a streaming read goes through are freed
 * only when a scavenge finds them dead: a small young generation collects them while they are few (the
 * RSS figures in bench/README.md, "Office documents"). exceljs's workbook model lives long, so it keeps a
 * larger one.
 */
const YOUNG_GENERATION_MB: Record<WorkerJob['kind'], number> = { 'xlsx-range': 2, 'xlsx-first-rows': 2, docx: 8, xlsx: 32 };

/** Runs one job in a fresh worker under memoryMb and timeoutMs. */
async function runInWorker(workers: OfficeWorkers, job: WorkerJob, transfer: ArrayBuffer[], timeoutMs: number, memoryMb: number, signal: AbortSignal | undefined): Promise<WorkerReply> {
  try {
    return await workers.poolFor(memoryMb, YOUNG_GENERATION_MB[job.kind]).run<WorkerReply>(job, { timeoutMs, signal, transfer });
  } catch (err) {
    if (!(err instanceof WorkerFailure)) {
      const e = err as WorkerJobError;
      throw E.parserFailed(e.message);
    }
    if (err.kind === 'timeout') {
      throw E.parserTimedOut(timeoutMs);
    }
    if (err.kind === 'memory') {
      throw E.parserOverMemory(memoryMb);
    }
    if (err.kind === 'aborted') throw err.reason ?? err;
    throw E.parserStopped(err.message);
  }
}

function replyError(reply: Extract<WorkerReply, { ok: false }>, what: string): OfficeError {
  const code = isOfficeErrorCode(reply.code) ? reply.code : 'DOCUMENT_INVALID';
  if (code === 'DOCUMENT_INVALID') return E.documentUnreadableZip(what, reply.message);
  return E.workerOfficeError(code, reply.message);
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

/** The worker's images as attachments; a held one (docx) takes the bytes this thread kept for it. */
function toAttachments(raw: RawAttachment[], held: Map<string, Buffer> = new Map()): OfficeAttachment[] {
  return raw.map((a) => ({ name: a.name, media_type: a.media_type, bytes: (a.held !== undefined ? held.get(a.held) : undefined) ?? Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength) }));
}

/**
 * Checks and inflates the document and parses it in a worker, all inside one concurrency slot and holding
 * its share of the memory budget (taken once the central directory says how much will be inflated).
 */
async function parseOoxml(
  source: Buffer | FdSource,
  options: OfficeReadOptions,
  what: string,
  mainPart: RegExp,
  makeJob: (parts: XlsxStreamInput, held: HeldImages | undefined) => WorkerJob,
  keep: { defer?: RegExp; hold?: RegExp } = {},
) {
  const o = { ...OFFICE_DEFAULTS, ...options };
  const { defer, hold } = keep;
  const heldPrefix = `toolgate-held:${randomUUID()}:`;
  // A read outside a service (unit tests) has workers and a budget of its own, ended with the read.
  const workers = options.runtime?.part(OFFICE_WORKERS) ?? new OfficeWorkers();
  const budget = (options.runtime ? memoryBudgetOf(options.runtime, o.memoryBudgetBytes) : new MemoryBudget(o.memoryBudgetBytes));
  const read = workers.withSlot(o.signal, async () => {
    let release: (() => void) | undefined;
    try {
      const checked = await (async () => {
        const archive = await checkZip(source, {
          limits: options.zipLimits,
          skip,
          beforeInflate: async (declaredBytes) => {
            release = await budget.acquire(OFFICE_MEMORY_FACTOR * declaredBytes, o.signal);
          },
          ...(defer ? { defer: (name: string) => defer.test(name) } : {}),
          ...(hold ? { hold: { match: (name: string) => hold.test(name), placeholder: (name: string) => Buffer.from(heldPrefix + name, 'utf8') } } : {}),
        });
        if (!archive.entries.has('[Content_Types].xml') || ![...archive.entries.keys()].some((n) => mainPart.test(n))) {
          throw E.notOfficeZip(what);
        }
        // Only the stored copy (and the deferred parts, still compressed) outlive this function: the inflated
        // entries, views into the stored copy, are located by offset.
        const zip = storedZip(archive);
        const index: XlsxStreamInput['index'] = [...archive.entries].map(([name, data]) => [name, data.byteOffset, data.byteLength]);
        const { maxEntryBytes, maxTotalBytes, maxRatio, ratioGraceBytes } = archive.limits;
        const parts: XlsxStreamInput = {
          parts: zip.buffer as ArrayBuffer,
          index,
          deferred: archive.deferred.buffer as ArrayBuffer,
          deferredParts: archive.deferredEntries,
          limits: { maxEntryBytes, maxTotalBytes, maxRatio, ratioGraceBytes, inflatedSoFar: archive.inflatedBytes },
        };
        const held = archive.held.size > 0 ? { prefix: heldPrefix, sizes: Object.fromEntries(archive.held) } : undefined;
        return { parts, held, readHeld: archive.readHeld, inflatedBytes: archive.inflatedBytes };
      })();
      const transfer = [checked.parts.parts, ...(checked.parts.deferredParts.length > 0 ? [checked.parts.deferred] : [])];
      const reply = await runInWorker(workers, makeJob(checked.parts, checked.held), transfer, o.timeoutMs, o.memoryMb, o.signal);
      // The images the parser placed, inflated now that its worker and memory are gone (still in the slot).
      const wanted = reply.ok && reply.kind === 'docx' ? reply.result.attachments.flatMap((a) => (a.held !== undefined ? [a.held] : [])) : [];
      const held = await checked.readHeld(wanted);
      return { reply, held, inflatedBytes: checked.inflatedBytes };
    } finally {
      release?.();
    }
  });
  return options.runtime ? read : read.finally(() => workers.close());
}

/** A .docx as Markdown (headings, lists, tables, emphasis), its images as attachments. Throws OfficeError. */
export async function readDocx(source: Buffer | FdSource, options: OfficeReadOptions = {}): Promise<OfficeReadResult> {
  const o = { ...OFFICE_DEFAULTS, ...options };
  // Images stay in this thread (they are returned as they are): the parser gets a placeholder for each.
  const { reply, held, inflatedBytes } = await parseOoxml(
    source,
    options,
    '.docx document',
    /^word\/[^/]+\.xml$/,
    ({ parts }, heldImages) => ({
      kind: 'docx',
      zip: parts,
      modules: parserModules(),
      options: { maxImages: o.maxImages, maxImageBytes: o.maxImageBytes, ...(heldImages ? { held: heldImages } : {}) },
    }),
    { hold: DOCX_MEDIA },
  );
  if (!reply.ok) throw replyError(reply, '.docx document');
  if (reply.kind !== 'docx') throw E.parserWrongKind();
  const { text, truncated } = capText(reply.result.markdown, o.maxOutputBytes);
  return { text, truncated, attachments: toAttachments(reply.result.attachments, held), imagesOmitted: reply.result.imagesOmitted, warnings: reply.result.warnings, inflatedBytes };
}

/** A .xlsx/.xlsm workbook as one Markdown table per sheet (cached formula values), images as attachments. */
export async function readExcel(source: Buffer | FdSource, options: ExcelReadOptions = {}): Promise<OfficeReadResult> {
  const o = { ...OFFICE_DEFAULTS, ...options };
  const name = options.fileName?.toLowerCase() ?? '';
  if (name.endsWith('.xls')) throw E.xlsRefused();
  if (name.endsWith('.xlsb')) throw E.xlsbRefused();
  if (Buffer.isBuffer(source) && source.subarray(0, 8).equals(OLE_MAGIC)) {
    throw E.oleRefused();
  }
  const base = { sheet: options.sheet, formulas: options.formulas ?? false, maxOutputBytes: o.maxOutputBytes, maxImages: o.maxImages, maxImageBytes: o.maxImageBytes };
  // Both reads stream the sheet XML: the worksheets stay compressed until the worker inflates them, a range
  // (xlsx-stream.ts) as far as its last row, the default read (xlsx-first-rows.ts) as far as its answer
  // needs. A workbook the default read cannot answer as exceljs would is read whole by exceljs (xlsx.ts).
  const range = options.range;
  const bounds = range !== undefined ? parseA1Range(range) : undefined;
  const read = (job: (parts: XlsxStreamInput) => WorkerJob, defer: boolean) => parseOoxml(source, options, '.xlsx workbook', /^xl\/workbook\.xml$/, job, defer ? { defer: STREAMED_PARTS } : {});
  let { reply, inflatedBytes } = await read(
    (input): WorkerJob => (range !== undefined && bounds ? { kind: 'xlsx-range', input, modules: parserModules(), options: { ...base, range, bounds } } : { kind: 'xlsx-first-rows', input, modules: parserModules(), options: base }),
    true,
  );
  if (reply.ok && reply.kind === 'xlsx-fallback') {
    ({ reply, inflatedBytes } = await read((parts) => ({ kind: 'xlsx', zip: parts.parts, modules: parserModules(), options: base }), false));
  }
  if (!reply.ok) throw replyError(reply, '.xlsx workbook');
  if (reply.kind !== 'xlsx') throw E.parserWrongKind();
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
    inflatedBytes: inflatedBytes + (r.inflatedBytes ?? 0),
    sheets: r.sheets,
  };
}
