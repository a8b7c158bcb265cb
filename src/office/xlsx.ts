// .xlsx/.xlsm → text, run inside the office worker (worker.ts): one Markdown table per sheet, headed by column
// letters and row numbers so that every value keeps its cell address (what a model needs to ask for a range
// next). Formulas answer their cached result (what Excel last computed; nothing is recalculated), dates
// answer ISO 8601. XlsxText holds the answer's format (shared with the streaming readers, xlsx-first-rows.ts
// and xlsx-stream.ts, so that every reader writes the same text) and reads whole workbooks with exceljs,
// the fallback of the streaming default read (docs/operations.md, "Office documents").
//
// XlsxText is shipped to the worker as source text (Function#toString, like search-worker.ts), so it must be
// self-contained: no imports and nothing from outside its body; exceljs comes as an argument.
import type ExcelJSModule from 'exceljs';
import type { ImageLimits, RawAttachment } from './docx.js';

export interface XlsxLibraries {
  ExcelJS: typeof ExcelJSModule;
}

export interface XlsxOptions extends ImageLimits {
  /** A sheet name (exact, else case-insensitive) or 1-based position; all sheets when absent. */
  sheet?: string | number;
  /** Also show each formula next to its cached value: `6 (=SUM(A1:A3))`. */
  formulas: boolean;
  /** Output stops at the row that would pass this many UTF-8 bytes. */
  maxOutputBytes: number;
}

export interface SheetSummary {
  index: number;
  name: string;
  state: string;
  /** Used range, e.g. `A1:D40`; null for an empty sheet. */
  dimensions: string | null;
}

export interface ConvertedWorkbook {
  text: string;
  sheets: SheetSummary[];
  attachments: RawAttachment[];
  imagesOmitted: number;
  /** Where output stopped: the sheet and the first row not shown. */
  truncatedAt: { sheet: string; row: number } | null;
}

type Worksheet = ExcelJSModule.Worksheet;
interface Area {
  top: number;
  left: number;
  bottom: number;
  right: number;
}

/** The answer being written: lines under the output cap, attachments under the image limits. */
export class XlsxText {
  readonly lines: string[] = [];
  bytes = 0;
  truncatedAt: ConvertedWorkbook['truncatedAt'] = null;
  readonly attachments: RawAttachment[] = [];
  imagesOmitted = 0;
  imageBytes = 0;

  constructor(readonly opts: XlsxOptions) {}

  static columnLetters(n: number): string {
    let s = '';
    for (let x = n; x > 0; x = Math.floor((x - 1) / 26)) s = String.fromCharCode(65 + ((x - 1) % 26)) + s;
    return s;
  }

  static areaText(a: Area): string {
    return `${XlsxText.columnLetters(a.left)}${a.top}:${XlsxText.columnLetters(a.right)}${a.bottom}`;
  }

  static formatDate(d: Date): string {
    if (Number.isNaN(d.getTime())) return '';
    const iso = d.toISOString();
    // Excel dates carry no zone; exceljs reads them as UTC. Midnight is a plain date.
    if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
    return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
  }

  /** A cell's text as a table cell: the formula after its value when asked, pipes and line ends escaped. */
  static cellMarkdown(text: string, formula: string | undefined, formulas: boolean): string {
    const shown = formulas && formula ? (text === '' ? `=${formula}` : `${text} (=${formula})`) : text;
    return shown.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
  }

  static sheetTitle(s: SheetSummary): string {
    return `## Sheet ${s.index}: ${s.name}${s.state !== 'visible' ? ` (${s.state})` : ''}`;
  }

  static tableHeader(left: number, right: number): [string, string] {
    const header = ['', ...Array.from({ length: right - left + 1 }, (_, i) => XlsxText.columnLetters(left + i))];
    return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  }

  static rowLine(row: number, cells: string[]): string {
    return `| ${row} | ${cells.join(' | ')} |`;
  }

  static selectorError(message: string): Error {
    return Object.assign(new Error(message), { officeCode: 'INVALID_SELECTOR' });
  }

