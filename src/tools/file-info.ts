import { z } from 'zod';
import { closeSync } from 'node:fs';
import { E } from '../errors.js';
import { openVerifiedRetrying } from '../workspace/sandbox.js';
import { readAll } from '../workspace/sync-first-io.js';
import { countLinesInBuffer, looksBinary } from '../workspace/encoding.js';
import { sha256Hex, versionOf } from '../workspace/versions.js';
import { modeOf } from './change.js';
import { defineTool } from './define.js';
import { PathArg, VersionSchema } from './args.js';

const Input = z.strictObject({
  path: PathArg,
});

const Output = z.object({
  path: z.string(),
  type: z.enum(['file', 'directory', 'other']),
  size: z.number().int(),
  mode: z.string().describe("Permission bits in octal, e.g. '0644'."),
  mtime_ms: z.number(),
  is_symlink: z.boolean().describe('The name given is (or passes through) a symbolic link inside the workspace.'),
  target: z.string().nullable().describe('Where the symbolic link leads (relative to the workspace root), else null.'),
  is_binary: z.boolean().nullable().describe('null when not a regular file or over TOOLGATE_MAX_READ_BYTES.'),
  line_count: z.number().int().nullable().describe('Lines of a text file up to TOOLGATE_MAX_READ_BYTES, else null.'),
  version: VersionSchema.nullable().describe('Regular files only; sha256 is null above TOOLGATE_MAX_READ_BYTES.'),
});

export const fileInfo = defineTool({
  name: 'file_info',
  description: 'Facts about a file or directory without reading it out: type, size, mode, mtime, symlink flag, line count of a text file, and its version (sha256).',
  summary: 'type, size, mode, mtime, symlink flag, line count, version',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { path: 'notes.txt' },
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path, { allowRoot: true });
    const st = p.stat;
    if (!st) throw E.fileNotFound(p.rel);
    const base = {
      path: p.rel,
      size: st.size,
      mode: `0${modeOf({ stat: st }).toString(8).padStart(3, '0')}`,
      mtime_ms: Math.trunc(st.mtimeMs),
      is_symlink: p.viaSymlink,
      target: p.viaSymlink ? p.realRel : null,
    };
    if (!st.isFile()) {
      const type = st.isDirectory() ? 'directory' : 'other';
      return {
        data: { ...base, type, is_binary: null, line_count: null, version: null },
        text: `'${p.rel}' is a ${type === 'directory' ? 'directory' : 'special file'} (mode ${base.mode}).`,
        pathResolved: p.rel,
      } as const;
    }
    // A concurrent atomic write may swap the file between check and open: re-check and retry.
    const { fd, stat: fst } = await openVerifiedRetrying(p, () => ctx.resolve(input.path));
    try {
      if (fst.size > ctx.ws.limits.maxReadBytes) {
        const version = versionOf(fst, null);
        return {
          data: { ...base, type: 'file', size: fst.size, is_binary: null, line_count: null, version },
          text: `'${p.rel}' is a file of ${fst.size} bytes (mode ${base.mode}); over TOOLGATE_MAX_READ_BYTES, so lines and sha256 are not computed.`,
          pathResolved: p.rel,
          version,
        } as const;
      }
      const buf = await readAll(fd, fst.size);
      const version = versionOf(fst, sha256Hex(buf));
      const binary = looksBinary(buf);
      const lines = binary ? null : countLinesInBuffer(buf);
      return {
        data: { ...base, type: 'file', size: buf.length, mtime_ms: version.mtime_ms, is_binary: binary, line_count: lines, version },
        text: `'${p.rel}' is a ${binary ? 'binary' : 'text'} file of ${buf.length} bytes${lines !== null ? `, ${lines} lines` : ''} (mode ${base.mode}).`,
        stats: { bytes_read: buf.length },
        pathResolved: p.rel,
        version,
        audit: { sha256_before: version.sha256, bytes_read: buf.length },
      } as const;
    } finally {
      closeSync(fd);
    }
  },
});
