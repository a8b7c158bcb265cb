// What read_docx and read_excel share: the document opened through the sandbox's verified descriptor and
// handed to the office engine as that descriptor (never reopened by name), engine errors as envelope
// errors, extracted images stored as attachments for the caller, and the common output fields.
import { closeSync } from 'node:fs';
import { z } from 'zod';
import { E } from '../../errors.js';
import { OfficeError } from '../../office/errors.js';
import type { OfficeReadResult } from '../../office/run.js';
import type { FdSource } from '../../office/zip-guard.js';
import { ownerOf, saveAttachments, type AttachmentRef } from '../../workspace/attachments.js';
import { formatBytes } from '../../workspace/encoding.js';
import { openVerifiedRetrying, type ResolvedPath } from '../../workspace/sandbox.js';
import type { ToolContext, ToolResult } from '../define.js';

/**
 * The office engine (src/office/run.ts: the zip guard, yauzl, the worker pool), imported on the first office
 * call rather than at start: a server that never reads a document never loads it (docs/operations.md,
 * "Office documents"). The parsers themselves (exceljs, mammoth, saxes) load only inside the worker.
 */
export function loadOfficeEngine(): Promise<typeof import('../../office/run.js')> {
  return import('../../office/run.js');
}

export const DEFAULT_OFFICE_MAX_BYTES = 64 * 1024 * 1024;

export const AttachmentSchema = z
  .object({
    id: z.string().describe('Fetch the bytes with GET /v1/attachments/{id} (same token and project; expires after TOOLGATE_ATTACHMENT_RETENTION_S).'),
    name: z.string(),
    media_type: z.string(),
    bytes: z.number().int().describe('Size in bytes.'),
  })
  .meta({ id: 'Attachment' });

export const OfficeOutputFields = {
  content: z.string().describe('The document as Markdown.'),
  truncated: z.boolean().describe('Output was cut at TOOLGATE_MAX_OUTPUT_BYTES.'),
  attachments: z.array(AttachmentSchema).describe('Embedded images, stored for this caller.'),
  images_omitted: z.number().int().describe('Images past the per-document limits, not stored.'),
  warnings: z.array(z.string()),
  size_bytes: z.number().int().describe('Size of the document file.'),
};

export interface OpenedDocument {
  p: ResolvedPath;
  size: number;
}

/**
 * Runs `read` on the document at `input` through its verified descriptor, under the office size limit,
 * turning OfficeError into the envelope error the engine names (`details.office_code`).
 */
export async function withOfficeDocument<T>(ctx: ToolContext, input: string, read: (source: FdSource, doc: OpenedDocument) => Promise<T>): Promise<T> {
  const first = await ctx.resolve(input);
  const { p, fd, stat } = await openVerifiedRetrying(first, () => ctx.resolve(input));
  try {
    const limit = ctx.ws.limits.officeMaxBytes ?? DEFAULT_OFFICE_MAX_BYTES;
    if (stat.size > limit) {
      throw E.documentTooLarge(p.rel, formatBytes(stat.size), limit, stat.size);
    }
    return await read({ fd }, { p, size: stat.size });
  } catch (err) {
    if (err instanceof OfficeError) throw E.documentUnreadable(p.rel, err.code, err.message, err.details);
    throw err;
  } finally {
    // The engine is done with the descriptor when its promise settles (the worker gets a copy of the entries).
    closeSync(fd);
  }
}

/** Stores the extracted images for this caller and returns the output fields both tools share. */
export async function officeOutput(ctx: ToolContext, result: OfficeReadResult, size: number) {
  const attachments: AttachmentRef[] = await saveAttachments(ctx.ws, ownerOf(ctx.caller), result.attachments);
  return {
    content: result.text,
    truncated: result.truncated,
    attachments,
    images_omitted: result.imagesOmitted,
    warnings: result.warnings,
    size_bytes: size,
  };
}

/** The tail of the summary sentence: attachments, truncation. */
export function officeNotes(out: { truncated: boolean; attachments: AttachmentRef[]; images_omitted: number }, maxOutputBytes: number): string {
  let s = '';
  if (out.attachments.length > 0) s += ` ${out.attachments.length} image(s) as attachments (GET /v1/attachments/{id}).`;
  if (out.images_omitted > 0) s += ` ${out.images_omitted} image(s) omitted (over the image limits).`;
  if (out.truncated) s += ` Output truncated at ${formatBytes(maxOutputBytes)}.`;
  return s;
}

/** The answer of an office reader: the read is the whole file, the output is what the cap kept. */
export function officeAnswer<D extends { content: string; truncated: boolean; attachments: AttachmentRef[] }>(
  doc: OpenedDocument,
  data: D,
  text: string,
  stats: Record<string, number> = {},
): ToolResult<D> {
  return {
    data,
    text,
    stats: { bytes_read: doc.size, output_bytes: Buffer.byteLength(data.content), attachments: data.attachments.length, ...stats },
    partial: data.truncated,
    pathResolved: doc.p.rel,
    audit: { bytes_read: doc.size },
  };
}
