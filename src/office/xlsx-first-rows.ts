// read_excel without a range, in the office worker: every selected sheet as XlsxText.fromExcelJS would show
// it, read with saxes from the sheet XML as it is inflated (xlsx-parts.ts), and inflating stops once the
// answer is known. A sheet's table is headed by the columns that hold text anywhere in the sheet and its
// summary names its used range, both facts about the whole sheet; the reader stops inside a sheet only when
// the rows it read prove them under the sheet's own `<dimension>`: no cell read lies outside it, its first
// row and both its edge columns hold text, and the rows read already pass the output cap. Its last row is
// then the one thing taken on trust, as a range read does for the other sheets. Otherwise (no dimension,
// text not reaching its edges) the sheet is read to its end, keeping only the rows that can still fit,
// and computed exactly. Where even that cannot match exceljs (rows out of order, a merged range's hidden
// cell with a value, a link on an empty cell) the worker answers `fallback` and run.ts reads the workbook
// with exceljs. docs/operations.md, "Office documents", says what the streaming readers do not see.
//
// XlsxFirstRows is shipped to the worker as source text (Function#toString), so it must be self-contained:
// no imports and nothing from outside its body; libraries and helpers come as arguments.
import type { ConvertedWorkbook, SheetSummary, XlsxOptions, XlsxText } from './xlsx.js';
import type { Area, CellValue, PartStream, RawCell, Relationship, XlsxParts } from './xlsx-parts.js';
import type { XlsxRangeLibraries, XlsxStreamInput } from './xlsx-stream.js';

/** The range reader's libraries: saxes, zlib, exceljs's helpers, XlsxParts and XlsxText. */
export type XlsxFirstRowsLibraries = XlsxRangeLibraries;

export type FirstRowsResult = (ConvertedWorkbook & { inflatedBytes: number }) | { fallback: string };

/** A cell with a value (exceljs's non-null cells): its text before links and escaping. */
interface ReadCell {
  col: number;
  value: CellValue;
  formula: string | undefined;
  text: string;
}

interface ReadRow {
  r: number;
  cells: ReadCell[];
}

/** What reading one sheet found: enough to write its table as exceljs would, or why it cannot. */
interface SheetFacts {
  /** Rows with text, in order, as far as they can be shown. */
  rows: ReadRow[];
  /** The used range (exceljs's dimensions): exact when read to the end, the declared one when stopped early. */
  area: Area | null;
  /** The columns holding text. */
  columns: { left: number; right: number } | null;
  fallback?: string;
}

/** One sheet read row by row; `done` is set once the rows read decide the sheet's answer. */
interface SheetRead {
  declared: Area | null;
  rows: ReadRow[];
  pending: ReadRow[];
  used: Area | null;
  textLeft: number;
  textRight: number;
  /** Bytes the kept rows need at least (each over its own columns); past the cap later rows are not kept. */
  lowerBound: number;
  cut: boolean;
  lastRow: number;
  merges: Area[];
  links: Map<string, string>;
  fallback: string | undefined;
  done: boolean;
}

export class XlsxFirstRows {
  static readonly TEXT_ONLY: CellValue = { kind: 'value', value: undefined };
  readonly strings: string[] = [];
  sharedStrings: PartStream | null = null;
  readonly out: XlsxText;

  constructor(
    readonly libs: XlsxFirstRowsLibraries,
    readonly parts: XlsxParts,
    readonly opts: XlsxOptions,
  ) {
    this.out = new libs.XlsxText(opts);
  }

  static async read(libs: XlsxFirstRowsLibraries, input: XlsxStreamInput, opts: XlsxOptions): Promise<FirstRowsResult> {
    const parts = new libs.XlsxParts(libs, input);
    const reader = new XlsxFirstRows(libs, parts, opts);
    try {
      return await reader.workbook();
    } finally {
      reader.sharedStrings?.stop();
    }
  }

