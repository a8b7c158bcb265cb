import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { ToolError } from '../envelope.js';
import { checkUserRegex } from '../search/regex.js';
import { BatchStalled, searchBatch, type SearchSpec } from '../search/pool.js';
import { joinRel, walkTree, type EntryKind } from '../search/walk.js';
import { withMemory } from '../workspace/memory-budget.js';
import { requireDirectory, type ResolvedPath } from '../workspace/sandbox.js';
import { defineTool, type ToolContext, type ToolResult } from './define.js';
import { OptionalDirArg } from './args.js';

const PREVIEW_CHARS = 200;
/** Files per worker batch. Regex batches are smaller: each must finish within TOOLGATE_REGEX_TIMEOUT_MS. */
const LITERAL_BATCH_FILES = 128;
const REGEX_BATCH_FILES = 16;
const NAME_BATCH = 512;
/** Batches in flight per worker: one running, one queued, so a worker never waits for the main thread. */
const IN_FLIGHT_PER_WORKER = 2;
const WORKERS = Math.max(1, Math.min(4, os.availableParallelism()));
/**
 * Files (or names) found by the walk but not yet handed to a worker, in batches: the walk waits beyond this
 * many, so a search holds a bounded window of its tree instead of the whole listing.
 */
const PENDING_BATCHES = 8;
/**
 * A content search's share of the memory budget (TOOLGATE_MEMORY_BUDGET_BYTES): its pending window, its
 * results and its part of the workers' read buffers. Searches beyond the budget wait their turn (first in,
 * first out) instead of all sharing the workers at a crawl; the time limit starts when a search does. With
 * the default 64 MiB budget 2 searches run at once, which keep the workers busy; more only cost memory
 * (bench/README.md, "Decisions").
 */
const SEARCH_MEMORY_BYTES = 32 * 1024 * 1024;

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

interface PendingFile {
  seq: number;
  abs: string;
  /** Path relative to the searched directory; `out(below)` is the path in results. */
  below: string;
  out: (below: string) => string;
}

interface PendingName {
  seq: number;
  name: string;
  rel: string;
  kind: EntryKind;
}

export const searchFiles = defineTool({
  name: 'search_files',
  aliases: ['file-search'],
  description:
    "Search file names and/or file contents under a directory, breadth-first: literal text by default (case-insensitive unless case_sensitive), or a regular expression with regex: true. Skips .git, node_modules, .gitignore'd paths, binary files and files over the read limit. Content results give path, line, column and a preview line.",
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { query: 'hello', mode: 'content' },
  output: Output,
  async run(ctx, input) {
    const p = await ctx.resolve(input.path, { allowRoot: true });
    if (!p.stat?.isFile()) requireDirectory(p);
    if (input.regex) checkUserRegex(input.query, input.case_sensitive ? 'm' : 'im');
    let globMatch: GlobMatch | null = null;
    if (input.glob !== undefined) {
      try {
        globMatch = picomatch(input.glob, { dot: true, basename: !input.glob.includes('/') });
      } catch (err) {
        throw new ToolError('INVALID_PARAM', `Invalid glob '${input.glob}': ${(err as Error).message}`);
      }
    }
    if (input.mode === 'name' && !input.regex) return search(ctx, input, p, globMatch);
    return withMemory(ctx.ws.limits.memoryBudgetBytes, SEARCH_MEMORY_BYTES, ctx.signal, () => search(ctx, input, p, globMatch));
  },
});

type GlobMatch = (rel: string) => boolean;

