// The parts of an .xlsx as the streaming readers (xlsx-stream.ts for a range, xlsx-first-rows.ts for the
// default read) see them, in the office worker: the workbook, styles and relationships parsed from the
// checked parts, and the worksheets and shared strings, which arrive still compressed (zip-guard.ts,
// `defer`), inflated chunk by chunk under the guard's counters (inflateLimitError) only as far as a reader
// pulls them. Value rules are exceljs's own (its date, number-format and shared-formula helpers), so every
// reader shows the same cells.
//
// XlsxParts is shipped to the worker as source text (Function#toString), so it must be self-contained: no
// imports and nothing from outside its body; libraries and helpers come as arguments.
import type { SaxesParser as SaxesParserClass } from 'saxes';
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


export interface PartHandlers {
  /** Return true to stop: nothing more of the part is read. */
  open: (tag: string, attrs: Record<string, string>) => boolean | void;
  text?: (text: string) => void;
  close?: (tag: string) => boolean | void;
}

/** Sits between the inflated bytes and the parser (xlsx-stream.ts drops the rows before a range). */
export type PartFilter = (write: (bytes: Buffer) => void) => { push: (chunk: Buffer) => void; flush: () => void };

/** A part read on demand: each pump inflates and parses one more chunk. */
export interface PartStream {
  /** Feeds the parser the next chunk; false once the part has ended or a handler stopped it. */
  pump(): Promise<boolean>;
  /** Stops reading: nothing more is inflated. */
  stop(): void;
  /**
   * What the XML parser refused in what it was fed (events after it are dropped): the caller throws it
   * when it still needs what comes after, and ignores it when it already has what it answers with.
   */
  failure(): Error | null;
}

export type CellValue = { kind: 'shared'; index: number } | { kind: 'value'; value: unknown };

/** A `<c>` element as read: its attributes and the text of its `<f>`, `<v>` and inline `<is>`. */
export interface RawCell {
  address: string;
  row: number;
  col: number;
  s: number;
  t: string;
  f?: { text: string; t?: string; si?: string; ref?: string };
  v?: string;
  is?: string;
  inIs: boolean;
  inPhonetic: boolean;
  /** An inline string with a phonetic run, which exceljs loads without its text. */
  phonetic?: boolean;
}

export interface Area {
  top: number;
  left: number;
  bottom: number;
  right: number;
}

export interface Relationship {
  id: string;
  type: string;
  target: string;
  external: boolean;
}

export interface RowSkip {
  top: number;
  /** The last row dropped (0 when none), before the parser gets the first byte after it. */
  resume: (lastRow: number) => void;
}

export class XlsxParts {
  readonly partBytes = new Map<string, Buffer>();
  readonly deferred: Map<string, XlsxStreamInput['deferredParts'][number]>;
  /** Bytes this worker inflated, every part together (the guard's total counts them with its own). */
  inflatedBytes = 0;
  /** The `<sheet>` entries of workbook.xml in order; `type` is the relationship's (worksheet, chartsheet…). */
  readonly book: Array<{ name: string; state: string; part: string | undefined; type: string }> = [];
  date1904 = false;
  sharedStringsPart = 'xl/sharedStrings.xml';
  isDateStyle: boolean[] = [];

  constructor(
    readonly libs: XlsxStreamLibraries,
    readonly input: XlsxStreamInput,
  ) {
    for (const [name, offset, length] of input.index) this.partBytes.set(name, Buffer.from(input.parts, offset, length));
    this.deferred = new Map(input.deferredParts.map((p) => [p.name, p]));
    const stylesPart = this.readWorkbook();
    this.readStyles(stylesPart);
  }

  static officeError(code: string, message: string): Error {
    return Object.assign(new Error(message), { officeCode: code });
  }

  static localName(name: string): string {
    return name.slice(name.indexOf(':') + 1);
  }