  async workbook(): Promise<FirstRowsResult> {
    const { book } = this.parts;
    // exceljs lists worksheets alone (no chartsheet, no sheet without its part), numbered among themselves.
    const other = book.find((s) => !s.type.endsWith('/worksheet') || !s.part || !this.parts.exists(s.part));
    if (other) return { fallback: `sheet '${other.name}' is not a worksheet` };
    const T = this.libs.XlsxText;
    const available = book.map((s, i) => `${i + 1}: '${s.name}'`).join(', ');
    const selected = this.opts.sheet === undefined ? book.map((_, i) => i) : [book.indexOf(T.pickSheet(book, this.opts.sheet, available))];
    const areas = new Map<number, Area | null>();
    const areaOf = async (i: number) => {
      if (!areas.has(i)) {
        const part = this.partOf(i);
        areas.set(i, part ? await this.parts.declaredDimension(part) : null);
      }
      return areas.get(i) ?? null;
    };
    const summary = (i: number, area: Area | null): SheetSummary => ({ index: i + 1, name: book[i]?.name ?? '', state: book[i]?.state ?? 'visible', dimensions: area ? T.areaText(area) : null });
    for (const i of selected) {
      // A title that does not fit ends the answer at the sheet's first row, before a row of it is read.
      if (!this.out.title(summary(i, null), 0)) {
        this.out.truncatedAt = { sheet: book[i]?.name ?? '', row: (await areaOf(i))?.top ?? 1 };
        break;
      }
      const part = this.partOf(i);
      const rels = part ? this.parts.relationships(part) : [];
      const facts = part ? await this.sheet(part, rels) : { rows: [], area: null, columns: null };
      if (facts.fallback !== undefined) return { fallback: facts.fallback };
      areas.set(i, facts.area);
      if (!this.table(book[i]?.name ?? '', facts)) break;
      this.images(i + 1, rels);
    }
    const sheets: SheetSummary[] = [];
    for (let i = 0; i < book.length; i++) sheets.push(summary(i, await areaOf(i)));
    return { ...this.out.result(sheets), inflatedBytes: this.parts.inflatedBytes };
  }

  partOf(i: number): string | undefined {
    const part = this.parts.book[i]?.part;
    return part && this.parts.exists(part) ? part : undefined;
  }

  /** The shared strings up to `index`, inflated and parsed as far as that. */
  async stringsUpTo(index: number): Promise<void> {
    if (this.strings.length > index) return;
    // Every string in order: the strings before `index` are what the rows read so far name.
    this.sharedStrings ??= this.parts.open(
      this.parts.sharedStringsPart,
      this.parts.sharedStringHandlers((_i, text) => {
        this.strings.push(text);
      }),
    );
    const stream = this.sharedStrings;
    while (this.strings.length <= index) {
      if (await stream.pump()) continue;
      const failure = stream.failure();
      if (failure && this.strings.length <= index) throw failure;
      return;
    }
  }

  /** Reads a sheet as far as its answer needs (see the top of this file). */
  async sheet(part: string, rels: Relationship[]): Promise<SheetFacts> {
    const s: SheetRead = { declared: null, rows: [], pending: [], used: null, textLeft: Infinity, textRight: 0, lowerBound: 0, cut: false, lastRow: 0, merges: [], links: new Map(), fallback: undefined, done: false };
    const linkTargets = new Map(rels.filter((r) => r.type.endsWith('/hyperlink')).map((r) => [r.id, r.target]));
    // Links are listed after the rows and change the text of their cells: such a sheet is read to its end.
    const readToEnd = linkTargets.size > 0;
    const stream = this.parts.open(part, this.sheetHandlers(s, linkTargets));
    try {
      for (;;) {
        const more = await stream.pump();
        await this.settle(s, readToEnd);
        if (s.fallback !== undefined) return { rows: [], area: null, columns: null, fallback: s.fallback };
        if (s.done) return { rows: s.rows, area: s.declared, columns: { left: (s.declared as Area).left, right: (s.declared as Area).right } };
        if (more) continue;
        const failure = stream.failure();
        if (failure) throw failure;
        return this.wholeSheet(s);
      }
    } finally {
      stream.stop();
    }
  }

