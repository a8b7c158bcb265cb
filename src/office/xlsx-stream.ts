// A range of an .xlsx sheet → text, in the office worker (worker.ts), without loading the workbook: the
// worksheets and shared strings arrive still compressed (zip-guard.ts, `defer`) and are inflated chunk by
// chunk under the guard's counters (xlsx-parts.ts), rows before the range dropped unparsed, the rest
// parsed with saxes as it comes; inflating stops at the first row past the range. Output, errors and value
// rules are the whole-sheet readers' (XlsxText; exceljs's own date, number-format and shared-formula
// helpers), so a range reads as the same cells of a whole-sheet read. What this does not see, and why:
// docs/operations.md, "Office documents".
//
// XlsxRange is shipped to the worker as source text (Function#toString), so it must be self-contained: no
// imports and nothing from outside its body; libraries and helpers come as arguments.
import type { ConvertedWorkbook, SheetSummary, XlsxOptions, XlsxText } from './xlsx.js';
import { E } from '../errors.js';
import type { Area, CellValue, PartHandlers, RawCell, Relationship, RowSkip, XlsxParts, XlsxRowSkipper, XlsxStreamInput, XlsxStreamLibraries } from './xlsx-parts.js';

export type { DeferredPart, XlsxStreamInput, XlsxStreamLibraries } from './xlsx-parts.js';

export interface XlsxRangeLibraries extends XlsxStreamLibraries {
  XlsxParts: typeof XlsxParts;
  XlsxText: typeof XlsxText;
  XlsxRowSkipper: typeof XlsxRowSkipper;
}

export interface XlsxRangeOptions extends XlsxOptions {
  range: string;
  bounds: { sheet?: string; top: number; left: number; bottom: number; right: number };
}

/** One cell of the range, as the table shows it. */
interface RangeCell {
  col: number;
  address: string;
  value: CellValue | undefined;
  formula: string | undefined;
}

/**
 * Reads a range of one sheet: the selected sheet's rows within the range (stopping at the first row past
 * it), the shared strings they use, every sheet's summary, then the table and the sheet's images. The
 * instance holds the selected sheet's parser state; each tag the parser meets goes to open/text/close.
 */
export class XlsxRange {
  readonly rows = new Map<number, RangeCell[]>();
  readonly masters = new Map<string, { formula: string; address: string }>();
  readonly hyperlinks = new Map<string, string>();
  readonly sharedNeeded = new Set<number>();
  readonly strings = new Map<number, string>();
  hyperlinkTargets = new Map<string, string>();
  declared: Area | null = null;
  // Where the parser is in the selected sheet.
  row: RangeCell[] | null = null;
  rowNumber = 0;
  colNumber = 0;
  c: RawCell | null = null;
  current: 'f' | 'v' | 't' | null = null;
  afterRows = false;

  constructor(
    readonly libs: XlsxRangeLibraries,
    readonly parts: XlsxParts,
    readonly opts: XlsxRangeOptions,
  ) {}

  static async read(libs: XlsxRangeLibraries, input: XlsxStreamInput, opts: XlsxRangeOptions): Promise<ConvertedWorkbook & { inflatedBytes: number }> {
    return new XlsxRange(libs, new libs.XlsxParts(libs, input), opts).workbook();
  }

  async workbook(): Promise<ConvertedWorkbook & { inflatedBytes: number }> {
    const T = this.libs.XlsxText;
    const { parts, opts } = this;
    const { book } = parts;
    const wantedSheet = opts.sheet ?? opts.bounds.sheet;
    const selectedIndex = wantedSheet === undefined ? 0 : book.indexOf(T.pickSheet(book, wantedSheet, book.map((s, i) => `${i + 1}: '${s.name}'`).join(', ')));
    const selected = book[selectedIndex] as (typeof book)[number];
    const sheetPart = selected.part && parts.exists(selected.part) ? selected.part : undefined;
    const sheetRels = sheetPart ? parts.relationships(sheetPart) : [];
    this.hyperlinkTargets = new Map(sheetRels.filter((r) => r.type.endsWith('/hyperlink')).map((r) => [r.id, r.target]));
    const selectedDims = sheetPart ? await this.readSelected(sheetPart) : null;
    await this.readSharedStrings();
    const sheets = await this.summaries(selectedIndex, selectedDims);
    const out = new T(opts);
    const summary = sheets[selectedIndex] as SheetSummary;
    if (out.title(summary, opts.bounds.top)) this.table(out, summary);
    // Images of the sheet, as the whole-sheet readers show them.
    if (!out.truncatedAt && sheetPart) this.images(out, summary, sheetRels);
    return { ...out.result(sheets), inflatedBytes: parts.inflatedBytes };
  }

  areaText(d: Area | null): string | null {
    return d ? this.libs.XlsxText.areaText(d) : null;
  }