  /** The sheet a selector names (exact name, else any case, or 1-based position), or INVALID_SELECTOR. */
  static pickSheet<T extends { name: string }>(all: T[], wanted: string | number, available: string): T {
    const found = typeof wanted === 'number' ? all[wanted - 1] : (all.find((s) => s.name === wanted) ?? all.find((s) => s.name.toLowerCase() === wanted.toLowerCase()));
    if (!found) throw XlsxText.selectorError(`The workbook has no sheet ${typeof wanted === 'number' ? `number ${wanted}` : `'${wanted}'`}; its sheets are ${available}.`);
    return found;
  }

  /** Appends a line unless it would pass the cap; false when output must stop. */
  push(line: string): boolean {
    const bytes = Buffer.byteLength(line, 'utf8') + 1;
    if (this.bytes + bytes > this.opts.maxOutputBytes) return false;
    this.lines.push(line);
    this.bytes += bytes;
    return true;
  }

  /** The sheet's title; false (and truncatedAt set, at `firstRow`) when it does not fit. */
  title(s: SheetSummary, firstRow: number): boolean {
    const title = XlsxText.sheetTitle(s);
    if (this.push(this.lines.length > 0 ? `\n${title}\n` : `${title}\n`)) return true;
    this.truncatedAt = { sheet: s.name, row: firstRow };
    return false;
  }

  /** A table row; false (and truncatedAt set) when it does not fit. */
  row(sheet: string, row: number, cells: string[]): boolean {
    if (this.push(XlsxText.rowLine(row, cells))) return true;
    this.truncatedAt = { sheet, row };
    return false;
  }

  /** An image anchored at `anchor`, as an attachment or, past the image limits, counted and named. */
  image(sheetIndex: number, anchor: string, extension: string, data: Uint8Array): void {
    if (this.attachments.length >= this.opts.maxImages || this.imageBytes + data.length > this.opts.maxImageBytes) {
      this.imagesOmitted++;
      this.push(`(image at ${anchor} left out: over the image limit)`);
      return;
    }
    this.imageBytes += data.length;
    const mediaTypes: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', jpg: 'image/jpeg', gif: 'image/gif', bmp: 'image/bmp', tiff: 'image/tiff', emf: 'image/emf', wmf: 'image/wmf', svg: 'image/svg+xml' };
    const ext = extension.toLowerCase();
    const name = `sheet${sheetIndex}-image${this.attachments.length + 1}.${ext === 'jpeg' ? 'jpg' : ext}`;
    this.attachments.push({ name, media_type: mediaTypes[ext] ?? 'application/octet-stream', bytes: new Uint8Array(data) });
    this.push(`![image at ${anchor}](attachment:${name})`);
  }

  result(sheets: SheetSummary[]): ConvertedWorkbook {
    return { text: this.lines.join('\n') + '\n', sheets, attachments: this.attachments, imagesOmitted: this.imagesOmitted, truncatedAt: this.truncatedAt };
  }

  /** The whole workbook loaded with exceljs: every selected sheet until the output cap. */
  static async fromExcelJS(libs: XlsxLibraries, zip: Buffer, opts: XlsxOptions): Promise<ConvertedWorkbook> {
    const workbook = new libs.ExcelJS.Workbook();
    await workbook.xlsx.load(zip as unknown as ArrayBuffer);
    const all = workbook.worksheets;
    const sheets = all.map((ws, i) => XlsxText.exceljsSummary(ws, i));
    const selected = opts.sheet === undefined ? all : [XlsxText.pickSheet(all, opts.sheet, sheets.map((s) => `${s.index}: '${s.name}'`).join(', '))];
    const out = new XlsxText(opts);
    for (const ws of selected) {
      const summary = sheets[all.indexOf(ws)] as SheetSummary;
      if (!out.exceljsSheet(libs, ws, summary)) break;
      out.exceljsImages(workbook, ws, summary);
    }
    return out.result(sheets);
  }

  static exceljsArea(ws: Worksheet): Area | null {
    if (ws.actualRowCount === 0) return null;
    const d = ws.dimensions;
    return { top: d.top, left: d.left, bottom: d.bottom, right: d.right };
  }