  /** saxes handlers that collect a sheet's rows (cells with a value), its dimension, merges and links. */
  sheetHandlers(s: SheetRead, linkTargets: Map<string, string>): Parameters<XlsxParts['open']>[1] {
    const P = this.libs.XlsxParts;
    const masters = new Map<string, { formula: string; address: string }>();
    let row: ReadRow | null = null;
    let rowNumber = 0;
    let colNumber = 0;
    let c: RawCell | null = null;
    let current: 'f' | 'v' | 't' | null = null;
    return {
      open: (tag, a) => {
        if (tag === 'dimension') s.declared = P.area(a.ref, false);
        else if (tag === 'row') {
          rowNumber = a.r !== undefined ? Number(a.r) : rowNumber + 1;
          colNumber = 0;
          row = { r: rowNumber, cells: [] };
        } else if (tag === 'c' && row) {
          const at = a.r !== undefined ? P.decodeAddress(a.r) : null;
          colNumber = at ? at.col : colNumber + 1;
          c = { address: `${this.libs.XlsxText.columnLetters(colNumber)}${rowNumber}`, row: rowNumber, col: colNumber, s: Number(a.s ?? 0), t: a.t ?? 'n', inIs: false, inPhonetic: false };
        } else if (tag === 'f' && c) {
          c.f = { text: '', t: a.t, si: a.si, ref: a.ref };
          current = 'f';
        } else if (tag === 'v' && c) {
          c.v = '';
          current = 'v';
        } else if (tag === 'is' && c) c.inIs = true;
        else if (tag === 'rPh' && c) c.inPhonetic = c.phonetic = true;
        else if (tag === 't' && c?.inIs && !c.inPhonetic) {
          c.is ??= '';
          current = 't';
        } else if (tag === 'mergeCell') {
          const merge = P.area(a.ref, true);
          if (merge) s.merges.push(merge);
        } else if (tag === 'hyperlink' && a.ref) {
          const target = linkTargets.get(a['r:id'] ?? '');
          if (target !== undefined) s.links.set(a.ref.toUpperCase(), target);
        }
      },
      text: (text) => {
        if (!c || current === null) return;
        if (current === 'f') (c.f as { text: string }).text += text;
        else if (current === 'v') c.v += text;
        else c.is += text;
      },
      close: (tag) => {
        if (tag === 'f' || tag === 'v' || tag === 't') current = null;
        else if (tag === 'rPh' && c) c.inPhonetic = false;
        else if (tag === 'c' && c && row) {
          // exceljs loads an inline string with a phonetic run as a string cell without a value.
          const { value, formula } = c.phonetic && c.t === 'inlineStr' && !c.f ? { value: { kind: 'value' as const, value: undefined }, formula: undefined } : this.parts.cellValue(c, masters);
          if (value !== undefined) row.cells.push({ col: c.col, value, formula, text: '' });
          c = null;
        } else if (tag === 'row' && row) {
          if (row.cells.length > 0) s.pending.push(row);
          row = null;
        }
      },
    };
  }

  /** Gives the rows parsed so far their text, keeps those that can still be shown, and decides if it can. */
  async settle(s: SheetRead, readToEnd: boolean): Promise<void> {
    const pending = s.pending;
    s.pending = [];
    let last = -1;
    for (const row of pending) for (const cell of row.cells) if (cell.value.kind === 'shared') last = Math.max(last, cell.value.index);
    if (last >= 0) await this.stringsUpTo(last);
    const T = this.libs.XlsxText;
    const P = this.libs.XlsxParts;
    for (const row of pending) {
      // exceljs sorts rows by number and merges repeated ones; a sheet written otherwise is left to it.
      if (row.r <= s.lastRow) {
        s.fallback = `row ${row.r} after row ${s.lastRow}`;
        return;
      }
      s.lastRow = row.r;
      let left = Infinity;
      let right = 0;
      for (const cell of row.cells) {
        cell.text = cell.value.kind === 'shared' ? (this.strings[cell.value.index] ?? '') : P.valueText(cell.value.value, T.formatDate);
        // The text is what is kept: a row held for the answer does not hold its dates and value objects.
        cell.value = XlsxFirstRows.TEXT_ONLY;
        s.used = XlsxFirstRows.grow(s.used, { top: row.r, left: cell.col, bottom: row.r, right: cell.col });
        if (!this.shows(cell)) continue;
        left = Math.min(left, cell.col);
        right = Math.max(right, cell.col);
      }
      if (right === 0) continue;
      s.textLeft = Math.min(s.textLeft, left);
      s.textRight = Math.max(s.textRight, right);
      if (s.cut) continue;
      s.rows.push(row);
      s.lowerBound += Buffer.byteLength(this.line(row, left, right), 'utf8') + 1;
      if (s.lowerBound > this.opts.maxOutputBytes) s.cut = true;
    }
    if (!readToEnd && s.cut && this.provenByDeclared(s)) s.done = true;
  }

  /**
   * Whether the rows read prove the sheet's header and first row under its declared dimension: every cell
   * read inside it, text in its first and last columns, its first row the first row read. The rows kept
   * then pass the cap, so the answer ends inside them.
   */
  provenByDeclared(s: SheetRead): boolean {
    const d = s.declared;
    const u = s.used;
    if (!d || !u) return false;
    const inside = u.top >= d.top && u.left >= d.left && u.bottom <= d.bottom && u.right <= d.right;
    return inside && u.top === d.top && s.textLeft === d.left && s.textRight === d.right;
  }

  /** Whether a cell's table text is not empty (XlsxText.cellMarkdown, without building it). */
  shows(cell: ReadCell): boolean {
    return cell.text !== '' || (this.opts.formulas && !!cell.formula);
  }

  static grow(a: Area | null, b: Area): Area {
    return a ? { top: Math.min(a.top, b.top), left: Math.min(a.left, b.left), bottom: Math.max(a.bottom, b.bottom), right: Math.max(a.right, b.right) } : b;
  }