  /** The selected sheet's rows within the range; returns its dimensions. */
  async readSelected(sheetPart: string): Promise<string | null> {
    const { XlsxRowSkipper: Skipper } = this.libs;
    // Shown formulas may be shared from a master cell above the range: then every row is parsed.
    const skipRows: RowSkip | undefined = this.opts.formulas ? undefined : { top: this.opts.bounds.top, resume: (last) => (this.rowNumber = last) };
    const handlers: PartHandlers = { open: (tag, a) => this.open(tag, a), text: (text) => this.text(text), close: (tag) => this.close(tag) };
    await this.parts.readAll(sheetPart, handlers, skipRows ? (write) => new Skipper(skipRows, write) : undefined);
    return this.declared ? this.areaText(this.declared) : this.areaText(await this.parts.declaredDimension(sheetPart));
  }

  open(tag: string, a: Record<string, string>): boolean | void {
    if (this.afterRows) {
      if (tag === 'hyperlink' && a.ref) {
        const target = this.hyperlinkTargets.get(a['r:id'] ?? '');
        if (target !== undefined) this.hyperlinks.set(a.ref.toUpperCase(), target);
      }
      return;
    }
    if (tag === 'dimension') this.declared = this.libs.XlsxParts.area(a.ref, false);
    else if (tag === 'row') return this.openRow(a);
    else if (tag === 'c') this.openCell(a);
    else this.openInCell(tag, a);
  }

  /** A row: past the range the sheet's rows end here (read on only for hyperlinks). */
  openRow(a: Record<string, string>): boolean | void {
    this.rowNumber = a.r !== undefined ? Number(a.r) : this.rowNumber + 1;
    this.colNumber = 0;
    if (this.rowNumber > this.opts.bounds.bottom) {
      this.afterRows = true;
      return this.hyperlinkTargets.size === 0;
    }
    this.row = this.rowNumber >= this.opts.bounds.top ? [] : null;
  }

  openCell(a: Record<string, string>): void {
    const { bounds, formulas } = this.opts;
    if (this.row === null && !formulas) {
      this.c = null;
      return;
    }
    const at = a.r !== undefined ? this.libs.XlsxParts.decodeAddress(a.r) : null;
    this.colNumber = at ? at.col : this.colNumber + 1;
    const col = this.colNumber;
    const wanted = this.row !== null && col >= bounds.left && col <= bounds.right;
    // Cells outside the range matter only as shared-formula masters when formulas are shown.
    this.c = wanted || formulas ? { address: `${this.libs.XlsxText.columnLetters(col)}${this.rowNumber}`, row: this.rowNumber, col, s: Number(a.s ?? 0), t: a.t ?? 'n', inIs: false, inPhonetic: false } : null;
  }

  /** The tags inside a cell: formula, value, inline string (its phonetic runs left out). */
  openInCell(tag: string, a: Record<string, string>): void {
    const c = this.c;
    if (!c) return;
    if (tag === 'f') {
      c.f = { text: '', t: a.t, si: a.si, ref: a.ref };
      this.current = 'f';
    } else if (tag === 'v') {
      c.v = '';
      this.current = 'v';
    } else if (tag === 'is') c.inIs = true;
    else if (tag === 'rPh') c.inPhonetic = true;
    else if (tag === 't' && c.inIs && !c.inPhonetic) {
      c.is ??= '';
      this.current = 't';
    }
  }

  text(text: string): void {
    const c = this.c;
    if (!c || this.current === null) return;
    if (this.current === 'f') (c.f as { text: string }).text += text;
    else if (this.current === 'v') c.v += text;
    else c.is += text;
  }

  close(tag: string): boolean | void {
    if (this.afterRows) return;
    if (tag === 'f' || tag === 'v' || tag === 't') this.current = null;
    else if (tag === 'rPh' && this.c) this.c.inPhonetic = false;
    else if (tag === 'sheetData') {
      this.afterRows = true;
      return this.hyperlinkTargets.size === 0;
    } else if (tag === 'row') {
      if (this.row !== null && this.row.length > 0) this.rows.set(this.rowNumber, this.row);
      this.row = null;
    } else if (tag === 'c' && this.c) this.closeCell(this.c);
  }

  /** A cell in the range joins its row; one outside it may still be a shared formula's master. */
  closeCell(cell: RawCell): void {
    const { bounds } = this.opts;
    this.c = null;
    if (this.row === null || cell.col < bounds.left || cell.col > bounds.right) {
      const f = cell.f;
      if (f?.t === 'shared' && f.si !== undefined && f.ref !== undefined && f.text !== '') this.masters.set(f.si, { formula: f.text, address: cell.address });
      return;
    }
    const { value, formula } = this.parts.cellValue(cell, this.masters);
    if (value?.kind === 'shared') this.sharedNeeded.add(value.index);
    this.row.push({ col: cell.col, address: cell.address, value, formula });
  }

