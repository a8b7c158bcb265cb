import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { E } from '../errors.js';
import { checkUserRegex } from '../search/regex.js';
import { BatchStalled, searchBatch, type BatchAnswer, type SearchSpec } from '../search/pool.js';
import { joinRel, walkTree, type EntryKind } from '../search/walk.js';
import { withMemory } from '../workspace/memory-budget.js';
import type { ServiceRuntime } from '../workspace/runtime.js';
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
  summary: 'names and contents, breadth-first, `.gitignore` aware, bounded',
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
        throw E.globInvalid(input.glob, (err as Error).message);
      }
    }
    if (input.mode === 'name' && !input.regex) return search(ctx, input, p, globMatch);
    return withMemory(ctx.ws, SEARCH_MEMORY_BYTES, ctx.signal, () => search(ctx, input, p, globMatch));
  },
});

type GlobMatch = (rel: string) => boolean;

async function search(ctx: ToolContext, input: z.output<typeof Input>, p: ResolvedPath, globMatch: GlobMatch | null): Promise<ToolResult<z.output<typeof Output>>> {
  const { maxReadBytes, searchMaxFiles, searchTimeoutMs, regexTimeoutMs } = ctx.ws.limits;
  const run = new SearchRun(ctx.ws.runtime, input, globMatch, ctx.signal, Date.now() + searchTimeoutMs, maxReadBytes, regexTimeoutMs);
  const dispatchers = Array.from({ length: WORKERS * IN_FLIGHT_PER_WORKER }, () => run.dispatcher());
  let walkTruncated = false;
  let visited = 1; // a single file
  try {
    if (p.stat?.isFile()) {
      const name = path.posix.basename(p.realRel);
      run.consider(name, name, () => p.rel, p.real, 'file');
    } else {
      const below = (relFromStart: string) => joinRel(p.rel, relFromStart);
      const walk = await walkTree(p.ws, p, {
        maxDepth: input.max_depth,
        maxEntries: searchMaxFiles,
        deadline: run.deadline,
        signal: ctx.signal,
        respectGitignore: input.respect_gitignore,
        pace: run.pace,
        onEntry: (e) => {
          if (run.stopped) return false;
          run.consider(e.name, e.relFromStart, below, e.abs, e.kind);
        },
      });
      visited = walk.visited;
      walkTruncated = walk.truncated && walk.reason !== 'stopped';
      if (walk.reason === 'time') run.timedOut = true;
    }
  } finally {
    run.walkDone = true;
    run.wakeAll();
    await Promise.all(dispatchers);
  }
  if (run.failure) throw run.failure;
  return searchResult(run, input, p, walkTruncated, visited);
}

/**
 * One search's state between its walk and its dispatchers: the walk queues files and names (`consider`), the
 * dispatchers hand them to the workers in batches and collect the results, each side pacing the other.
 */
class SearchRun {
  readonly found: Ordered[] = [];
  /** Enough results, the deadline, an abort or a failure. */
  stopped = false;
  timedOut = false;
  failure: unknown = null;
  walkDone = false;
  filesSearched = 0;
  filesMatched = 0;
  skippedBinary = 0;
  skippedLarge = 0;
  bytesRead = 0;

  readonly #input: z.output<typeof Input>;
  readonly #globMatch: GlobMatch | null;
  readonly #signal: AbortSignal;
  readonly deadline: number;
  readonly #regexTimeoutMs: number;
  /** The calling service's runtime: its search workers. */
  readonly #runtime: ServiceRuntime;
  /** Contents (and, for regexes, names) are searched by worker threads; literal names here. */
  readonly #spec: SearchSpec;
  readonly #needle: string;
  readonly #batchFiles: number;
  readonly #files: PendingFile[] = [];
  #fileHead = 0;
  readonly #names: PendingName[] = [];
  #nameHead = 0;
  readonly #waiting: (() => void)[] = [];
  #resumeWalk: (() => void) | null = null;
  #seq = 0;