  static exceljsSummary(ws: Worksheet, i: number): SheetSummary {
    const area = XlsxText.exceljsArea(ws);
    return { index: i + 1, name: ws.name, state: ws.state, dimensions: area ? XlsxText.areaText(area) : null };
  }

  /** exceljs's value of a cell as text; a merged range shows its value once, in its top-left cell. */
  static exceljsCellText(libs: XlsxLibraries, cell: ExcelJSModule.Cell, formulas: boolean): string {
    if (cell.isMerged && cell.master !== cell) return '';
    const valueText = (v: unknown): string => {
      if (v === null || v === undefined) return '';
      if (v instanceof Date) return XlsxText.formatDate(v);
      if (typeof v === 'number') return String(v);
      if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
      if (typeof v === 'string') return v;
      if (typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (Array.isArray(o.richText)) return o.richText.map((r: { text?: string }) => r.text ?? '').join('');
        if ('error' in o) return String(o.error);
        if ('hyperlink' in o) {
          const text = valueText(o.text);
          return o.hyperlink && o.hyperlink !== text ? `[${text}](${String(o.hyperlink)})` : text;
        }
        if ('formula' in o || 'sharedFormula' in o) return valueText(o.result);
      }
      return String(v);
    };
    // A formula's cached result from the cell itself: exceljs's `value` copy drops a falsy one (0, FALSE, '').
    const text = cell.type === libs.ExcelJS.ValueType.Formula ? valueText(cell.result) : valueText(cell.value);
    return XlsxText.cellMarkdown(text, cell.formula, formulas);
  }

  /** Columns holding text inside the area, so that a sparse sheet does not print empty columns at its edges. */
  static exceljsUsedColumns(libs: XlsxLibraries, ws: Worksheet, area: Area, formulas: boolean): { left: number; right: number } | null {
    let left = Infinity;
    let right = 0;
    ws.eachRow({ includeEmpty: false }, (row, r) => {
      if (r < area.top || r > area.bottom) return;
      row.eachCell({ includeEmpty: false }, (cell, c) => {
        if (c < area.left || c > area.right || XlsxText.exceljsCellText(libs, cell, formulas) === '') return;
        left = Math.min(left, c);
        right = Math.max(right, c);
      });
    });
    return right === 0 ? null : { left, right };
  }

  /** One sheet's title and table; false when output stopped inside it. */
  exceljsSheet(libs: XlsxLibraries, ws: Worksheet, summary: SheetSummary): boolean {
    const area = XlsxText.exceljsArea(ws);
    if (!this.title(summary, area?.top ?? 1)) return false;
    const columns = area ? XlsxText.exceljsUsedColumns(libs, ws, area, this.opts.formulas) : null;
    if (!area || !columns) {
      this.push('(empty sheet)');
      return true;
    }
    for (const line of XlsxText.tableHeader(columns.left, columns.right)) this.push(line);
    for (let r = area.top; r <= area.bottom; r++) {
      if (r > ws.rowCount) break;
      const row = ws.findRow(r);
      if (!row || !row.hasValues) continue;
      const cells: string[] = [];
      for (let c = columns.left; c <= columns.right; c++) cells.push(XlsxText.exceljsCellText(libs, row.getCell(c), this.opts.formulas));
      if (cells.every((t) => t === '')) continue;
      if (!this.row(ws.name, r, cells)) return false;
    }
    return true;
  }

  exceljsImages(workbook: ExcelJSModule.Workbook, ws: Worksheet, summary: SheetSummary): void {
    const images = ws.getImages();
    if (images.length > 0) this.push('');
    for (const image of images) {
      const media = workbook.getImage(Number(image.imageId)) as ExcelJSModule.Image & { name?: string };
      // exceljs types its buffer as its own Buffer interface; at run time it is a Node Buffer.
      const data = media?.buffer as unknown as Uint8Array | undefined;
      if (!data) continue;
      const anchor = `${XlsxText.columnLetters(Math.floor(image.range.tl.nativeCol) + 1)}${Math.floor(image.range.tl.nativeRow) + 1}`;
      this.image(summary.index, anchor, String(media.extension || 'bin'), data);
    }
  }
}