  static columnNumber(letters: string): number {
    return [...letters.toUpperCase()].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0);
  }

  static decodeAddress(ref: string): { row: number; col: number } | null {
    const m = /^\$?([A-Za-z]{1,3})\$?(\d{1,7})$/.exec(ref);
    return m ? { col: XlsxParts.columnNumber(m[1] as string), row: Number(m[2]) } : null;
  }

  /** A `<dimension>` or merge reference as an area; a single cell too when `single`. */
  static area(ref: string | undefined, single: boolean): Area | null {
    const [a, b] = (ref ?? '').split(':');
    const from = a ? XlsxParts.decodeAddress(a) : null;
    const to = b ? XlsxParts.decodeAddress(b) : from;
    if (!from || !to || (!single && from.row === to.row && from.col === to.col)) return null;
    return { top: Math.min(from.row, to.row), left: Math.min(from.col, to.col), bottom: Math.max(from.row, to.row), right: Math.max(from.col, to.col) };
  }

  exists(name: string): boolean {
    return this.partBytes.has(name) || this.deferred.has(name);
  }

  // Relationship targets are relative to the part's folder, or absolute from the package root.
  static resolveTarget(from: string, target: string): string {
    const parts = target.startsWith('/') ? [] : from.split('/').slice(0, -1);
    for (const seg of target.replace(/^\//, '').split('/')) {
      if (seg === '..') parts.pop();
      else if (seg !== '.' && seg !== '') parts.push(seg);
    }
    return parts.join('/');
  }

  static dtdError(name: string): Error {
    return XlsxParts.officeError('ARCHIVE_UNSAFE', `Part '${name}' declares a DTD or entities (an XML entity-expansion pattern Office never writes); the document was not parsed.`);
  }

  /** A saxes parser calling `h`; a doctype is refused. With `tolerant`, a parse error is kept, not thrown. */
  parser(name: string, h: PartHandlers, tolerant: boolean) {
    const parser = new this.libs.SaxesParser({ position: false });
    const state: { stop: boolean; failure: Error | null } = { stop: false, failure: null };
    parser.on('doctype', () => {
      throw XlsxParts.dtdError(name);
    });
    if (tolerant) {
      parser.on('error', (err) => {
        state.failure ??= err;
        state.stop = true;
      });
    }
    parser.on('opentag', (node) => {
      if (!state.stop && h.open(XlsxParts.localName(node.name), node.attributes as Record<string, string>) === true) state.stop = true;
    });
    const text = h.text;
    if (text) parser.on('text', (t) => !state.stop && text(t));
    const close = h.close;
    if (close) parser.on('closetag', (node) => !state.stop && close(XlsxParts.localName(node.name)) === true && (state.stop = true));
    return { parser, state, decoder: new TextDecoder('utf-8') };
  }

  /** Parses a whole inflated part (or until a handler stops it). */
  parsePart(name: string, h: PartHandlers): void {
    const data = this.partBytes.get(name);
    if (!data) return;
    const { parser, state, decoder } = this.parser(name, h, false);
    const CHUNK = 256 * 1024;
    for (let at = 0; at < data.length && !state.stop; at += CHUNK) parser.write(decoder.decode(data.subarray(at, at + CHUNK), { stream: true }));
    if (!state.stop) parser.close();
  }

  relationships(part: string): Relationship[] {
    const out: Relationship[] = [];
    const i = part.lastIndexOf('/');
    this.parsePart(`${part.slice(0, i + 1)}_rels/${part.slice(i + 1)}.rels`, {
      open: (tag, a) => {
        if (tag === 'Relationship' && a.Id && a.Target) {
          const external = a.TargetMode === 'External';
          out.push({ id: a.Id, type: a.Type ?? '', target: external ? a.Target : XlsxParts.resolveTarget(part, a.Target), external });
        }
      },
    });
    return out;
  }

  /** The chunks of a part: from memory when it was inflated by the guard, else inflated here as pulled. */
  chunks(name: string): { next(): Promise<Buffer | null>; end(): void; compressed: number; declared: number } {
    const whole = this.partBytes.get(name);
    const part = this.deferred.get(name);
    const slices = (data: Buffer, size: number) => {
      let at = 0;
      return async () => (at < data.length ? data.subarray(at, (at += size)) : null);
    };
    if (whole || !part) return { next: slices(whole ?? Buffer.alloc(0), 256 * 1024), end: () => {}, compressed: 0, declared: -1 };
    const compressed = Buffer.from(this.input.deferred, part.offset, part.length);
    if (part.method === 0) return { next: slices(compressed, 64 * 1024), end: () => {}, compressed: part.length, declared: part.declared };
    const inflater = this.libs.zlib.createInflateRaw({ chunkSize: 64 * 1024 });
    inflater.end(compressed);
    const it = (inflater as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    return {
      next: async () => {
        try {
          const r = await it.next();
          return r.done ? null : (r.value as Buffer);
        } catch (err) {
          // zlib's errors (Z_DATA_ERROR, Z_BUF_ERROR: a damaged or cut deflate stream) are the container's.
          const code = (err as { code?: unknown }).code;
          if (typeof code === 'string' && code.startsWith('Z_')) {
            throw XlsxParts.officeError('ARCHIVE_CORRUPT', `The document's zip container is damaged or truncated (${name}: ${(err as Error).message}); ask for an intact copy or re-save the file.`);
          }
          throw err;
        }
      },
      end: () => inflater.destroy(),
      compressed: part.length,
      declared: part.declared,
    };
  }

  /**
   * Opens a part for reading on demand. Every inflated chunk passes the guard's checks before the parser
   * sees it: the counters (declared size, per entry, in all, ratio), a nested archive, a DTD marker.
   */
  open(name: string, h: PartHandlers, tolerant = true, filter?: PartFilter): PartStream {
    const { parser, state, decoder } = this.parser(name, h, tolerant);
    const write = (bytes: Buffer) => parser.write(decoder.decode(bytes, { stream: true }));
    const feed = filter ? filter(write) : { push: write, flush: () => {} };
    const source = this.chunks(name);
    const l = this.input.limits;
    // The guard's DTD check (zip-guard.ts) on the bytes as they come; only the UTF-8 forms, since the part
    // is decoded as UTF-8 (and saxes, which expands no declared entity, refuses a doctype anyway).
    const markers = ['<!DOCTYPE', '<!ENTITY'].map((s) => Buffer.from(s, 'latin1'));
    let count = 0;
    let tail = Buffer.alloc(0);
    let ended = false;
    const take = (chunk: Buffer) => {
      count += chunk.length;
      if (source.declared >= 0) {
        this.inflatedBytes += chunk.length;
        const limitError = this.libs.inflateLimitError(name, count, source.declared, source.compressed, l, l.inflatedSoFar + this.inflatedBytes - count);
        if (limitError) throw XlsxParts.officeError(limitError.code, limitError.message);
      }
      if (count === chunk.length) {
        // As the guard does for every entry: a part that is itself an archive is refused, not parsed.
        const s = chunk;
        if ((s.length >= 4 && s[0] === 0x50 && s[1] === 0x4b && [0x0304, 0x0506, 0x0708].includes(s.readUInt16BE(2))) || (s.length >= 2 && s[0] === 0x1f && s[1] === 0x8b)) {
          throw XlsxParts.officeError('ARCHIVE_UNSAFE', `The archive contains another archive ('${name}'); nested archives are refused.`);
        }
      }
      // A marker may straddle two chunks: the end of the previous one is searched with the start of this one.
      const seam = tail.length > 0 ? Buffer.concat([tail, chunk.subarray(0, 32)]) : null;
      if (markers.some((m) => chunk.includes(m) || (seam !== null && seam.includes(m)))) throw XlsxParts.dtdError(name);
      tail = Buffer.from(chunk.subarray(Math.max(0, chunk.length - 32)));
      feed.push(chunk);
    };
    const stop = () => {
      if (ended) return;
      ended = true;
      source.end();
    };
    return {
      pump: async () => {
        if (ended || state.stop) {
          stop();
          return false;
        }
        let chunk: Buffer | null;
        try {
          chunk = await source.next();
          if (chunk !== null) take(chunk);
        } catch (err) {
          stop();
          throw err;
        }
        if (chunk === null) {
          stop();
          if (source.declared >= 0 && count !== source.declared) {
            throw XlsxParts.officeError('ARCHIVE_CORRUPT', `The document's zip container is damaged or truncated (entry '${name}' has ${count} bytes, its header declares ${source.declared}); ask for an intact copy or re-save the file.`);
          }
          if (!state.stop) {
            feed.flush();
            parser.close();
          }
          return false;
        }
        if (state.stop) stop();
        return !state.stop;
      },
      stop,
      failure: () => state.failure,
    };
  }

  /** Reads a part to its end (or until a handler stops it); a parse error is thrown. */
  async readAll(name: string, h: PartHandlers, filter?: PartFilter): Promise<void> {
    const stream = this.open(name, h, false, filter);
    while (await stream.pump());
  }

  /**
   * Handlers for the shared strings part: each string (`<si>`, its `<t>` texts joined, the phonetic reading
   * `<rPh>` left out as exceljs leaves it) goes to `onString` with its index; true from it stops the read.
   */
  sharedStringHandlers(onString: (index: number, text: string) => boolean | void): PartHandlers {
    let index = -1;
    let text = '';
    let depth: 'none' | 'si' | 'phonetic' = 'none';
    let inT = false;
    return {
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
          depth = 'none';
          return onString(index, text);
        }
      },
    };
  }

  /** The workbook: sheets in order, the 1904 date system, where each sheet's part is; returns the styles part. */
  readWorkbook(): string {
    const rels = new Map(this.relationships('xl/workbook.xml').map((r) => [r.id, r]));
    this.parsePart('xl/workbook.xml', {
      open: (tag, a) => {
        if (tag === 'workbookPr') this.date1904 = a.date1904 === '1' || a.date1904 === 'true';
        if (tag === 'sheet') {
          const rel = rels.get(a['r:id'] ?? Object.entries(a).find(([k]) => XlsxParts.localName(k) === 'id')?.[1] ?? '');
          this.book.push({ name: a.name ?? '', state: a.state ?? 'visible', part: rel && !rel.external ? rel.target : undefined, type: rel?.type ?? '' });
        }
      },
    });
    const related = (type: string) => [...rels.values()].find((r) => r.type.endsWith(`/${type}`) && !r.external)?.target;
    this.sharedStringsPart = related('sharedStrings') ?? 'xl/sharedStrings.xml';
    return related('styles') ?? 'xl/styles.xml';
  }

  /** Which cell formats are dates (exceljs: the format's code, custom or built-in, per isDateFmt). */
  readStyles(stylesPart: string): void {
    const customFormats = new Map<string, string>();
    const xfFormats: string[] = [];
    let inCellXfs = false;
    this.parsePart(stylesPart, {
      open: (tag, a) => {
        if (tag === 'numFmt' && a.numFmtId !== undefined && a.formatCode !== undefined) customFormats.set(a.numFmtId, a.formatCode);
        else if (tag === 'cellXfs') inCellXfs = true;
        else if (tag === 'xf' && inCellXfs) xfFormats.push(a.numFmtId ?? '0');
      },
      close: (tag) => {
        if (tag === 'cellXfs') inCellXfs = false;
      },
    });
    const { excelUtils, defaultNumFormats } = this.libs;
    this.isDateStyle = xfFormats.map((id) => id !== '0' && excelUtils.isDateFmt(customFormats.get(id) ?? defaultNumFormats[id]?.f));
  }

  /**
   * A sheet's used range for the `sheets` summary, without reading its rows: the <dimension> it declares
   * before them; when that names one cell or is missing, the range is found from the cells themselves
   * (such a sheet is small, or written without one). As xlsx-stream.ts does for a range read.
   */
  async declaredDimension(part: string): Promise<Area | null> {
    let dims: Area | null = null;
    let cell: { row: number; col: number } | null = null;
    let counts = false;
    let rowNumber = 0;
    let colNumber = 0;
    await this.readAll(part, {
      open: (tag, a) => {
        if (tag === 'dimension') {
          dims = XlsxParts.area(a.ref, false);
          return dims !== null;
        }
        if (tag === 'row') {
          rowNumber = a.r !== undefined ? Number(a.r) : rowNumber + 1;
          colNumber = 0;
        } else if (tag === 'c') {
          const at = a.r !== undefined ? XlsxParts.decodeAddress(a.r) : null;
          colNumber = at ? at.col : colNumber + 1;
          cell = { row: at ? at.row : rowNumber, col: colNumber };
          // A cell with neither a value nor a style is one exceljs counts (a merged range's other cells).
          counts = a.s === undefined;
        } else if (tag === 'v' || tag === 'f' || tag === 'is') counts = true;
      },
      close: (tag) => {
        if (tag === 'c' && cell && counts) {
          const c = cell as { row: number; col: number };
          const d = dims as Area | null;
          dims = d ? { top: Math.min(d.top, c.row), left: Math.min(d.left, c.col), bottom: Math.max(d.bottom, c.row), right: Math.max(d.right, c.col) } : { top: c.row, left: c.col, bottom: c.row, right: c.col };
        }
      },
    });
    return dims;
  }

  /**
   * A cell's value and formula as exceljs loads them: a formula answers its cached result (a shared one is
   * slid from its master, remembered in `masters`), dates by the cell's style, strings by index.
   */
  cellValue(cell: RawCell, masters: Map<string, { formula: string; address: string }>): { value: CellValue | undefined; formula: string | undefined } {
    const { excelUtils, sharedFormula } = this.libs;
    const f = cell.f;
    const shared = f?.t === 'shared' && f.si !== undefined;
    if (shared && f.ref !== undefined && f.text !== '') masters.set(f.si as string, { formula: f.text, address: cell.address });
    const isDate = this.isDateStyle[cell.s] === true;
    const number = (v: string) => (isDate ? excelUtils.excelToDate(parseFloat(v), this.date1904) : parseFloat(v));
    if (f && (f.text !== '' || shared)) {
      const master = f.text === '' ? masters.get(f.si as string) : undefined;
      const formula = f.text !== '' ? f.text : master ? sharedFormula.slideFormula(master.formula, master.address, cell.address) : undefined;
      let result: unknown;
      if (cell.v !== undefined && cell.v !== '') {
        if (cell.t === 'str') result = excelUtils.xmlDecode(cell.v);
        else if (cell.t === 'b') result = parseInt(cell.v, 10) !== 0;
        else if (cell.t === 'e') result = { error: cell.v };
        else result = number(cell.v);
      }
      return { value: { kind: 'value', value: result }, formula };
    }
    if (cell.t === 'inlineStr' && cell.is !== undefined) return { value: { kind: 'value', value: cell.is }, formula: undefined };
    if (cell.v === undefined) return { value: undefined, formula: undefined };
    let value: unknown;
    if (cell.t === 's') return { value: { kind: 'shared', index: parseInt(cell.v, 10) }, formula: undefined };
    else if (cell.t === 'str') value = excelUtils.xmlDecode(cell.v);
    else if (cell.t === 'inlineStr') value = cell.v;
    else if (cell.t === 'b') value = parseInt(cell.v, 10) !== 0;
    else if (cell.t === 'e') value = { error: cell.v };
    else value = number(cell.v);
    return { value: { kind: 'value', value }, formula: undefined };
  }

  /** A value as text, as XlsxText.exceljsCellText shows it. */
  static valueText(v: unknown, formatDate: (d: Date) => string): string {
    if (v === null || v === undefined) return '';
    if (v instanceof Date) return formatDate(v);
    if (typeof v === 'number') return String(v);
    if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
    if (typeof v === 'string') return v;
    if (typeof v === 'object' && 'error' in v) return String((v as { error: unknown }).error);
    return String(v);
  }

  /** The images of a sheet, as exceljs lists them: anchored at their top-left cell, in the drawing's order. */
  sheetImages(sheetRels: Relationship[]): Array<{ row: number; col: number; part: string }> {
    const images: Array<{ row: number; col: number; part: string }> = [];
    for (const drawing of sheetRels.filter((r) => r.type.endsWith('/drawing') && !r.external)) {
      const media = new Map(this.relationships(drawing.target).map((r) => [r.id, r]));
      let from: { col: number; row: number } | null = null;
      let inFrom = false;
      let field: 'col' | 'row' | null = null;
      let fieldText = '';
      this.parsePart(drawing.target, {
        open: (tag, a) => {
          if (tag === 'from') {
            inFrom = true;
            from = { col: 0, row: 0 };
          } else if (inFrom && (tag === 'col' || tag === 'row')) {
            field = tag;
            fieldText = '';
          } else if (tag === 'blip') {
            const rel = media.get(a['r:embed'] ?? '');
            const at = from as { col: number; row: number } | null;
            if (rel && !rel.external && at) images.push({ col: at.col + 1, row: at.row + 1, part: rel.target });
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
    return images;
  }
}

/**
 * Rows before the range, dropped before the parser sees them: tokenizing them is most of a range's cost.
 * In well-formed XML every `<` starts markup (attribute values and text cannot hold one), so outside
 * comments, CDATA and processing instructions `<row` followed by a delimiter is a row's start tag. The
 * skipper finds the start tag of <sheetData>, then each `<row`, reads its `r`, and hands the parser
 * everything from the first row at or past `top` (or from `</sheetData>`). Where a skipped stretch holds
 * `<!` or `<?`, a row without `r`, or a row longer than a MiB, it stops skipping at the last row start it
 * knows, and the parser reads on from there; nothing after that point is ever dropped.
 *
 * A PartFilter (`new XlsxRowSkipper(skip, write)`), shipped to the office worker as source text like
 * XlsxParts: self-contained, no imports.
 */
export class XlsxRowSkipper {
  readonly empty: Buffer = Buffer.alloc(0);
  readonly ltBang = Buffer.from('<!', 'latin1');
  readonly ltQuestion = Buffer.from('<?', 'latin1');
  mode: 'head' | 'skip' | 'pass' = 'head';
  pending: Buffer = this.empty;
  scratch: Buffer = this.empty;
  lastRow = 0;
  rowTag: Buffer = this.empty;
  endTag: Buffer = this.empty;

  constructor(
    readonly skip: RowSkip,
    readonly write: (bytes: Buffer) => void,
  ) {}

  static isDelimiter(b: number | undefined): boolean {
    return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x3e || b === 0x2f;
  }

  /** Stops skipping: the parser gets everything from `from` on. */
  pass(buf: Buffer, from: number): void {
    this.mode = 'pass';
    this.pending = this.empty;
    this.skip.resume(this.lastRow);
    this.write(buf.subarray(from));
  }

  push(chunk: Buffer): void {
    if (this.mode === 'pass') return this.write(chunk);
    const buf = this.joinPending(chunk);
    this.pending = this.empty;
    let keep = 0;
    if (this.mode === 'head') {
      keep = this.passHead(buf);
      if (keep === -1) return;
    }
    this.skipRows(buf, keep);
  }

  flush(): void {
    if (this.mode === 'head' && this.pending.length > 0) this.write(this.pending);
    this.pending = this.empty;
  }

  /**
   * The unfinished row left from the last chunk, and this chunk, in one buffer reused from chunk to chunk:
   * a new one each time would be garbage the worker's GC does not see until much later.
   */
  joinPending(chunk: Buffer): Buffer {
    const pending = this.pending;
    if (pending.length === 0) return chunk;
    const need = pending.length + chunk.length;
    if (this.scratch.length < need) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(need, 2 * this.scratch.length, 256 * 1024));
      pending.copy(bigger, 0);
      this.scratch = bigger;
    } else pending.copy(this.scratch, 0);
    chunk.copy(this.scratch, pending.length);
    return this.scratch.subarray(0, need);
  }

  /**
   * Up to the start tag of <sheetData>: writes it through and returns the offset after it, or -1 when it
   * is not complete yet (kept pending) or cannot be trusted (then everything passes).
   */
  passHead(buf: Buffer): number {
    const at = buf.indexOf('sheetData');
    if (at === -1) {
      if (buf.length > 1024 * 1024) this.pass(buf, 0);
      else this.pending = Buffer.from(buf);
      return -1;
    }
    const lt = buf.lastIndexOf(0x3c, at);
    const prefix = lt === -1 ? '' : buf.subarray(lt + 1, at).toString('latin1');
    const gt = buf.indexOf(0x3e, at);
    // Only the XML declaration may come before it as markup other than elements.
    let head = buf.subarray(0, Math.max(lt, 0));
    const declaration = head.indexOf('<?xml');
    if (declaration !== -1 && declaration <= 3 && head.indexOf('?>', declaration) !== -1) head = head.subarray(head.indexOf('?>', declaration) + 2);
    const markup = head.indexOf('<!') !== -1 || head.indexOf('<?') !== -1;
    if (lt === -1 || !/^([A-Za-z_][\w.-]*:)?$/.test(prefix) || !XlsxRowSkipper.isDelimiter(buf[at + 9]) || markup) {
      this.pass(buf, 0);
      return -1;
    }
    if (gt === -1) {
      this.pending = Buffer.from(buf);
      return -1;
    }
    if (buf[gt - 1] === 0x2f) {
      this.pass(buf, 0);
      return -1;
    }
    this.write(buf.subarray(0, gt + 1));
    this.rowTag = Buffer.from(`<${prefix}row`, 'latin1');
    this.endTag = Buffer.from(`</${prefix}sheetData`, 'latin1');
    this.mode = 'skip';
    return gt + 1;
  }

  /** Drops the rows before `top` from `keep` on, keeping an unfinished one for the next chunk. */
  skipRows(buf: Buffer, keep: number): void {
    const rowTag = this.rowTag;
    // The first comment, CDATA, processing instruction or </sheetData> from here: no row past it is skipped.
    const marks = [buf.indexOf(this.ltBang, keep), buf.indexOf(this.ltQuestion, keep), buf.indexOf(this.endTag, keep)].filter((i) => i !== -1);
    const markAt = marks.length > 0 ? Math.min(...marks) : -1;
    let scan = keep;
    for (;;) {
      const at = buf.indexOf(rowTag, scan);
      if (markAt !== -1 && (at === -1 || markAt < at)) return this.pass(buf, keep);
      if (at === -1 || at + rowTag.length >= buf.length) break;
      if (!XlsxRowSkipper.isDelimiter(buf[at + rowTag.length])) {
        scan = at + 1;
        continue;
      }
      const found = this.rowNumberAt(buf, at);
      if (!found) break;
      if (found.r === 0 || found.r >= this.skip.top) return this.pass(buf, at);
      this.lastRow = found.r;
      keep = at;
      scan = found.next;
    }
    if (buf.length - keep > 1024 * 1024) return this.pass(buf, keep);
    this.pending = buf.subarray(keep);
  }

  /**
   * The `r` of the row tag at `at` (0 when it has none) and where to scan on; null when the tag is not
   * complete in `buf`.
   */
  rowNumberAt(buf: Buffer, at: number): { r: number; next: number } | null {
    // What Excel writes, `<row r="123" …`, read byte by byte; any other form by a pattern.
    let next = at + this.rowTag.length;
    if (buf[next] === 0x20 && buf[next + 1] === 0x72 && buf[next + 2] === 0x3d && buf[next + 3] === 0x22) {
      let n = 0;
      let i = next + 4;
      for (; i < buf.length && (buf[i] as number) >= 0x30 && (buf[i] as number) <= 0x39 && i < next + 12; i++) n = n * 10 + (buf[i] as number) - 0x30;
      if (buf[i] === 0x22 && i > next + 4) return { r: n, next: i };
    }
    const gt = buf.indexOf(0x3e, at);
    if (gt === -1) return null;
    const m = /\sr\s*=\s*["'](\d+)["']/.exec(buf.subarray(at, gt).toString('latin1'));
    next = gt;
    return { r: m ? Number(m[1]) : 0, next };
  }
}