  /** Shared strings, inflated and parsed only up to the highest index the range uses. */
  async readSharedStrings(): Promise<void> {
    const { sharedNeeded, strings } = this;
    if (sharedNeeded.size === 0) return;
    const last = Math.max(...sharedNeeded);
    await this.parts.readAll(
      this.parts.sharedStringsPart,
      this.parts.sharedStringHandlers((index, text) => {
        if (sharedNeeded.has(index)) strings.set(index, text);
        return index >= last;
      }),
    );
  }

  async summaries(selectedIndex: number, selectedDims: string | null): Promise<SheetSummary[]> {
    const sheets: SheetSummary[] = [];
    for (const [i, s] of this.parts.book.entries()) {
      let dimensions: string | null;
      if (i === selectedIndex) dimensions = selectedDims;
      else if (s.part && this.parts.exists(s.part)) dimensions = this.areaText(await this.parts.declaredDimension(s.part));
      else dimensions = null;
      sheets.push({ index: i + 1, name: s.name, state: s.state, dimensions });
    }
    return sheets;
  }

  cellText(cell: RangeCell | undefined): string {
    if (!cell) return '';
    const T = this.libs.XlsxText;
    let text = cell.value === undefined ? '' : cell.value.kind === 'shared' ? (this.strings.get(cell.value.index) ?? '') : this.libs.XlsxParts.valueText(cell.value.value, T.formatDate);
    const link = this.hyperlinks.get(cell.address);
    if (link !== undefined && link !== text) text = `[${text}](${link})`;
    return T.cellMarkdown(text, cell.formula, this.opts.formulas);
  }

  /** The range's rows with a value, as a table under the title. */
  table(out: XlsxText, summary: SheetSummary): void {
    const { bounds } = this.opts;
    const ordered = [...this.rows.entries()].sort((a, b) => a[0] - b[0]).map(([r, cells]) => [r, new Map(cells.map((cell) => [cell.col, cell]))] as const);
    const lines: Array<[number, string[]]> = [];
    for (const [r, cells] of ordered) {
      const texts: string[] = [];
      for (let col = bounds.left; col <= bounds.right; col++) texts.push(this.cellText(cells.get(col)));
      if (texts.some((t) => t !== '')) lines.push([r, texts]);
    }
    if (lines.length === 0) out.push(`(no values in ${this.opts.range}; the sheet's used range is ${summary.dimensions ?? 'empty'})`);
    else {
      for (const line of this.libs.XlsxText.tableHeader(bounds.left, bounds.right)) out.push(line);
      for (const [r, texts] of lines) if (!out.row(summary.name, r, texts)) break;
    }
  }

  images(out: XlsxText, summary: SheetSummary, sheetRels: Relationship[]): void {
    const images = this.parts.sheetImages(sheetRels);
    if (images.length > 0) out.push('');
    for (const image of images) {
      const data = this.parts.partBytes.get(image.part);
      if (data) out.image(summary.index, `${this.libs.XlsxText.columnLetters(image.col)}${image.row}`, /\.([^./]+)$/.exec(image.part)?.[1] ?? 'bin', data);
    }
  }
}

/**
 * An A1 range (`B2`, `A1:C10`, `$A$1:$C$10`, with an optional `Sheet!` or `'My sheet'!` prefix), checked in
 * the main thread before anything is inflated. Throws OfficeError INVALID_SELECTOR.
 */
export function parseA1Range(range: string): XlsxRangeOptions['bounds'] {
  const columnNumber = (letters: string): number => [...letters.toUpperCase()].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0);
  const m = /^(?:(?:'((?:[^']|'')+)'|([^!]+))!)?\$?([A-Za-z]{1,3})\$?(\d{1,7})(?::\$?([A-Za-z]{1,3})\$?(\d{1,7}))?$/.exec(range.trim());
  if (!m) throw E.rangeNotA1(range);
  const sheet = m[1] !== undefined ? m[1].replace(/''/g, "'") : m[2];
  const c1 = columnNumber(m[3] as string);
  const r1 = Number(m[4]);
  const c2 = m[5] !== undefined ? columnNumber(m[5]) : c1;
  const r2 = m[6] !== undefined ? Number(m[6]) : r1;
  if (r1 < 1 || r2 < 1 || c1 > 16384 || c2 > 16384 || r1 > 1048576 || r2 > 1048576) throw E.rangeOutsideSheet(range);
  return { ...(sheet !== undefined ? { sheet } : {}), top: Math.min(r1, r2), left: Math.min(c1, c2), bottom: Math.max(r1, r2), right: Math.max(c1, c2) };
}
