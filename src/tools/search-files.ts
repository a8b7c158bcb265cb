import { constants as C } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { ToolError } from '../envelope.js';
import { checkUserRegex, regexSearchBatch } from '../workspace/regex.js';
import { requireDirectory } from '../workspace/sandbox.js';
import { looksBinary } from '../workspace/text.js';
import { PREVIEW_CHARS, byteHits, literalByteFinder, literalStringRegExp, stringHits, type ByteFinder, type ContentHit } from '../workspace/text-search.js';
import { joinRel, walkTree, type EntryKind } from '../workspace/walk.js';
import { defineTool } from './define.js';
import { OptionalDirArg } from './common.js';

/** Files read at once: enough to keep the thread pool busy, few enough to bound memory. */
const READ_CONCURRENCY = 24;
const FIRST_CHUNK = 64 * 1024;
const SNIFF_BYTES = 8192;
/** A regex batch goes to the worker at this many bytes or entries. */
const BATCH_BYTES = 4 * 1024 * 1024;
const BATCH_ITEMS = 512;

const Input = z.strictObject({
  path: OptionalDirArg,
  query: z.string().min(1).max(4096).describe('Text to look for (in names and/or contents); a JavaScript regular expression with regex: true.'),
  mode: z.enum(['name', 'content', 'both']).default('both').describe('Match file and directory names, file contents, or both.'),
  glob: z.string().min(1).optional().describe('Only files whose path (relative to `path`) matches, e.g. "*.ts" (any directory) or "src/**/*.md".'),
  regex: z.boolean().default(false).describe('Treat query as a regular expression (flag m: ^ and $ match at line boundaries). Runs under a time limit.'),
  case_sensitive: z.boolean().default(false),
  max_depth: z.number().int().min(1).max(64).default(12).describe('Deepest level searched below `path` (1 = its own entries).'),
  limit: z.number().int().min(1).max(10_000).default(100).describe('Most results returned.'),
  respect_gitignore: z.boolean().default(true).describe('Skip what .gitignore files ignore.'),
});

const NameResult = z.object({ type: z.literal('name'), path: z.string(), kind: z.enum(['file', 'directory', 'symlink', 'other']) });
const ContentResult = z.object({
  type: z.literal('content'),
  path: z.string(),
  line: z.number().int().describe('1-based.'),
  column: z.number().int().describe('1-based, in characters of the line.'),
  preview: z.string().describe(`The line, trimmed, at most about ${PREVIEW_CHARS} characters around the match.`),
});

const Output = z.object({
  results: z.array(z.discriminatedUnion('type', [NameResult, ContentResult])).describe('Breadth-first order; one content result per matching line.'),
  truncated: z.boolean().describe('Stopped at limit, at TOOLGATE_SEARCH_MAX_FILES entries or at TOOLGATE_SEARCH_TIMEOUT_MS: there may be more.'),
  files_searched: z.number().int(),
  files_matched: z.number().int(),
  entries_visited: z.number().int(),
  skipped_binary: z.number().int(),
  skipped_large: z.number().int().describe('Files over TOOLGATE_MAX_READ_BYTES, not searched.'),
});

type Result = z.output<typeof NameResult> | z.output<typeof ContentResult>;

interface Ordered {
  seq: number;
  sub: number;
  result: Result;
}

interface FileJob {
  seq: number;
  abs: string;
  rel: string;
}

type ReadOutcome = { kind: 'text'; buf: Buffer } | { kind: 'binary' } | { kind: 'large' } | { kind: 'skip' };

