// A range of an .xlsx sheet → text, in the office worker (worker.ts), without loading the workbook: the
// worksheets and shared strings arrive still compressed (zip-guard.ts, `defer`) and are inflated here chunk by
// chunk under the guard's counters (inflateLimitError), rows before the range dropped unparsed, the rest
// parsed with saxes as it comes; inflating stops at the first row past the range. Output, errors and value
// rules are xlsx.ts's (exceljs's own date, number-format and shared-formula helpers), so a range reads as
// the same cells of a whole-sheet read. What this does not see, and why: docs/operations.md, "Office documents".
//
// xlsxRangeToText is shipped to the worker as source text (Function#toString), so it must be
// self-contained: no imports and nothing from outside its body; libraries and helpers come as arguments.
import type { SaxesParser as SaxesParserClass } from 'saxes';
import type { RawAttachment } from './docx.js';
import type { ConvertedWorkbook, SheetSummary, XlsxOptions } from './xlsx.js';
import { OfficeError } from './errors.js';
import type { inflateLimitError } from './zip-guard.js';

export interface XlsxStreamLibraries {
  SaxesParser: typeof SaxesParserClass;
  zlib: typeof import('node:zlib');
  /** exceljs/lib/utils/utils.js: the rules exceljs applies when it loads a workbook. */
  excelUtils: { xmlDecode(text: string): string; isDateFmt(fmt: string | undefined): boolean; excelToDate(v: number, date1904: boolean): Date };
  /** exceljs/lib/xlsx/defaultnumformats.js: built-in number formats by id. */
  defaultNumFormats: Record<string, { f: string }>;
  /** exceljs/lib/utils/shared-formula.js: a shared formula as written in another cell. */
  sharedFormula: { slideFormula(formula: string, fromCell: string, toCell: string): string };
  inflateLimitError: typeof inflateLimitError;
}

/** A part left compressed (a worksheet, the shared strings): its bytes at `offset` of the deferred buffer. */
export interface DeferredPart {
  name: string;
  offset: number;
  length: number;
  /** 0 stored, 8 deflated (the guard allows no other). */
  method: number;
  /** Inflated size its header declares. */
  declared: number;
}

export interface XlsxStreamInput {
  /** Inflated, checked parts: name → [offset, length] in `parts`. */
  parts: ArrayBuffer;
  index: Array<[string, number, number]>;
  deferred: ArrayBuffer;
  deferredParts: DeferredPart[];
  /** The guard's limits, and the bytes it already inflated (they count against maxTotalBytes). */
  limits: { maxEntryBytes: number; maxTotalBytes: number; maxRatio: number; ratioGraceBytes: number; inflatedSoFar: number };
}

export interface XlsxRangeOptions extends XlsxOptions {
  range: string;
  bounds: { sheet?: string; top: number; left: number; bottom: number; right: number };
}

