// A range of an .xlsx sheet → text, in the office worker (worker.ts), without loading the workbook: the
// worksheets and shared strings arrive still compressed (zip-guard.ts, `defer`) and are inflated chunk by
// chunk under the guard's counters (xlsx-parts.ts), rows before the range dropped unparsed, the rest
// parsed with saxes as it comes; inflating stops at the first row past the range. Output, errors and value
// rules are the whole-sheet readers' (XlsxText; exceljs's own date, number-format and shared-formula
// helpers), so a range reads as the same cells of a whole-sheet read. What this does not see, and why:
// docs/operations.md, "Office documents".
//
// xlsxRangeToText is shipped to the worker as source text (Function#toString), so it must be
// self-contained: no imports and nothing from outside its body; libraries and helpers come as arguments.
import type { ConvertedWorkbook, SheetSummary, XlsxOptions, XlsxText } from './xlsx.js';
import { E } from '../errors.js';
import type { Area, CellValue, PartHandlers, RawCell, RowSkip, XlsxParts, XlsxStreamInput, XlsxStreamLibraries } from './xlsx-parts.js';

export type { DeferredPart, XlsxStreamInput, XlsxStreamLibraries } from './xlsx-parts.js';

export interface XlsxRangeLibraries extends XlsxStreamLibraries {
  XlsxParts: typeof XlsxParts;
  XlsxText: typeof XlsxText;
}

export interface XlsxRangeOptions extends XlsxOptions {
  range: string;
  bounds: { sheet?: string; top: number; left: number; bottom: number; right: number };
}

export async function xlsxRangeToText(libs: XlsxRangeLibraries, input: XlsxStreamInput, opts: XlsxRangeOptions): Promise<ConvertedWorkbook & { inflatedBytes: number }> {
  const { XlsxParts: P, XlsxText: T } = libs;
  const parts = new P(libs, input);
  const bounds = opts.bounds;

  const { book } = parts;
  const wantedSheet = opts.sheet ?? bounds.sheet;
  const selectedIndex = wantedSheet === undefined ? 0 : book.indexOf(T.pickSheet(book, wantedSheet, book.map((s, i) => `${i + 1}: '${s.name}'`).join(', ')));
  const areaText = (d: Area | null) => (d ? T.areaText(d) : null);

  // The selected sheet: its rows within the range, stopping at the first row past it.
  const selected = book[selectedIndex] as (typeof book)[number];
  const sheetPart = selected.part && parts.exists(selected.part) ? selected.part : undefined;
  const sheetRels = sheetPart ? parts.relationships(sheetPart) : [];
  const hyperlinkTargets = new Map(sheetRels.filter((r) => r.type.endsWith('/hyperlink')).map((r) => [r.id, r.target]));
  interface Cell {
    col: number;
    address: string;
    value: CellValue | undefined;
    formula: string | undefined;
  }
  const rows = new Map<number, Cell[]>();
  let selectedDims: string | null = null;
  let declared: Area | null = null;
  const masters = new Map<string, { formula: string; address: string }>();
  const hyperlinks = new Map<string, string>();
  const sharedNeeded = new Set<number>();
  if (sheetPart) {
    let row: Cell[] | null = null;
    let rowNumber = 0;
    let colNumber = 0;
    let c: RawCell | null = null;
    let current: 'f' | 'v' | 't' | null = null;
    let afterRows = false;
    const readOnForLinks = hyperlinkTargets.size > 0;
    // Shown formulas may be shared from a master cell above the range: then every row is parsed.
    const skipRows: RowSkip | undefined = opts.formulas ? undefined : { top: bounds.top, resume: (last) => (rowNumber = last) };
    const handlers: PartHandlers = {
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
            declared = P.area(a.ref, false);
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
            const at = a.r !== undefined ? P.decodeAddress(a.r) : null;
            colNumber = at ? at.col : colNumber + 1;
            const wanted = row !== null && colNumber >= bounds.left && colNumber <= bounds.right;
            // Cells outside the range matter only as shared-formula masters when formulas are shown.
            c = wanted || opts.formulas ? { address: `${T.columnLetters(colNumber)}${rowNumber}`, row: rowNumber, col: colNumber, s: Number(a.s ?? 0), t: a.t ?? 'n', inIs: false, inPhonetic: false } : null;
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
          if (row === null || cell.col < bounds.left || cell.col > bounds.right) {
            const f = cell.f;
            if (f?.t === 'shared' && f.si !== undefined && f.ref !== undefined && f.text !== '') masters.set(f.si, { formula: f.text, address: cell.address });
            return;
          }
          const { value, formula } = parts.cellValue(cell, masters);
          if (value?.kind === 'shared') sharedNeeded.add(value.index);
          row.push({ col: cell.col, address: cell.address, value, formula });
        }
      },
    };
    await parts.readAll(sheetPart, handlers, skipRows ? (write) => P.skipRowsBefore(skipRows, write) : undefined);
    selectedDims = declared ? areaText(declared) : areaText(await parts.declaredDimension(sheetPart));
  }

  // Shared strings, inflated and parsed only up to the highest index the range uses.
  const strings = new Map<number, string>();
  if (sharedNeeded.size > 0) {
    const last = Math.max(...sharedNeeded);
    let index = -1;
    let text = '';
    let depth: 'none' | 'si' | 'phonetic' = 'none';
    let inT = false;
    await parts.readAll(parts.sharedStringsPart, {
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
    else if (s.part && parts.exists(s.part)) dimensions = areaText(await parts.declaredDimension(s.part));
    else dimensions = null;
    sheets.push({ index: i + 1, name: s.name, state: s.state, dimensions });
  }

  const cellText = (cell: Cell | undefined): string => {
    if (!cell) return '';
    let text = cell.value === undefined ? '' : cell.value.kind === 'shared' ? (strings.get(cell.value.index) ?? '') : P.valueText(cell.value.value, T.formatDate);
    const link = hyperlinks.get(cell.address);
    if (link !== undefined && link !== text) text = `[${text}](${link})`;
    return T.cellMarkdown(text, cell.formula, opts.formulas);
  };

  const out = new T(opts);
  const summary = sheets[selectedIndex] as SheetSummary;
  if (out.title(summary, bounds.top)) {
    const ordered = [...rows.entries()].sort((a, b) => a[0] - b[0]).map(([r, cells]) => [r, new Map(cells.map((cell) => [cell.col, cell]))] as const);
    const lines: Array<[number, string[]]> = [];
    for (const [r, cells] of ordered) {
      const texts: string[] = [];
      for (let col = bounds.left; col <= bounds.right; col++) texts.push(cellText(cells.get(col)));
      if (texts.some((t) => t !== '')) lines.push([r, texts]);
    }
    if (lines.length === 0) out.push(`(no values in ${opts.range}; the sheet's used range is ${summary.dimensions ?? 'empty'})`);
    else {
      for (const line of T.tableHeader(bounds.left, bounds.right)) out.push(line);
      for (const [r, texts] of lines) if (!out.row(summary.name, r, texts)) break;
    }
  }

  // Images of the sheet, as the whole-sheet readers show them.
  if (!out.truncatedAt && sheetPart) {
    const images = parts.sheetImages(sheetRels);
    if (images.length > 0) out.push('');
    for (const image of images) {
      const data = parts.partBytes.get(image.part);
      if (data) out.image(summary.index, `${T.columnLetters(image.col)}${image.row}`, /\.([^./]+)$/.exec(image.part)?.[1] ?? 'bin', data);
    }
  }
  return { ...out.result(sheets), inflatedBytes: parts.inflatedBytes };
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
