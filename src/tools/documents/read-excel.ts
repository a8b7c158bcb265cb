import { z } from 'zod';
import { PathArg } from '../args.js';
import { defineTool } from '../define.js';
import { loadOfficeEngine, officeAnswer, officeNotes, officeOutput, OfficeOutputFields, withOfficeDocument } from './office-file.js';

const Input = z.strictObject({
  path: PathArg.describe('A .xlsx or .xlsm workbook, relative to the workspace root (legacy .xls is refused: save it as .xlsx).'),
  sheet: z.union([z.string().min(1), z.number().int().min(1)]).optional().describe('One sheet, by name or 1-based position; default every sheet.'),
  range: z.string().min(1).max(32).optional().describe('A cell range of the sheet(s), e.g. "A1:D50" or "A100:F200".'),
  formulas: z.boolean().default(false).describe('Show formulas next to their cached values (default: values only).'),
});

const Sheet = z.object({
  index: z.number().int(),
  name: z.string(),
  state: z.string().describe('visible, hidden or veryHidden'),
  dimensions: z.string().nullable().describe('Used range, e.g. A1:D40; null for an empty sheet.'),
});

const Output = z.object({
  ...OfficeOutputFields,
  sheets: z.array(Sheet).describe('Every sheet of the workbook, shown or not.'),
  truncated_at: z.object({ sheet: z.string(), row: z.number().int() }).nullable().describe('Where output stopped: continue with sheet and range from this row.'),
});

export const readExcel = defineTool({
  name: 'read_excel',
  aliases: ['file-read-excel'],
  description:
    'Read an Excel .xlsx/.xlsm workbook as one Markdown table per sheet (cached values of formulas; formulas too with formulas: true). Ask for one sheet or a range for large workbooks; output is capped (`truncated`, `truncated_at`). Images come back as attachments fetched with GET /v1/attachments/{id}. Legacy .xls is refused.',
  summary: 'Excel .xlsx/.xlsm, one Markdown table per sheet (cached formula values; `sheet`, `range`, `formulas`); images as `attachments`; legacy `.xls` refused (no maintained reader without advisories: save as .xlsx)',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { path: 'data.xlsx', sheet: 1, range: 'A1:D20' },
  output: Output,
  async run(ctx, input) {
    const maxOutputBytes = ctx.ws.limits.maxOutputBytes;
    const { readExcel: readExcelEngine } = await loadOfficeEngine();
    return withOfficeDocument(ctx, input.path, async (source, { p, size }) => {
      const result = await readExcelEngine(source, { maxOutputBytes, fileName: p.realRel, sheet: input.sheet, range: input.range, formulas: input.formulas, memoryBudgetBytes: ctx.ws.limits.memoryBudgetBytes, runtime: ctx.ws.runtime, signal: ctx.signal });
      const data = { ...(await officeOutput(ctx, result, size)), sheets: result.sheets ?? [], truncated_at: result.truncatedAt ?? null };
      const shown = input.sheet !== undefined ? `sheet ${JSON.stringify(input.sheet)} of ` : '';
      const more = data.truncated_at ? ` Continue with sheet '${data.truncated_at.sheet}' and a range from row ${data.truncated_at.row}.` : '';
      return officeAnswer({ p, size }, data, `Read ${shown}'${p.rel}' (${data.sheets.length} sheet(s)).${officeNotes(data, maxOutputBytes)}${more}`, { sheets: data.sheets.length });
    });
  },
});