  constructor(runtime: ServiceRuntime, input: z.output<typeof Input>, globMatch: GlobMatch | null, signal: AbortSignal, deadline: number, maxReadBytes: number, regexTimeoutMs: number) {
    this.#runtime = runtime;
    this.#input = input;
    this.#globMatch = globMatch;
    this.#signal = signal;
    this.deadline = deadline;
    this.#regexTimeoutMs = regexTimeoutMs;
    this.#spec = {
      kind: input.regex ? 'regex' : 'literal',
      query: input.query,
      caseSensitive: input.case_sensitive,
      content: input.mode !== 'name',
      maxHitsPerFile: input.limit + 1,
      maxBytes: maxReadBytes,
      previewChars: PREVIEW_CHARS,
    };
    this.#needle = input.case_sensitive ? input.query : input.query.toLowerCase();
    this.#batchFiles = input.regex ? REGEX_BATCH_FILES : LITERAL_BATCH_FILES;
  }

  /**
   * One entry: `globRel` is its path relative to `path` (what the glob is matched against); `out(globRel)` its
   * path in results, made only for the entries that become results.
   */
  consider(name: string, globRel: string, out: (globRel: string) => string, abs: string, kind: EntryKind): void {
    const s = ++this.#seq;
    const globOk = this.#globMatch === null || (kind !== 'directory' && this.#globMatch(globRel));
    if (!globOk) return;
    const input = this.#input;
    if (input.mode !== 'content') {
      if (input.regex) this.#names.push({ seq: s, name, rel: out(globRel), kind });
      else if ((input.case_sensitive ? name : name.toLowerCase()).includes(this.#needle)) this.#emit({ seq: s, sub: 0, result: { type: 'name', path: out(globRel), kind } });
    }
    if (input.mode !== 'name' && kind === 'file') this.#files.push({ seq: s, abs, below: globRel, out });
    if (this.#ready()) this.wakeAll();
  }

  /** The walk waits while PENDING_BATCHES batches are pending and resumes at half of that. */
  readonly pace = (): Promise<void> | undefined =>
    !this.stopped && this.#behind(PENDING_BATCHES) ? new Promise<void>((resolve) => (this.#resumeWalk = resolve)) : undefined;

  wakeAll(): void {
    for (const w of this.#waiting.splice(0)) w();
  }

  /** Hands batches to the workers until the walk is done and its queues are empty, or the search stops. */
  async dispatcher(): Promise<void> {
    for (;;) {
      if (this.#shouldStop()) return this.#wakeWalk();
      if (!this.#ready() && !this.walkDone) {
        await new Promise<void>((resolve) => this.#waiting.push(resolve));
        continue;
      }
      const batch = this.#files.slice(this.#fileHead, this.#fileHead + this.#batchFiles);
      this.#fileHead += batch.length;
      const nameBatch = this.#names.slice(this.#nameHead, this.#nameHead + NAME_BATCH);
      this.#nameHead += nameBatch.length;
      // Drop what the workers took, so the queues hold only the pending window.
      if (this.#fileHead >= PENDING_BATCHES * this.#batchFiles) this.#fileHead = this.#files.splice(0, this.#fileHead).length - this.#fileHead;
      if (this.#nameHead >= PENDING_BATCHES * NAME_BATCH) this.#nameHead = this.#names.splice(0, this.#nameHead).length - this.#nameHead;
      this.#wakeWalk();
      if (batch.length === 0 && nameBatch.length === 0) return; // walk done, nothing left
      const timeoutMs = this.#input.regex ? this.#regexTimeoutMs : Math.max(1000, this.deadline - Date.now());
      let answer;
      try {
        answer = await searchBatch(this.#runtime, this.#spec, batch.map((f) => f.abs), nameBatch.map((n) => n.name), timeoutMs);
      } catch (err) {
        if (err instanceof BatchStalled) this.timedOut = true;
        else this.failure ??= err;
        this.stopped = true;
        return this.#wakeWalk();
      }
      this.#collect(answer, batch, nameBatch);
    }
  }

  /** A batch's answer: its name hits and line hits become results, its file statuses counts. */
  #collect(answer: BatchAnswer, batch: PendingFile[], nameBatch: PendingName[]): void {
    for (const i of answer.nameHits) {
      const n = nameBatch[i] as PendingName;
      this.#emit({ seq: n.seq, sub: 0, result: { type: 'name', path: n.rel, kind: n.kind } });
    }
    const { status, hits } = answer.files;
    for (const st of status) {
      if (st === 0) this.filesSearched++;
      else if (st === 1) this.skippedBinary++;
      else if (st === 2) this.skippedLarge++;
    }
    this.bytesRead += answer.files.bytes;
    let lastFile = -1;
    for (const [i, line, column, preview] of hits) {
      const f = batch[i] as PendingFile;
      if (i !== lastFile) this.filesMatched++;
      lastFile = i;
      this.#emit({ seq: f.seq, sub: line, result: { type: 'content', path: f.out(f.below), line, column, preview } });
    }
  }

  #emit(o: Ordered): void {
    this.found.push(o);
    if (this.found.length > this.#input.limit) this.stopped = true;
  }

  #shouldStop(): boolean {
    if (!this.stopped && (Date.now() > this.deadline || this.#signal.aborted)) {
      this.timedOut = true;
      this.stopped = true;
    }
    return this.stopped;
  }

  #ready(): boolean {
    return this.#files.length - this.#fileHead >= this.#batchFiles || this.#names.length - this.#nameHead >= NAME_BATCH;
  }

  #behind(slack: number): boolean {
    return this.#files.length - this.#fileHead > slack * this.#batchFiles || this.#names.length - this.#nameHead > slack * NAME_BATCH;
  }

  #wakeWalk(): void {
    if (this.#resumeWalk && (this.stopped || !this.#behind(PENDING_BATCHES / 2))) {
      const resume = this.#resumeWalk;
      this.#resumeWalk = null;
      resume();
    }
  }
}

/** The results in walk order, cut at the limit, and the text that says why the search stopped. */
function searchResult(run: SearchRun, input: z.output<typeof Input>, p: ResolvedPath, walkTruncated: boolean, visited: number): ToolResult<z.output<typeof Output>> {
  const { found, timedOut, filesSearched, filesMatched, bytesRead } = run;
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
    data: { results, truncated, files_searched: filesSearched, files_matched: filesMatched, entries_visited: visited, skipped_binary: run.skippedBinary, skipped_large: run.skippedLarge },
    text,
    stats: { matches: results.length, files_searched: filesSearched, bytes_read: bytesRead },
    partial: truncated,
    pathResolved: p.rel,
    audit: { bytes_read: bytesRead },
  };
}