  /** A row's table line over columns left..right, as XlsxText writes it. */
  line(row: ReadRow, left: number, right: number): string {
    return this.libs.XlsxText.rowLine(row.r, this.cellTexts(row, left, right));
  }

  cellTexts(row: ReadRow, left: number, right: number): string[] {
    const byCol = new Map(row.cells.map((c) => [c.col, c]));
    const texts: string[] = [];
    for (let col = left; col <= right; col++) {
      const cell = byCol.get(col);
      texts.push(cell ? this.libs.XlsxText.cellMarkdown(cell.text, cell.formula, this.opts.formulas) : '');
    }
    return texts;
  }

  /**
   * A sheet read to its end: merged ranges and links applied as exceljs applies them, the used range and
   * text columns exact. Where the rows not kept could change the answer, the workbook goes to exceljs.
   */
  wholeSheet(s: SheetRead): SheetFacts {
    let area = s.used;
    for (const merge of s.merges) area = XlsxFirstRows.grow(area, merge);
    const byRow = new Map(s.rows.map((row) => [row.r, row]));
    let changed = false;
    // A merged range shows its value once, in its top-left cell (exceljs drops the others' values).
    for (const m of s.merges) {
      for (let r = m.top; r <= m.bottom; r++) {
        const row = byRow.get(r);
        if (!row) continue;
        const before = row.cells.length;
        row.cells = row.cells.filter((c) => c.col < m.left || c.col > m.right || (r === m.top && c.col === m.left));
        changed ||= row.cells.length !== before;
      }
    }
    if (changed && s.cut) return { rows: [], area: null, columns: null, fallback: 'a merged range hides a value' };
    const lastKept = s.rows.at(-1)?.r ?? 0;
    for (const [ref, target] of s.links) {
      const at = this.libs.XlsxParts.decodeAddress(ref);
      if (!at) return { rows: [], area: null, columns: null, fallback: `a link on ${ref}` };
      area = XlsxFirstRows.grow(area, { top: at.row, left: at.col, bottom: at.row, right: at.col });
      const row = byRow.get(at.row);
      let cell = row?.cells.find((c) => c.col === at.col);
      if (row && !cell) {
        // exceljs gives a link on an empty cell a value: `[](target)`.
        cell = { col: at.col, value: { kind: 'value', value: undefined }, formula: undefined, text: '' };
        row.cells.push(cell);
        row.cells.sort((a, b) => a.col - b.col);
      }
      if (cell) {
        if (target !== cell.text) cell.text = `[${cell.text}](${target})`;
        s.textLeft = Math.min(s.textLeft, at.col);
        s.textRight = Math.max(s.textRight, at.col);
        continue;
      }
      // A row not kept: without text before (it would now be shown), or one after the rows kept, which
      // matters only when it widens the columns shown.
      if (!s.cut || at.row <= lastKept || at.col < s.textLeft || at.col > s.textRight) return { rows: [], area: null, columns: null, fallback: `a link on ${ref}` };
    }
    let columns: SheetFacts['columns'] = s.textRight > 0 ? { left: s.textLeft, right: s.textRight } : null;
    if (!s.cut) {
      let left = Infinity;
      let right = 0;
      for (const row of s.rows) {
        for (const cell of row.cells) {
          if (!this.shows(cell)) continue;
          left = Math.min(left, cell.col);
          right = Math.max(right, cell.col);
        }
      }
      columns = right > 0 ? { left, right } : null;
    }
    return { rows: s.rows, area, columns };
  }

  /** A sheet's table after its title; false when the output stopped inside it. */
  table(sheet: string, facts: SheetFacts): boolean {
    const T = this.libs.XlsxText;
    if (!facts.area || !facts.columns) {
      this.out.push('(empty sheet)');
      return true;
    }
    const { left, right } = facts.columns;
    for (const line of T.tableHeader(left, right)) this.out.push(line);
    for (const row of facts.rows) {
      const texts = this.cellTexts(row, left, right);
      if (texts.every((t) => t === '')) continue;
      if (!this.out.row(sheet, row.r, texts)) return false;
    }
    return true;
  }

  images(sheetIndex: number, rels: Relationship[]): void {
    const images = this.parts.sheetImages(rels);
    if (images.length > 0) this.out.push('');
    for (const image of images) {
      const data = this.parts.partBytes.get(image.part);
      if (!data) continue;
      const anchor = `${this.libs.XlsxText.columnLetters(image.col)}${image.row}`;
      this.out.image(sheetIndex, anchor, /\.([^./]+)$/.exec(image.part)?.[1] ?? 'bin', data);
    }
  }
}
