import { z } from 'zod';
import { PathArg } from '../args.js';
import { defineTool } from '../define.js';
import { loadOfficeEngine, officeAnswer, officeNotes, officeOutput, OfficeOutputFields, withOfficeDocument } from './office-file.js';

const Input = z.strictObject({
  path: PathArg.describe('A .docx file, relative to the workspace root.'),
});

const Output = z.object(OfficeOutputFields);

export const readDocx = defineTool({
  name: 'read_docx',
  aliases: ['file-read-docx'],
  description:
    'Read a Word .docx document as Markdown (headings, lists, tables, emphasis). Embedded images come back as attachments {id, name, media_type, bytes}, fetched with GET /v1/attachments/{id}. Output is capped (`truncated`). Hostile or damaged files are refused with an error.',
  summary: 'a .docx as Markdown (headings, lists, tables); images as `attachments`; output capped with `truncated`',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { path: 'report.docx' },
  output: Output,
  async run(ctx, input) {
    const maxOutputBytes = ctx.ws.limits.maxOutputBytes;
    const { readDocx: readDocxEngine } = await loadOfficeEngine();
    return withOfficeDocument(ctx, input.path, async (source, doc) => {
      const data = await officeOutput(ctx, await readDocxEngine(source, { maxOutputBytes, memoryBudgetBytes: ctx.ws.limits.memoryBudgetBytes, runtime: ctx.ws.runtime, signal: ctx.signal }), doc.size);
      return officeAnswer(doc, data, `Read '${doc.p.rel}' as Markdown.${officeNotes(data, maxOutputBytes)}`);
    });
  },
});