async function search(ctx: ToolContext, input: z.output<typeof Input>, p: ResolvedPath, globMatch: GlobMatch | null): Promise<ToolResult<z.output<typeof Output>>> {
  const { maxReadBytes, searchMaxFiles, searchTimeoutMs, regexTimeoutMs } = ctx.ws.limits;
  const deadline = Date.now() + searchTimeoutMs;
  const wantNames = input.mode !== 'content';
  const wantContent = input.mode !== 'name';
  // Contents (and, for regexes, names) are searched by worker threads; literal names here.
  const spec: SearchSpec = {
    kind: input.regex ? 'regex' : 'literal',
    query: input.query,
    caseSensitive: input.case_sensitive,
    content: wantContent,
    maxHitsPerFile: input.limit + 1,
    maxBytes: maxReadBytes,
    previewChars: PREVIEW_CHARS,
  };
  const needle = input.case_sensitive ? input.query : input.query.toLowerCase();
  const literalName = (name: string) => (input.case_sensitive ? name : name.toLowerCase()).includes(needle);
  const batchFiles = input.regex ? REGEX_BATCH_FILES : LITERAL_BATCH_FILES;

  const found: Ordered[] = [];
  let stopped = false; // enough results, the deadline, an abort or a failure
  let timedOut = false;
  let failure: unknown = null;
  const emit = (o: Ordered) => {
    found.push(o);
    if (found.length > input.limit) stopped = true;
  };
  const shouldStop = () => {
    if (!stopped && (Date.now() > deadline || ctx.signal.aborted)) {
      timedOut = true;
      stopped = true;
    }
    return stopped;
  };

  const files: PendingFile[] = [];
  let fileHead = 0;
  const names: PendingName[] = [];
  let nameHead = 0;
  let walkDone = false;
  const waiting: (() => void)[] = [];
  const wakeAll = () => {
    for (const w of waiting.splice(0)) w();
  };
  const ready = () => files.length - fileHead >= batchFiles || names.length - nameHead >= NAME_BATCH;
  // The walk waits while PENDING_BATCHES batches are pending and resumes at half of that.
  let resumeWalk: (() => void) | null = null;
  const behind = (slack: number) => files.length - fileHead > slack * batchFiles || names.length - nameHead > slack * NAME_BATCH;
  const pace = () => (!stopped && behind(PENDING_BATCHES) ? new Promise<void>((resolve) => (resumeWalk = resolve)) : undefined);
  const wakeWalk = () => {
    if (resumeWalk && (stopped || !behind(PENDING_BATCHES / 2))) {
      const resume = resumeWalk;
      resumeWalk = null;
      resume();
    }
  };

  let filesSearched = 0;
  let filesMatched = 0;
  let skippedBinary = 0;
  let skippedLarge = 0;
  let bytesRead = 0;

  const dispatcher = async (): Promise<void> => {
    for (;;) {
      if (shouldStop()) return wakeWalk();
      if (!ready() && !walkDone) {
        await new Promise<void>((resolve) => waiting.push(resolve));
        continue;
      }
      const batch = files.slice(fileHead, fileHead + batchFiles);
      fileHead += batch.length;
      const nameBatch = names.slice(nameHead, nameHead + NAME_BATCH);
      nameHead += nameBatch.length;
      // Drop what the workers took, so the queues hold only the pending window.
      if (fileHead >= PENDING_BATCHES * batchFiles) fileHead = files.splice(0, fileHead).length - fileHead;
      if (nameHead >= PENDING_BATCHES * NAME_BATCH) nameHead = names.splice(0, nameHead).length - nameHead;
      wakeWalk();
      if (batch.length === 0 && nameBatch.length === 0) return; // walk done, nothing left
      const timeoutMs = input.regex ? regexTimeoutMs : Math.max(1000, deadline - Date.now());
      let answer;
      try {
        answer = await searchBatch(spec, batch.map((f) => f.abs), nameBatch.map((n) => n.name), timeoutMs);
      } catch (err) {
        if (err instanceof BatchStalled) timedOut = true;
        else failure ??= err;
        stopped = true;
        return wakeWalk();
      }
      for (const i of answer.nameHits) {
        const n = nameBatch[i] as PendingName;
        emit({ seq: n.seq, sub: 0, result: { type: 'name', path: n.rel, kind: n.kind } });
      }
      const { status, hits } = answer.files;
      for (const st of status) {
        if (st === 0) filesSearched++;
        else if (st === 1) skippedBinary++;
        else if (st === 2) skippedLarge++;
      }
      bytesRead += answer.files.bytes;
      let lastFile = -1;
      for (const [i, line, column, preview] of hits) {
        const f = batch[i] as PendingFile;
        if (i !== lastFile) filesMatched++;
        lastFile = i;
        emit({ seq: f.seq, sub: line, result: { type: 'content', path: f.out(f.below), line, column, preview } });
      }
    }
  };

  let seq = 0;
  /**
   * One entry: `globRel` is its path relative to `path` (what the glob is matched against); `out(globRel)` its
   * path in results, made only for the entries that become results.
   */
  const consider = (name: string, globRel: string, out: (globRel: string) => string, abs: string, kind: EntryKind) => {
    const s = ++seq;
    const globOk = globMatch === null || (kind !== 'directory' && globMatch(globRel));
    if (!globOk) return;
    if (wantNames) {
      if (input.regex) names.push({ seq: s, name, rel: out(globRel), kind });
      else if (literalName(name)) emit({ seq: s, sub: 0, result: { type: 'name', path: out(globRel), kind } });
    }
    if (wantContent && kind === 'file') files.push({ seq: s, abs, below: globRel, out });
    if (ready()) wakeAll();
  };
  const below = (relFromStart: string) => joinRel(p.rel, relFromStart);

  const dispatchers = Array.from({ length: WORKERS * IN_FLIGHT_PER_WORKER }, () => dispatcher());
  let walkTruncated = false;
  let visited = 1; // a single file
  try {
    if (p.stat?.isFile()) {
      const name = path.posix.basename(p.realRel);
      consider(name, name, () => p.rel, p.real, 'file');
    } else {
      const walk = await walkTree(p.ws, p, {
        maxDepth: input.max_depth,
        maxEntries: searchMaxFiles,
        deadline,
        signal: ctx.signal,
        respectGitignore: input.respect_gitignore,
        pace,
        onEntry: (e) => {
          if (stopped) return false;
          consider(e.name, e.relFromStart, below, e.abs, e.kind);
        },
      });
      visited = walk.visited;
      walkTruncated = walk.truncated && walk.reason !== 'stopped';
      if (walk.reason === 'time') timedOut = true;
    }
  } finally {
    walkDone = true;
    wakeAll();
    await Promise.all(dispatchers);
  }
  if (failure) throw failure;

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
      ? ' Search stopped at the time limit (TOOLGATE_SEARCH_TIMEOUT_MS); narrow path or glob.'
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
}