export async function xlsxRangeToText(libs: XlsxStreamLibraries, input: XlsxStreamInput, opts: XlsxRangeOptions): Promise<ConvertedWorkbook & { inflatedBytes: number }> {
  const { SaxesParser, zlib, excelUtils, defaultNumFormats, sharedFormula } = libs;
  const officeError = (code: string, message: string) => Object.assign(new Error(message), { officeCode: code });
  const bounds = opts.bounds;
  const columnLetters = (n: number): string => {
    let s = '';
    for (let x = n; x > 0; x = Math.floor((x - 1) / 26)) s = String.fromCharCode(65 + ((x - 1) % 26)) + s;
    return s;
  };
  const decodeAddress = (ref: string): { row: number; col: number } | null => {
    const m = /^\$?([A-Za-z]{1,3})\$?(\d{1,7})$/.exec(ref);
    if (!m) return null;
    return { col: [...(m[1] as string).toUpperCase()].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0), row: Number(m[2]) };
  };
  const localName = (name: string) => name.slice(name.indexOf(':') + 1);

  const partBytes = new Map<string, Buffer>();
  for (const [name, offset, length] of input.index) partBytes.set(name, Buffer.from(input.parts, offset, length));
  const deferred = new Map(input.deferredParts.map((p) => [p.name, p]));
  const exists = (name: string) => partBytes.has(name) || deferred.has(name);

  // Relationship targets are relative to the part's folder, or absolute from the package root.
  const resolveTarget = (from: string, target: string): string => {
    const parts = target.startsWith('/') ? [] : from.split('/').slice(0, -1);
    for (const seg of target.replace(/^\//, '').split('/')) {
      if (seg === '..') parts.pop();
      else if (seg !== '.' && seg !== '') parts.push(seg);
    }
    return parts.join('/');
  };
  const relsOf = (part: string) => {
    const i = part.lastIndexOf('/');
    return `${part.slice(0, i + 1)}_rels/${part.slice(i + 1)}.rels`;
  };

  interface Handlers {
    /** Return true to stop: nothing more of the part is read. */
    open: (tag: string, attrs: Record<string, string>) => boolean | void;
    text?: (text: string) => void;
    close?: (tag: string) => boolean | void;
  }
  const dtdError = (name: string) => officeError('ARCHIVE_UNSAFE', `Part '${name}' declares a DTD or entities (an XML entity-expansion pattern Office never writes); the document was not parsed.`);
  const makeParser = (name: string, h: Handlers) => {
    const parser = new SaxesParser({ position: false });
    const state = { stop: false };
    parser.on('doctype', () => {
      throw dtdError(name);
    });
    parser.on('opentag', (node) => {
      if (!state.stop && h.open(localName(node.name), node.attributes as Record<string, string>) === true) state.stop = true;
    });
    const text = h.text;
    if (text) parser.on('text', (t) => !state.stop && text(t));
    const close = h.close;
    if (close) parser.on('closetag', (node) => !state.stop && close(localName(node.name)) === true && (state.stop = true));
    return { parser, state, decoder: new TextDecoder('utf-8') };
  };
  /** Parses a whole inflated part (or until a handler stops it). */
  const parsePart = (name: string, h: Handlers): void => {
    const data = partBytes.get(name);
    if (!data) return;
    const { parser, state, decoder } = makeParser(name, h);
    const CHUNK = 256 * 1024;
    for (let at = 0; at < data.length && !state.stop; at += CHUNK) parser.write(decoder.decode(data.subarray(at, at + CHUNK), { stream: true }));
    if (!state.stop) parser.close();
  };
  const relationships = (part: string): Array<{ id: string; type: string; target: string; external: boolean }> => {
    const out: Array<{ id: string; type: string; target: string; external: boolean }> = [];
    parsePart(relsOf(part), {
      open: (tag, a) => {
        if (tag === 'Relationship' && a.Id && a.Target) {
          const external = a.TargetMode === 'External';
          out.push({ id: a.Id, type: a.Type ?? '', target: external ? a.Target : resolveTarget(part, a.Target), external });
        }
      },
    });
    return out;
  };

  /**
   * Rows before the range, dropped before the parser sees them: tokenizing them is most of a range's cost.
   * In well-formed XML every `<` starts markup (attribute values and text cannot hold one), so outside
   * comments, CDATA and processing instructions `<row` followed by a delimiter is a row's start tag. The
   * skipper finds the start tag of <sheetData>, then each `<row`, reads its `r`, and hands the parser
   * everything from the first row at or past `top` (or from `</sheetData>`). Where a skipped stretch holds
   * `<!` or `<?`, a row without `r`, or a row longer than a MiB, it stops skipping at the last row start it
   * knows, and the parser reads on from there; nothing after that point is ever dropped.
   */
  interface RowSkip {
    top: number;
    /** The last row dropped (0 when none), before the parser gets the first byte after it. */
    resume: (lastRow: number) => void;
  }
  const EMPTY: Buffer = Buffer.alloc(0);
  const LT_BANG = Buffer.from('<!', 'latin1');
  const LT_QUESTION = Buffer.from('<?', 'latin1');
  const rowSkipper = (skip: RowSkip, write: (bytes: Buffer) => void) => {
    let mode: 'head' | 'skip' | 'pass' = 'head';
    let pending: Buffer = EMPTY;
    let scratch: Buffer = EMPTY;
    let lastRow = 0;
    let rowTag: Buffer = EMPTY;
    let endTag: Buffer = EMPTY;
    const isDelimiter = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x3e || b === 0x2f;
    const pass = (buf: Buffer, from: number) => {
      mode = 'pass';
      pending = EMPTY;
      skip.resume(lastRow);
      write(buf.subarray(from));
    };
    const push = (chunk: Buffer): void => {
      if (mode === 'pass') return write(chunk);
      // The unfinished row left from the last chunk, and this chunk, in one buffer reused from chunk to chunk:
      // a new one each time would be garbage the worker's GC does not see until much later.
      let buf = chunk;
      if (pending.length > 0) {
        const need = pending.length + chunk.length;
        if (scratch.length < need) {
          const bigger = Buffer.allocUnsafeSlow(Math.max(need, 2 * scratch.length, 256 * 1024));
          pending.copy(bigger, 0);
          scratch = bigger;
        } else pending.copy(scratch, 0);
        chunk.copy(scratch, pending.length);
        buf = scratch.subarray(0, need);
      }
      pending = EMPTY;
      let keep = 0;
      if (mode === 'head') {
        const at = buf.indexOf('sheetData');
        if (at === -1) {
          if (buf.length > 1024 * 1024) return pass(buf, 0);
          pending = Buffer.from(buf);
          return;
        }
        const lt = buf.lastIndexOf(0x3c, at);
        const prefix = lt === -1 ? '' : buf.subarray(lt + 1, at).toString('latin1');
        const gt = buf.indexOf(0x3e, at);
        // Only the XML declaration may come before it as markup other than elements.
        let head = buf.subarray(0, Math.max(lt, 0));
        const declaration = head.indexOf('<?xml');
        if (declaration !== -1 && declaration <= 3 && head.indexOf('?>', declaration) !== -1) head = head.subarray(head.indexOf('?>', declaration) + 2);
        const markup = head.indexOf('<!') !== -1 || head.indexOf('<?') !== -1;
        if (lt === -1 || !/^([A-Za-z_][\w.-]*:)?$/.test(prefix) || !isDelimiter(buf[at + 9]) || markup) return pass(buf, 0);
        if (gt === -1) {
          pending = Buffer.from(buf);
          return;
        }
        if (buf[gt - 1] === 0x2f) return pass(buf, 0);
        write(buf.subarray(0, gt + 1));
        rowTag = Buffer.from(`<${prefix}row`, 'latin1');
        endTag = Buffer.from(`</${prefix}sheetData`, 'latin1');
        mode = 'skip';
        keep = gt + 1;
      }
      // The first comment, CDATA, processing instruction or </sheetData> from here: no row past it is skipped.
      const marks = [buf.indexOf(LT_BANG, keep), buf.indexOf(LT_QUESTION, keep), buf.indexOf(endTag, keep)].filter((i) => i !== -1);
      const markAt = marks.length > 0 ? Math.min(...marks) : -1;
      let scan = keep;
      for (;;) {
        const at = buf.indexOf(rowTag, scan);
        if (markAt !== -1 && (at === -1 || markAt < at)) return pass(buf, keep);
        if (at === -1 || at + rowTag.length >= buf.length) break;
        if (!isDelimiter(buf[at + rowTag.length])) {
          scan = at + 1;
          continue;
        }
        // What Excel writes, `<row r="123" …`, read byte by byte; any other form by a pattern.
        let r = -1;
        let next = at + rowTag.length;
        if (buf[next] === 0x20 && buf[next + 1] === 0x72 && buf[next + 2] === 0x3d && buf[next + 3] === 0x22) {
          let n = 0;
          let i = next + 4;
          for (; i < buf.length && (buf[i] as number) >= 0x30 && (buf[i] as number) <= 0x39 && i < next + 12; i++) n = n * 10 + (buf[i] as number) - 0x30;
          if (buf[i] === 0x22 && i > next + 4) {
            r = n;
            next = i;
          }
        }
        if (r === -1) {
          const gt = buf.indexOf(0x3e, at);
          if (gt === -1) break;
          const m = /\sr\s*=\s*["'](\d+)["']/.exec(buf.subarray(at, gt).toString('latin1'));
          r = m ? Number(m[1]) : 0;
          next = gt;
        }
        if (r === 0 || r >= skip.top) return pass(buf, at);
        lastRow = r;
        keep = at;
        scan = next;
      }
      if (buf.length - keep > 1024 * 1024) return pass(buf, keep);
      pending = buf.subarray(keep);
    };
    const flush = () => {
      if (mode === 'head' && pending.length > 0) write(pending);
      pending = EMPTY;
    };
    return { push, flush };
  };

  let inflatedBytes = 0;
  // The guard's DTD check (zip-guard.ts) on the bytes as they come. Only the UTF-8 forms: this reader
  // decodes a worksheet as UTF-8, so a DTD in any other encoding never reaches the parser as one (and
  // saxes, which expands no declared entity, refuses a doctype anyway).
  const DTD_MARKERS = ['<!DOCTYPE', '<!ENTITY'].map((s) => Buffer.from(s, 'latin1'));
  /**
   * Streams one worksheet part through the parser, inflating it chunk by chunk under the guard's counters;
   * once a handler stops, nothing more is inflated. A part that was not deferred is parsed from memory.
   */
  const streamSheet = async (name: string, h: Handlers, skip?: RowSkip): Promise<void> => {
    const part = deferred.get(name);
    if (!part) return parsePart(name, h);
    const compressed = Buffer.from(input.deferred, part.offset, part.length);
    const { parser, state, decoder } = makeParser(name, h);
    const write = (bytes: Buffer) => parser.write(decoder.decode(bytes, { stream: true }));
    const feed = skip ? rowSkipper(skip, write) : { push: write, flush: () => {} };
    const l = input.limits;
    const totalBefore = l.inflatedSoFar + inflatedBytes;
    let count = 0;
    let tail = Buffer.alloc(0);
    const take = (chunk: Buffer) => {
      count += chunk.length;
      const limitError = libs.inflateLimitError(name, count, part.declared, part.length, l, totalBefore);
      if (limitError) throw officeError(limitError.code, limitError.message);
      if (count === chunk.length) {
        // As the guard does for every entry: a worksheet that is itself an archive is refused, not parsed.
        const s = chunk;
        if ((s.length >= 4 && s[0] === 0x50 && s[1] === 0x4b && [0x0304, 0x0506, 0x0708].includes(s.readUInt16BE(2))) || (s.length >= 2 && s[0] === 0x1f && s[1] === 0x8b)) {
          throw officeError('ARCHIVE_UNSAFE', `The archive contains another archive ('${name}'); nested archives are refused.`);
        }
      }
      // A marker may straddle two chunks: the end of the previous one is searched with the start of this one.
      const seam = tail.length > 0 ? Buffer.concat([tail, chunk.subarray(0, 32)]) : null;
      if (DTD_MARKERS.some((m) => chunk.includes(m) || (seam !== null && seam.includes(m)))) throw dtdError(name);
      tail = Buffer.from(chunk.subarray(Math.max(0, chunk.length - 32)));
      feed.push(chunk);
    };
    try {
      if (part.method === 0) {
        for (let at = 0; at < compressed.length && !state.stop; at += 64 * 1024) take(compressed.subarray(at, at + 64 * 1024));
      } else {
        const inflater = zlib.createInflateRaw({ chunkSize: 64 * 1024 });
        inflater.end(compressed);
        try {
          for await (const chunk of inflater as AsyncIterable<Buffer>) {
            take(chunk);
            if (state.stop) break;
          }
        } finally {
          inflater.destroy();
        }
      }
    } catch (err) {
      // zlib's errors (Z_DATA_ERROR, Z_BUF_ERROR: a damaged or cut deflate stream) are the container's.
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('Z_')) {
        throw officeError('ARCHIVE_CORRUPT', `The document's zip container is damaged or truncated (${name}: ${(err as Error).message}); ask for an intact copy or re-save the file.`);
      }
      throw err;
    } finally {
      inflatedBytes += count;
    }
    if (!state.stop) {
      if (count !== part.declared) throw officeError('ARCHIVE_CORRUPT', `The document's zip container is damaged or truncated (entry '${name}' has ${count} bytes, its header declares ${part.declared}); ask for an intact copy or re-save the file.`);
      feed.flush();
      parser.close();
    }
  };

  // The workbook: sheets in order, the 1904 date system, and where each sheet's part is.
  const workbookRels = new Map(relationships('xl/workbook.xml').map((r) => [r.id, r]));
  const book: Array<{ name: string; state: string; part: string | undefined }> = [];
  let date1904 = false;
  parsePart('xl/workbook.xml', {
    open: (tag, a) => {
      if (tag === 'workbookPr') date1904 = a.date1904 === '1' || a.date1904 === 'true';
      if (tag === 'sheet') {
        const rel = workbookRels.get(a['r:id'] ?? Object.entries(a).find(([k]) => localName(k) === 'id')?.[1] ?? '');
        book.push({ name: a.name ?? '', state: a.state ?? 'visible', part: rel && !rel.external ? rel.target : undefined });
      }
    },
  });
  const related = (type: string) => [...workbookRels.values()].find((r) => r.type.endsWith(`/${type}`) && !r.external)?.target;
  const sharedStringsPart = related('sharedStrings') ?? 'xl/sharedStrings.xml';
  const stylesPart = related('styles') ?? 'xl/styles.xml';

  const wantedSheet = opts.sheet ?? bounds.sheet;
  const available = () => book.map((s, i) => `${i + 1}: '${s.name}'`).join(', ');
  let selectedIndex = 0;
  if (wantedSheet !== undefined) {
    if (typeof wantedSheet === 'number') selectedIndex = wantedSheet - 1;
    else {
      selectedIndex = book.findIndex((s) => s.name === wantedSheet);
      if (selectedIndex === -1) selectedIndex = book.findIndex((s) => s.name.toLowerCase() === wantedSheet.toLowerCase());
    }
    if (!book[selectedIndex]) {
      throw officeError('INVALID_SELECTOR', `The workbook has no sheet ${typeof wantedSheet === 'number' ? `number ${wantedSheet}` : `'${wantedSheet}'`}; its sheets are ${available()}.`);
    }
  }

  // Styles: which cell formats are dates (exceljs: the format's code, custom or built-in, per isDateFmt).
  const customFormats = new Map<string, string>();
  const xfFormats: string[] = [];
  let inCellXfs = false;
  parsePart(stylesPart, {
    open: (tag, a) => {
      if (tag === 'numFmt' && a.numFmtId !== undefined && a.formatCode !== undefined) customFormats.set(a.numFmtId, a.formatCode);
      else if (tag === 'cellXfs') inCellXfs = true;
      else if (tag === 'xf' && inCellXfs) xfFormats.push(a.numFmtId ?? '0');
    },
    close: (tag) => {
      if (tag === 'cellXfs') inCellXfs = false;
    },
  });
  const isDateStyle = xfFormats.map((id) => id !== '0' && excelUtils.isDateFmt(customFormats.get(id) ?? defaultNumFormats[id]?.f));

  // Dimensions: the <dimension> a sheet declares before its rows; when it names one cell or is missing,
  // the used range is found from the cells themselves (such a sheet is small, or written without one).
  const rangeText = (d: { top: number; left: number; bottom: number; right: number }) => `${columnLetters(d.left)}${d.top}:${columnLetters(d.right)}${d.bottom}`;
  const declaredDimension = (ref: string | undefined) => {
    const [a, b] = (ref ?? '').split(':');
    const from = a ? decodeAddress(a) : null;
    const to = b ? decodeAddress(b) : null;
    return from && to && (from.row !== to.row || from.col !== to.col) ? { top: Math.min(from.row, to.row), left: Math.min(from.col, to.col), bottom: Math.max(from.row, to.row), right: Math.max(from.col, to.col) } : null;
  };
  const scanDimension = async (part: string): Promise<string | null> => {
    let dims: { top: number; left: number; bottom: number; right: number } | null = null;
    let cell: { row: number; col: number } | null = null;
    let counts = false;
    let rowNumber = 0;
    let colNumber = 0;
    await streamSheet(part, {
      open: (tag, a) => {
        if (tag === 'dimension') {
          dims = declaredDimension(a.ref);
          return dims !== null;
        }
        if (tag === 'row') {
          rowNumber = a.r !== undefined ? Number(a.r) : rowNumber + 1;
          colNumber = 0;
        } else if (tag === 'c') {
          const at = a.r !== undefined ? decodeAddress(a.r) : null;
          colNumber = at ? at.col : colNumber + 1;
          cell = { row: at ? at.row : rowNumber, col: colNumber };
          // A cell with neither a value nor a style is one exceljs counts (a merged range's other cells).
          counts = a.s === undefined;
        } else if (tag === 'v' || tag === 'f' || tag === 'is') counts = true;
      },
      close: (tag) => {
        if (tag === 'c' && cell && counts) {
          const c = cell as { row: number; col: number };
          const d = dims as { top: number; left: number; bottom: number; right: number } | null;
          dims = d ? { top: Math.min(d.top, c.row), left: Math.min(d.left, c.col), bottom: Math.max(d.bottom, c.row), right: Math.max(d.right, c.col) } : { top: c.row, left: c.col, bottom: c.row, right: c.col };
        }
      },
    });
    return dims ? rangeText(dims) : null;
  };

  // The selected sheet: its rows within the range, stopping at the first row past it.
  const selected = book[selectedIndex] as (typeof book)[number];
  const sheetPart = selected.part && exists(selected.part) ? selected.part : undefined;
  const sheetRels = sheetPart ? relationships(sheetPart) : [];
  const hyperlinkTargets = new Map(sheetRels.filter((r) => r.type.endsWith('/hyperlink')).map((r) => [r.id, r.target]));
  type Value = { kind: 'shared'; index: number } | { kind: 'value'; value: unknown };
  interface Cell {
    col: number;
    address: string;
    value: Value | undefined;
    formula: string | undefined;
  }
  const rows = new Map<number, Cell[]>();
  let selectedDims: string | null = null;
  let declared: { top: number; left: number; bottom: number; right: number } | null = null;
  const masters = new Map<string, { formula: string; address: string }>();
  const hyperlinks = new Map<string, string>();
  const sharedNeeded = new Set<number>();
  if (sheetPart) {
    let row: Cell[] | null = null;
    let rowNumber = 0;
    let colNumber = 0;
    let c: { address: string; col: number; s: number; t: string; f?: { text: string; t?: string; si?: string; ref?: string }; v?: string; is?: string; inIs: boolean; inPhonetic: boolean } | null = null;
    let current: 'f' | 'v' | 't' | null = null;
    let afterRows = false;
    const readOnForLinks = hyperlinkTargets.size > 0;
    // Shown formulas may be shared from a master cell above the range: then every row is parsed.
    const skipRows: RowSkip | undefined = opts.formulas ? undefined : { top: bounds.top, resume: (last) => (rowNumber = last) };
    await streamSheet(sheetPart, {
      open: (tag, a) => {
        if (afterRows) {
          if (tag === 'hyperlink' && a.ref) {
            const target = hyperlinkTargets.get(a['r:id'] ?? '');
            if (target !== undefined) hyperlinks.set(a.ref.toUpperCase(), target);
          }
          return;
        }
        switch (tag) {
          case 'dimension':
            declared = declaredDimension(a.ref);
            break;
          case 'row':
            rowNumber = a.r !== undefined ? Number(a.r) : rowNumber + 1;
            colNumber = 0;
            if (rowNumber > bounds.bottom) {
              afterRows = true;
              return !readOnForLinks;
            }
            row = rowNumber >= bounds.top ? [] : null;
            break;
          case 'c': {
            if (row === null && !opts.formulas) {
              c = null;
              break;
            }
            const at = a.r !== undefined ? decodeAddress(a.r) : null;
            colNumber = at ? at.col : colNumber + 1;
            const wanted = row !== null && colNumber >= bounds.left && colNumber <= bounds.right;
            // Cells outside the range matter only as shared-formula masters when formulas are shown.
            c = wanted || opts.formulas ? { address: `${columnLetters(colNumber)}${rowNumber}`, col: colNumber, s: Number(a.s ?? 0), t: a.t ?? 'n', inIs: false, inPhonetic: false } : null;
            break;
          }
          case 'f':
            if (c) {
              c.f = { text: '', t: a.t, si: a.si, ref: a.ref };
              current = 'f';
            }
            break;
          case 'v':
            if (c) {
              c.v = '';
              current = 'v';
            }
            break;
          case 'is':
            if (c) c.inIs = true;
            break;
          case 'rPh':
            if (c) c.inPhonetic = true;
            break;
          case 't':
            if (c?.inIs && !c.inPhonetic) {
              c.is ??= '';
              current = 't';
            }
            break;
        }
      },
      text: (text) => {
        if (!c || current === null) return;
        if (current === 'f') (c.f as { text: string }).text += text;
        else if (current === 'v') c.v += text;
        else c.is += text;
      },
      close: (tag) => {
        if (afterRows) return;
        if (tag === 'f' || tag === 'v' || tag === 't') current = null;
        else if (tag === 'rPh' && c) c.inPhonetic = false;
        else if (tag === 'sheetData') {
          afterRows = true;
          return !readOnForLinks;
        } else if (tag === 'row') {
          if (row !== null && row.length > 0) rows.set(rowNumber, row);
          row = null;
        } else if (tag === 'c' && c) {
          const cell = c;
          c = null;
          const f = cell.f;
          const shared = f?.t === 'shared' && f.si !== undefined;
          if (shared && f.ref !== undefined && f.text !== '') masters.set(f.si as string, { formula: f.text, address: cell.address });
          if (row === null || cell.col < bounds.left || cell.col > bounds.right) return;
          const isDate = isDateStyle[cell.s] === true;
          let formula: string | undefined;
          let value: Value | undefined;
          if (f && (f.text !== '' || shared)) {
            if (f.text !== '') formula = f.text;
            else {
              const master = masters.get(f.si as string);
              formula = master ? sharedFormula.slideFormula(master.formula, master.address, cell.address) : undefined;
            }
            let result: unknown;
            if (cell.v !== undefined && cell.v !== '') {
              if (cell.t === 'str') result = excelUtils.xmlDecode(cell.v);
              else if (cell.t === 'b') result = parseInt(cell.v, 10) !== 0;
              else if (cell.t === 'e') result = { error: cell.v };
              else result = isDate ? excelUtils.excelToDate(parseFloat(cell.v), date1904) : parseFloat(cell.v);
            }
            value = { kind: 'value', value: result };
          } else if (cell.t === 'inlineStr' && cell.is !== undefined) {
            value = { kind: 'value', value: cell.is };
          } else if (cell.v !== undefined) {
            if (cell.t === 's') {
              const index = parseInt(cell.v, 10);
              sharedNeeded.add(index);
              value = { kind: 'shared', index };
            } else if (cell.t === 'str') value = { kind: 'value', value: excelUtils.xmlDecode(cell.v) };
            else if (cell.t === 'inlineStr') value = { kind: 'value', value: cell.v };
            else if (cell.t === 'b') value = { kind: 'value', value: parseInt(cell.v, 10) !== 0 };
            else if (cell.t === 'e') value = { kind: 'value', value: { error: cell.v } };
            else value = { kind: 'value', value: isDate ? excelUtils.excelToDate(parseFloat(cell.v), date1904) : parseFloat(cell.v) };
          }
          (row as Cell[]).push({ col: cell.col, address: cell.address, value, formula });
        }
      },
    }, skipRows);
    selectedDims = declared ? rangeText(declared) : await scanDimension(sheetPart);
  }

  // Shared strings, inflated and parsed only up to the highest index the range uses.
  const strings = new Map<number, string>();
  if (sharedNeeded.size > 0) {
    const last = Math.max(...sharedNeeded);
    let index = -1;
    let text = '';
    let depth: 'none' | 'si' | 'phonetic' = 'none';
    let inT = false;
    await streamSheet(sharedStringsPart, {
      open: (tag) => {
        if (tag === 'si') {
          index++;
          text = '';
          depth = 'si';
        } else if (tag === 'rPh') depth = 'phonetic';
        else if (tag === 't' && depth === 'si') inT = true;
      },
      text: (t) => {
        if (inT) text += t;
      },
      close: (tag) => {
        if (tag === 't') inT = false;
        else if (tag === 'rPh') depth = 'si';
        else if (tag === 'si') {
          if (sharedNeeded.has(index)) strings.set(index, text);
          depth = 'none';
          return index >= last;
        }
      },
    });
  }

  const sheets: SheetSummary[] = [];
  for (const [i, s] of book.entries()) {
    let dimensions: string | null;
    if (i === selectedIndex) dimensions = selectedDims;
    else if (s.part && exists(s.part)) dimensions = await scanDimension(s.part);
    else dimensions = null;
    sheets.push({ index: i + 1, name: s.name, state: s.state, dimensions });
  }

  // xlsx.ts's formatDate again on purpose: this code runs in the worker from its source text (src/office/worker.ts), without imports.
  const formatDate = (d: Date): string => {
    if (Number.isNaN(d.getTime())) return '';
    const iso = d.toISOString();
    if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
    return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
  };
  const valueText = (v: unknown): string => {
    if (v === null || v === undefined) return '';
    if (v instanceof Date) return formatDate(v);
    if (typeof v === 'number') return String(v);
    if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
    if (typeof v === 'string') return v;
    if (typeof v === 'object' && 'error' in v) return String((v as { error: unknown }).error);
    return String(v);
  };
  const cellText = (cell: Cell | undefined): string => {
    if (!cell) return '';
    let text = cell.value === undefined ? '' : cell.value.kind === 'shared' ? (strings.get(cell.value.index) ?? '') : valueText(cell.value.value);
    const link = hyperlinks.get(cell.address);
    if (link !== undefined && link !== text) text = `[${text}](${link})`;
    if (opts.formulas && cell.formula) text = text === '' ? `=${cell.formula}` : `${text} (=${cell.formula})`;
    return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
  };

  const out: string[] = [];
  let outBytes = 0;
  let truncatedAt: ConvertedWorkbook['truncatedAt'] = null;
  const push = (line: string): boolean => {
    const bytes = Buffer.byteLength(line, 'utf8') + 1;
    if (outBytes + bytes > opts.maxOutputBytes) return false;
    out.push(line);
    outBytes += bytes;
    return true;
  };
  const attachments: RawAttachment[] = [];
  let imagesOmitted = 0;

  const summary = sheets[selectedIndex] as SheetSummary;
  const title = `## Sheet ${summary.index}: ${summary.name}${summary.state !== 'visible' ? ` (${summary.state})` : ''}`;
  if (!push(`${title}\n`)) truncatedAt = { sheet: summary.name, row: bounds.top };
  else {
    const ordered = [...rows.entries()].sort((a, b) => a[0] - b[0]).map(([r, cells]) => [r, new Map(cells.map((cell) => [cell.col, cell]))] as const);
    const lines: Array<[number, string[]]> = [];
    for (const [r, cells] of ordered) {
      const texts: string[] = [];
      for (let col = bounds.left; col <= bounds.right; col++) texts.push(cellText(cells.get(col)));
      if (texts.some((t) => t !== '')) lines.push([r, texts]);
    }
    if (lines.length === 0) push(`(no values in ${opts.range}; the sheet's used range is ${summary.dimensions ?? 'empty'})`);
    else {
      const header = ['', ...Array.from({ length: bounds.right - bounds.left + 1 }, (_, i) => columnLetters(bounds.left + i))];
      push(`| ${header.join(' | ')} |`);
      push(`|${header.map(() => '---').join('|')}|`);
      for (const [r, texts] of lines) {
        if (!push(`| ${r} | ${texts.join(' | ')} |`)) {
          truncatedAt = { sheet: summary.name, row: r };
          break;
        }
      }
    }
  }

  // Images of the sheet, as xlsx.ts shows them: anchored at their top-left cell, in the drawing's order.
  if (!truncatedAt && sheetPart) {
    const mediaTypes: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', jpg: 'image/jpeg', gif: 'image/gif', bmp: 'image/bmp', tiff: 'image/tiff', emf: 'image/emf', wmf: 'image/wmf', svg: 'image/svg+xml' };
    const images: Array<{ anchor: string; part: string }> = [];
    for (const drawing of sheetRels.filter((r) => r.type.endsWith('/drawing') && !r.external)) {
      const media = new Map(relationships(drawing.target).map((r) => [r.id, r]));
      let from: { col: number; row: number } | null = null;
      let inFrom = false;
      let field: 'col' | 'row' | null = null;
      let fieldText = '';
      parsePart(drawing.target, {
        open: (tag, a) => {
          if (tag === 'from') {
            inFrom = true;
            from = { col: 0, row: 0 };
          } else if (inFrom && (tag === 'col' || tag === 'row')) {
            field = tag;
            fieldText = '';
          } else if (tag === 'blip') {
            const rel = media.get(a['r:embed'] ?? '');
            if (rel && !rel.external && from) images.push({ anchor: `${columnLetters((from as { col: number }).col + 1)}${(from as { row: number }).row + 1}`, part: rel.target });
          }
        },
        text: (t) => {
          if (field) fieldText += t;
        },
        close: (tag) => {
          if (tag === 'from') inFrom = false;
          else if (field && tag === field) {
            (from as unknown as Record<string, number>)[field] = Math.floor(Number(fieldText)) || 0;
            field = null;
          } else if (tag === 'twoCellAnchor' || tag === 'oneCellAnchor') from = null;
        },
      });
    }
    if (images.length > 0) push('');
    let imageBytes = 0;
    for (const image of images) {
      const data = partBytes.get(image.part);
      if (!data) continue;
      if (attachments.length >= opts.maxImages || imageBytes + data.length > opts.maxImageBytes) {
        imagesOmitted++;
        push(`(image at ${image.anchor} left out: over the image limit)`);
        continue;
      }
      imageBytes += data.length;
      const ext = (/\.([^./]+)$/.exec(image.part)?.[1] ?? 'bin').toLowerCase();
      const name = `sheet${summary.index}-image${attachments.length + 1}.${ext === 'jpeg' ? 'jpg' : ext}`;
      attachments.push({ name, media_type: mediaTypes[ext] ?? 'application/octet-stream', bytes: new Uint8Array(data) });
      push(`![image at ${image.anchor}](attachment:${name})`);
    }
  }
  return { text: out.join('\n') + '\n', sheets, attachments, imagesOmitted, truncatedAt, inflatedBytes };
}

