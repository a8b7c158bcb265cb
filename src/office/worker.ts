// The job of an office worker thread (see run.ts): parses one checked document in a fresh worker. The parsers
// run there, under the worker's heap limit and the caller's deadline, so that a document that makes them
// allocate or loop without end costs one terminated thread, not the service.
//
// officeWorkerJob is shipped to the worker as source text (Function#toString, like search/pool.ts), so
// it must be self-contained; the converters (docx.ts, xlsx.ts, the streaming readers) come as arguments, and the parser packages
// are loaded by the absolute paths the job names (resolved in the main thread from node_modules, since the
// production bundle cannot carry them into an eval'd worker).
import type { ConvertedDocx, DocxLibraries, HeldImages, ImageLimits, RawAttachment } from './docx.js';
import type { OfficeErrorCode } from './errors.js';
import type { ConvertedWorkbook, XlsxOptions, XlsxText } from './xlsx.js';
import type { XlsxRange, XlsxRangeOptions, XlsxStreamInput, XlsxStreamLibraries } from './xlsx-stream.js';
import type { XlsxFirstRows } from './xlsx-first-rows.js';
import type { XlsxParts, XlsxRowSkipper } from './xlsx-parts.js';

export interface ParserModules {
  mammoth: string;
  turndown: string;
  gfm: string;
  exceljs: string;
  saxes: string;
  /** exceljs's own helpers (utils, built-in number formats, shared formulas), for the range reader. */
  excelUtils: string;
  defaultNumFormats: string;
  sharedFormula: string;
}

export type WorkerJob =
  | { kind: 'docx'; zip: ArrayBuffer; modules: ParserModules; options: ImageLimits & { held?: HeldImages } }
  | { kind: 'xlsx'; zip: ArrayBuffer; modules: ParserModules; options: XlsxOptions }
  | { kind: 'xlsx-range'; input: XlsxStreamInput; modules: ParserModules; options: XlsxRangeOptions }
  | { kind: 'xlsx-first-rows'; input: XlsxStreamInput; modules: ParserModules; options: XlsxOptions };

export type WorkerReply =
  | { ok: true; kind: 'docx'; result: ConvertedDocx }
  | { ok: true; kind: 'xlsx'; result: ConvertedWorkbook & { inflatedBytes?: number } }
  /** The streaming default read cannot give exceljs's answer for this workbook (why): read it with exceljs. */
  | { ok: true; kind: 'xlsx-fallback'; reason: string }
  | { ok: false; code: OfficeErrorCode; message: string };

export interface Converters {
  docx: (libs: DocxLibraries, zip: Buffer, limits: ImageLimits & { held?: HeldImages }) => Promise<ConvertedDocx>;
  xlsx: typeof XlsxText;
  xlsxRange: typeof XlsxRange;
  inflateLimitError: XlsxStreamLibraries['inflateLimitError'];
  parts: typeof XlsxParts;
  firstRows: typeof XlsxFirstRows;
  rowSkipper: typeof XlsxRowSkipper;
}

/**
 * Parses one checked document in a worker of the office pool (run.ts, src/workers/bounded-pool.ts); a
 * failure the parser reports is part of the answer (`ok: false` with its office code), so that it keeps
 * its code across the thread boundary.
 */
export async function officeWorkerJob(
  job: WorkerJob,
  docx: Converters['docx'],
  xlsx: Converters['xlsx'],
  xlsxRange: Converters['xlsxRange'],
  inflateLimitError: Converters['inflateLimitError'],
  parts: Converters['parts'],
  firstRows: Converters['firstRows'],
  rowSkipper: Converters['rowSkipper'],
): Promise<{ result: WorkerReply; transfer: ArrayBuffer[] }> {
  const { createRequire } = process.getBuiltinModule('node:module');
  const load = (path: string) => createRequire(path)(path);
  let reply: WorkerReply;
  let attachments: RawAttachment[];
  try {
    if (job.kind === 'docx') {
      const libs = { mammoth: load(job.modules.mammoth), TurndownService: load(job.modules.turndown), gfm: load(job.modules.gfm) };
      const result = await docx(libs, Buffer.from(job.zip), job.options);
      attachments = result.attachments;
      reply = { ok: true, kind: 'docx', result };
    } else if (job.kind === 'xlsx-range' || job.kind === 'xlsx-first-rows') {
      // Not exceljs itself: saxes and three of exceljs's small modules, so a read costs what it reads.
      const m = job.modules;
      const libs = {
        SaxesParser: load(m.saxes).SaxesParser,
        zlib: process.getBuiltinModule('node:zlib'),
        excelUtils: load(m.excelUtils),
        defaultNumFormats: load(m.defaultNumFormats),
        sharedFormula: load(m.sharedFormula),
        inflateLimitError,
        XlsxParts: parts,
        XlsxText: xlsx,
        XlsxRowSkipper: rowSkipper,
      };
      if (job.kind === 'xlsx-range') {
        const result = await xlsxRange.read(libs, job.input, job.options);
        attachments = result.attachments;
        reply = { ok: true, kind: 'xlsx', result };
      } else {
        const result = await firstRows.read(libs, job.input, job.options);
        attachments = 'fallback' in result ? [] : result.attachments;
        reply = 'fallback' in result ? { ok: true, kind: 'xlsx-fallback', reason: result.fallback } : { ok: true, kind: 'xlsx', result };
      }
    } else {
      const result = await xlsx.fromExcelJS({ ExcelJS: load(job.modules.exceljs) }, Buffer.from(job.zip), job.options);
      attachments = result.attachments;
      reply = { ok: true, kind: 'xlsx', result };
    }
  } catch (err) {
    const e = err as { officeCode?: OfficeErrorCode; message?: unknown } | null;
    // Parser messages can be long or carry XML; one line, bounded, never a stack.
    const message = String(e?.message ?? err).split('\n')[0]?.slice(0, 300) ?? '';
    reply = { ok: false, code: e?.officeCode ?? 'DOCUMENT_INVALID', message };
    attachments = [];
  }
  return { result: reply, transfer: attachments.map((a) => a.bytes.buffer as ArrayBuffer) };
}
