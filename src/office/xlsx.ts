// .xlsx/.xlsm → text, run inside the office worker (worker.ts) with exceljs: one Markdown table per sheet,
// for a read of whole sheets (a range is read by xlsx-stream.ts, which stops after it, in the same format),
// headed by column letters and row numbers so that every value keeps its cell address (what a model needs to
// ask for a range next). Formulas answer their cached result (what Excel last computed; nothing is
// recalculated), dates answer ISO 8601.
//
// xlsxToText is shipped to the worker as source text (Function#toString, like search-worker.ts), so it must
// be self-contained: no imports and nothing from outside its body; exceljs comes as an argument.
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

export async function xlsxToText(libs: XlsxLibraries, zip: Buffer, opts: XlsxOptions): Promise<ConvertedWorkbook> {
  const selectorError = (message: string) => Object.assign(new Error(message), { officeCode: 'INVALID_SELECTOR' });
  const columnLetters = (n: number): string => {
    let s = '';
    for (let x = n; x > 0; x = Math.floor((x - 1) / 26)) s = String.fromCharCode(65 + ((x - 1) % 26)) + s;
    return s;
  };
  const workbook = new libs.ExcelJS.Workbook();
  await workbook.xlsx.load(zip as unknown as ArrayBuffer);
  const all = workbook.worksheets;
  const sheets: SheetSummary[] = all.map((ws, i) => {
    const dims = ws.actualRowCount > 0 ? ws.dimensions : null;
    return { index: i + 1, name: ws.name, state: ws.state, dimensions: dims ? `${columnLetters(dims.left)}${dims.top}:${columnLetters(dims.right)}${dims.bottom}` : null };
  });
  const available = () => sheets.map((s) => `${s.index}: '${s.name}'`).join(', ');

  const wantedSheet = opts.sheet;
  let selected = all;
  if (wantedSheet !== undefined) {
    let found: (typeof all)[number] | undefined;
    if (typeof wantedSheet === 'number') found = all[wantedSheet - 1];
    else found = all.find((ws) => ws.name === wantedSheet) ?? all.find((ws) => ws.name.toLowerCase() === wantedSheet.toLowerCase());
    if (!found) throw selectorError(`The workbook has no sheet ${typeof wantedSheet === 'number' ? `number ${wantedSheet}` : `'${wantedSheet}'`}; its sheets are ${available()}.`);
    selected = [found];
  }

  const formatDate = (d: Date): string => {
    if (Number.isNaN(d.getTime())) return '';
    const iso = d.toISOString();
    // Excel dates carry no zone; exceljs reads them as UTC. Midnight is a plain date.
    if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
    return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
  };
  const valueText = (v: unknown): string => {
    if (v === null || v === undefined) return '';
    if (v instanceof Date) return formatDate(v);
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
  const cellText = (cell: ExcelJSModule.Cell): string => {
    // A merged range shows its value once, in its top-left cell.
    if (cell.isMerged && cell.master !== cell) return '';
    // A formula's cached result from the cell itself: exceljs's `value` copy drops a falsy one (0, FALSE, '').
    let text = cell.type === libs.ExcelJS.ValueType.Formula ? valueText(cell.result) : valueText(cell.value);
    if (opts.formulas && cell.formula) text = text === '' ? `=${cell.formula}` : `${text} (=${cell.formula})`;
    return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
  };

  const mediaTypes: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', jpg: 'image/jpeg', gif: 'image/gif', bmp: 'image/bmp', tiff: 'image/tiff', emf: 'image/emf', wmf: 'image/wmf', svg: 'image/svg+xml' };
  const attachments: RawAttachment[] = [];
  let imagesOmitted = 0;
  let imageBytes = 0;

  const out: string[] = [];
  let outBytes = 0;
  let truncatedAt: ConvertedWorkbook['truncatedAt'] = null;
  // Appends a line unless it would pass the cap; false when output must stop.
  const push = (line: string): boolean => {
    const bytes = Buffer.byteLength(line, 'utf8') + 1;
    if (outBytes + bytes > opts.maxOutputBytes) return false;
    out.push(line);
    outBytes += bytes;
    return true;
  };

  for (const ws of selected) {
    const summary = sheets[all.indexOf(ws)] as SheetSummary;
    const area = ws.actualRowCount > 0 ? { top: ws.dimensions.top, left: ws.dimensions.left, bottom: ws.dimensions.bottom, right: ws.dimensions.right } : null;
    const title = `## Sheet ${summary.index}: ${summary.name}${summary.state !== 'visible' ? ` (${summary.state})` : ''}`;
    if (!push(out.length > 0 ? `\n${title}\n` : `${title}\n`)) {
      truncatedAt = { sheet: ws.name, row: area?.top ?? 1 };
      break;
    }

    // Columns actually used inside the area, so that a sparse range does not print empty columns at its edges.
    let left = Infinity;
    let right = 0;
    if (area) {
      ws.eachRow({ includeEmpty: false }, (row, r) => {
        if (r < area.top || r > area.bottom) return;
        row.eachCell({ includeEmpty: false }, (cell, c) => {
          if (c < area.left || c > area.right || cellText(cell) === '') return;
          left = Math.min(left, c);
          right = Math.max(right, c);
        });
      });
    }
    if (!area || right === 0) {
      push('(empty sheet)');
    } else {
      const header = ['', ...Array.from({ length: right - left + 1 }, (_, i) => columnLetters(left + i))];
      push(`| ${header.join(' | ')} |`);
      push(`|${header.map(() => '---').join('|')}|`);
      for (let r = area.top; r <= area.bottom; r++) {
        if (r > ws.rowCount) break;
        const row = ws.findRow(r);
        if (!row || !row.hasValues) continue;
        const cells: string[] = [];
        for (let c = left; c <= right; c++) cells.push(cellText(row.getCell(c)));
        if (cells.every((t) => t === '')) continue;
        if (!push(`| ${r} | ${cells.join(' | ')} |`)) {
          truncatedAt = { sheet: ws.name, row: r };
          break;
        }
      }
    }
    if (truncatedAt) break;

    const images = ws.getImages();
    if (images.length > 0) push('');
    for (const image of images) {
      const media = workbook.getImage(Number(image.imageId)) as ExcelJSModule.Image & { name?: string };
      // exceljs types its buffer as its own Buffer interface; at run time it is a Node Buffer.
      const data = media?.buffer as unknown as Uint8Array | undefined;
      if (!data) continue;
      const anchor = `${columnLetters(Math.floor(image.range.tl.nativeCol) + 1)}${Math.floor(image.range.tl.nativeRow) + 1}`;
      if (attachments.length >= opts.maxImages || imageBytes + data.length > opts.maxImageBytes) {
        imagesOmitted++;
        push(`(image at ${anchor} left out: over the image limit)`);
        continue;
      }
      imageBytes += data.length;
      const ext = String(media.extension || 'bin').toLowerCase();
      const name = `sheet${summary.index}-image${attachments.length + 1}.${ext === 'jpeg' ? 'jpg' : ext}`;
      attachments.push({ name, media_type: mediaTypes[ext] ?? 'application/octet-stream', bytes: new Uint8Array(data) });
      push(`![image at ${anchor}](attachment:${name})`);
    }
  }
  return { text: out.join('\n') + '\n', sheets, attachments, imagesOmitted, truncatedAt };
}