/** Reads a file found by the walk (never following a symlink at the leaf), stopping early for binary or oversized files. */
async function readForSearch(abs: string, maxBytes: number, scratch: Buffer | null): Promise<ReadOutcome> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(abs, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch {
    return { kind: 'skip' }; // vanished, turned into a link, or unreadable: not an error for a search
  }
  try {
    const first = scratch ?? Buffer.allocUnsafeSlow(FIRST_CHUNK);
    const { bytesRead } = await fh.read(first, 0, FIRST_CHUNK, 0);
    if (looksBinary(first.subarray(0, Math.min(bytesRead, SNIFF_BYTES)))) return { kind: 'binary' };
    if (bytesRead < FIRST_CHUNK) {
      if (bytesRead > maxBytes) return { kind: 'large' };
      return { kind: 'text', buf: scratch ? first.subarray(0, bytesRead) : Buffer.from(first.subarray(0, bytesRead)) };
    }
    const st = await fh.stat();
    if (!st.isFile()) return { kind: 'skip' };
    if (st.size > maxBytes) return { kind: 'large' };
    const buf = Buffer.allocUnsafeSlow(st.size + 1);
    first.copy(buf, 0, 0, bytesRead);
    let len = bytesRead;
    while (len < buf.length) {
      const r = await fh.read(buf, len, buf.length - len, len);
      if (r.bytesRead === 0) break;
      len += r.bytesRead;
    }
    if (len > maxBytes) return { kind: 'large' }; // grew while being read
    return { kind: 'text', buf: buf.subarray(0, len) };
  } catch {
    return { kind: 'skip' };
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** Regex searches: names and file contents are batched to the regex worker, each batch under the regex time limit. */
class RegexBatches {
  private names: string[] = [];
  private nameSeqs: number[] = [];
  private nameKinds: EntryKind[] = [];
  private nameRels: string[] = [];
  private files: Buffer[] = [];
  private fileJobs: FileJob[] = [];
  private bytes = 0;
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown = null;

  constructor(
    private readonly source: string,
    private readonly flags: string,
    private readonly maxHitsPerFile: number,
    private readonly timeoutMs: number,
    private readonly emit: (o: Ordered) => void,
    private readonly matchedFile: () => void,
  ) {}

  addName(seq: number, name: string, rel: string, kind: EntryKind): void {
    this.names.push(name);
    this.nameSeqs.push(seq);
    this.nameRels.push(rel);
    this.nameKinds.push(kind);
    if (this.names.length >= BATCH_ITEMS) void this.flush();
  }

  /** Adds a file; resolves when the worker has caught up enough (back pressure for the readers). */
  addFile(job: FileJob, buf: Buffer): Promise<void> {
    this.files.push(buf);
    this.fileJobs.push(job);
    this.bytes += buf.length;
    if (this.bytes >= BATCH_BYTES || this.files.length >= BATCH_ITEMS) return this.flush();
    return Promise.resolve();
  }

  flush(): Promise<void> {
    if (this.names.length === 0 && this.files.length === 0) return this.chain;
    const names = this.names;
    const nameSeqs = this.nameSeqs;
    const nameRels = this.nameRels;
    const nameKinds = this.nameKinds;
    const files = this.files;
    const jobs = this.fileJobs;
    this.names = [];
    this.nameSeqs = [];
    this.nameRels = [];
    this.nameKinds = [];
    this.files = [];
    this.fileJobs = [];
    this.bytes = 0;
    this.chain = this.chain.then(async () => {
      if (this.failure) return;
      try {
        const out = await regexSearchBatch({ source: this.source, flags: this.flags, names, files, maxHitsPerFile: this.maxHitsPerFile, previewChars: PREVIEW_CHARS }, this.timeoutMs);
        for (const i of out.nameHits) {
          this.emit({ seq: nameSeqs[i] as number, sub: 0, result: { type: 'name', path: nameRels[i] as string, kind: nameKinds[i] as EntryKind } });
        }
        out.fileHits.forEach((hits, i) => {
          const job = jobs[i] as FileJob;
          if (hits.length > 0) this.matchedFile();
          for (const [line, column, preview] of hits) this.emit({ seq: job.seq, sub: line, result: { type: 'content', path: job.rel, line, column, preview } });
        });
      } catch (err) {
        this.failure ??= err;
      }
    });
    return this.chain;
  }

  async finish(): Promise<void> {
    await this.flush();
    if (this.failure) throw this.failure;
  }

  get failed(): boolean {
    return this.failure !== null;
  }
}

export const searchFiles = defineTool({
  name: 'search_files',
  aliases: ['file-search'],
  description:
    'Search file names and/or file contents under a directory, breadth-first: literal text by default (case-insensitive unless case_sensitive), or a regular expression with regex: true. Skips .git, node_modules, .gitignore\'d paths, binary files and files over the read limit. Content results give path, line, column and a preview line.',
  risk: 'read',
  riskLevel: 'low',
  mutates: false,
  input: Input,
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path, { allowRoot: true });
    if (!p.stat?.isFile()) requireDirectory(p);
    const { maxReadBytes, searchMaxFiles, searchTimeoutMs, regexTimeoutMs } = ctx.ws.limits;
    const deadline = Date.now() + searchTimeoutMs;
    const wantNames = input.mode !== 'content';
    const wantContent = input.mode !== 'name';
    const flags = input.case_sensitive ? 'm' : 'im';
    if (input.regex) checkUserRegex(input.query, flags);
    let globMatch: ((rel: string) => boolean) | null = null;
    if (input.glob !== undefined) {
      try {
        globMatch = picomatch(input.glob, { dot: true, basename: !input.glob.includes('/') });
      } catch (err) {
        throw new ToolError('INVALID_PARAM', `Invalid glob '${input.glob}': ${(err as Error).message}`);
      }
    }

    const found: Ordered[] = [];
    const matchedFiles = new Set<number>();
    let filesMatched = 0;
    let stopped = false; // enough results, the deadline, or an abort
    let timedOut = false;
    const overLimit = () => found.length > input.limit;
    const emit = (o: Ordered) => {
      found.push(o);
      if (overLimit()) stopped = true;
    };
    const timeUp = () => {
      if (Date.now() > deadline || ctx.signal.aborted) {
        timedOut = true;
        stopped = true;
      }
      return stopped;
    };

    // Literal matching on the main thread (no backtracking); user regexes only in the worker.
    const needle = input.case_sensitive ? input.query : input.query.toLowerCase();
    const nameMatches = (name: string) => (input.case_sensitive ? name : name.toLowerCase()).includes(needle);
    const byteFinder: ByteFinder | null = input.regex ? null : literalByteFinder(input.query, input.case_sensitive);
    const stringRe = input.regex || byteFinder ? null : literalStringRegExp(input.query);
    const batches = input.regex
      ? new RegexBatches(input.query, flags, input.limit + 1, regexTimeoutMs, emit, () => filesMatched++)
      : null;

    // Files to read, fed by the walk and drained by READ_CONCURRENCY readers.
    const queue: FileJob[] = [];
    let head = 0;
    let walkDone = false;
    const waiting: (() => void)[] = [];
    const wakeOne = () => waiting.shift()?.();
    const wakeAll = () => {
      for (const w of waiting.splice(0)) w();
    };
    let filesSearched = 0;
    let skippedBinary = 0;
    let skippedLarge = 0;
    let bytesRead = 0;

    const searchOne = async (job: FileJob, scratch: Buffer | null): Promise<void> => {
      const got = await readForSearch(job.abs, maxReadBytes, scratch);
      if (got.kind === 'binary') skippedBinary++;
      else if (got.kind === 'large') skippedLarge++;
      if (got.kind !== 'text') return;
      filesSearched++;
      bytesRead += got.buf.length;
      if (batches) return batches.addFile(job, got.buf);
      const max = input.limit + 1;
      const hits: ContentHit[] = byteFinder ? byteHits(got.buf, byteFinder, max) : stringHits(got.buf.toString('utf8'), stringRe as RegExp, max);
      if (hits.length > 0 && !matchedFiles.has(job.seq)) {
        matchedFiles.add(job.seq);
        filesMatched++;
      }
      for (const h of hits) emit({ seq: job.seq, sub: h.line, result: { type: 'content', path: job.rel, ...h } });
    };

    const reader = async (): Promise<void> => {
      // Literal searches reuse one buffer per reader for small files; regex batches keep theirs.
      const scratch = batches ? null : Buffer.allocUnsafeSlow(FIRST_CHUNK);
      for (;;) {
        if (stopped || timeUp() || batches?.failed) return;
        if (head < queue.length) {
          const job = queue[head] as FileJob;
          queue[head++] = undefined as unknown as FileJob;
          await searchOne(job, scratch);
          continue;
        }
        if (walkDone) return;
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
    };

    let seq = 0;
    /** One entry: `out` is its path in results, `globRel` what the glob is matched against (relative to `path`). */
    const consider = (name: string, out: string, globRel: string, abs: string, kind: EntryKind) => {
      const s = ++seq;
      const globOk = globMatch === null || (kind !== 'directory' && globMatch(globRel));
      if (wantNames && globOk) {
        if (batches) batches.addName(s, name, out, kind);
        else if (nameMatches(name)) emit({ seq: s, sub: 0, result: { type: 'name', path: out, kind } });
      }
      if (wantContent && kind === 'file' && globOk) {
        queue.push({ seq: s, abs, rel: out });
        wakeOne();
      }
    };

    const readers = Array.from({ length: wantContent ? READ_CONCURRENCY : 0 }, () => reader());
    let walkTruncated = false;
    let visited = 1; // a single file
    try {
      if (p.stat?.isFile()) {
        const name = path.posix.basename(p.realRel);
        consider(name, p.rel, name, p.real, 'file');
      } else {
        const walk = await walkTree(ctx.ws, p.real, {
          maxDepth: input.max_depth,
          maxEntries: searchMaxFiles,
          deadline,
          signal: ctx.signal,
          respectGitignore: input.respect_gitignore,
          onEntry: (e) => {
            if (stopped || batches?.failed) return false;
            consider(e.name, joinRel(p.rel, e.relFromStart), e.relFromStart, e.abs, e.kind);
          },
        });
        visited = walk.visited;
        walkTruncated = walk.truncated && walk.reason !== 'stopped';
        if (walk.reason === 'time') timedOut = true;
      }
    } finally {
      walkDone = true;
      wakeAll();
      await Promise.all(readers);
    }
    if (batches) await batches.finish();

    found.sort((a, b) => a.seq - b.seq || a.sub - b.sub);
    const truncated = walkTruncated || timedOut || found.length > input.limit;
    const results = found.slice(0, input.limit).map((o) => o.result);
    const contentHits = results.filter((r) => r.type === 'content').length;
    const q = input.query.length > 80 ? `${input.query.slice(0, 80)}…` : input.query;
    let text =
      results.length === 0
        ? `No matches found for '${q}' under '${p.rel}' (${filesSearched} files searched).`
        : `Found ${results.length} matches for '${q}' under '${p.rel}' (${results.length - contentHits} names, ${contentHits} lines in ${filesMatched} files; ${filesSearched} files searched).`;
    if (truncated) {
      text += timedOut
        ? ` Search stopped at the time limit (TOOLGATE_SEARCH_TIMEOUT_MS); narrow path or glob.`
        : found.length > input.limit
          ? ` Results truncated at limit ${input.limit}; narrow the query, path or glob, or raise limit.`
          : ` Search stopped after ${visited} entries (TOOLGATE_SEARCH_MAX_FILES); narrow path or glob.`;
    }
    return {
      data: { results, truncated, files_searched: filesSearched, files_matched: filesMatched, entries_visited: visited, skipped_binary: skippedBinary, skipped_large: skippedLarge },
      text,
      stats: { matches: results.length, files_searched: filesSearched, bytes_read: bytesRead },
      partial: truncated,
      pathResolved: p.rel,
      audit: { bytes_read: bytesRead },
    };
  },
});