/**
 * An A1 range (`B2`, `A1:C10`, `$A$1:$C$10`, with an optional `Sheet!` or `'My sheet'!` prefix), checked in
 * the main thread before anything is inflated. Throws OfficeError INVALID_SELECTOR.
 */
export function parseA1Range(range: string): XlsxRangeOptions['bounds'] {
  const columnNumber = (letters: string): number => [...letters.toUpperCase()].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0);
  const m = /^(?:(?:'((?:[^']|'')+)'|([^!]+))!)?\$?([A-Za-z]{1,3})\$?(\d{1,7})(?::\$?([A-Za-z]{1,3})\$?(\d{1,7}))?$/.exec(range.trim());
  if (!m) throw new OfficeError('INVALID_SELECTOR', `Range '${range}' is not an A1 range; use e.g. 'A1:C10', 'B2' or 'Sheet1!A1:C10'.`);
  const sheet = m[1] !== undefined ? m[1].replace(/''/g, "'") : m[2];
  const c1 = columnNumber(m[3] as string);
  const r1 = Number(m[4]);
  const c2 = m[5] !== undefined ? columnNumber(m[5]) : c1;
  const r2 = m[6] !== undefined ? Number(m[6]) : r1;
  if (r1 < 1 || r2 < 1 || c1 > 16384 || c2 > 16384 || r1 > 1048576 || r2 > 1048576) throw new OfficeError('INVALID_SELECTOR', `Range '${range}' is outside a worksheet (A1:XFD1048576).`);
  return { ...(sheet !== undefined ? { sheet } : {}), top: Math.min(r1, r2), left: Math.min(c1, c2), bottom: Math.max(r1, r2), right: Math.max(c1, c2) };
}
