// The body of a search worker thread (see pool.ts). It runs in a worker so that user regexes can be
// stopped by terminating the thread, and so that file reads are plain synchronous syscalls on another core
// instead of thread-pool round trips on the event loop.
//
// The worker's functions are shipped to it as source text (Function#toString, SEARCH_WORKER_SOURCE) and
// searchWorkerMain is called there once, so they must be self-contained: no imports, and no references to
// anything outside their bodies except globals and each other.

/** What to look for; the same for every batch of one search. */
export interface SearchSpec {
  /** 'literal': exact text; 'regex': a JavaScript RegExp source (flag m always, i unless caseSensitive). */
  kind: 'literal' | 'regex';
  query: string;
  caseSensitive: boolean;
  /** Match file contents (false: names only). */
  content: boolean;
  maxHitsPerFile: number;
  /** Files above this size are skipped (TOOLGATE_MAX_READ_BYTES). */
  maxBytes: number;
  previewChars: number;
}

/** 0 searched, 1 binary (skipped), 2 over the size limit (skipped), 3 unreadable or vanished (skipped). */
export type FileStatus = 0 | 1 | 2 | 3;

/** [line (1-based), column (1-based, UTF-16 units of the line), preview]. */
export type LineHit = [number, number, string];

export interface FileOutcome {
  status: FileStatus;
  bytes: number;
  hits: LineHit[];
}

/**
 * A batch's files, compact: one status byte per path and the hits alone, so the main thread deserializes a
 * typed array and a few hits instead of an object per file.
 */
export interface BatchFiles {
  /** FileStatus of each requested path, in order. */
  status: Uint8Array;
  /** Bytes searched in the batch. */
  bytes: number;
  /** [index of the path, line, column, preview], in path order. */
  hits: Array<[number, number, number, string]>;
}

export interface BatchRequest {
  id: number;
  spec: SearchSpec;
  /** Absolute paths produced by the sandboxed walk; opened with O_NOFOLLOW | O_NONBLOCK. */
  paths: string[];
  /** Names to test against a regex query (literal names are matched on the main thread). */
  names: string[];
}

export type BatchReply = { id: number; ok: true; files: BatchFiles; nameHits: number[] } | { id: number; ok: false; error: string };

type Finder = (buf: Buffer, from: number) => number;

/** How one search's query is tested: on raw bytes, on decoded text, and against names. */
interface Matcher {
  bytes: Finder | null;
  text: RegExp | null;
  name: (name: string) => boolean;
}

/** A worker's file access: node:fs and the buffers it reuses from file to file. */
interface WorkerIo {
  fs: typeof import('node:fs');
  /** The first CHUNK bytes of every file. */
  scratch: Buffer;
  /** Files over CHUNK and up to KEEP_LARGE are read into this buffer, kept for the next one. */
  large: Buffer | null;
  decoder: InstanceType<typeof TextDecoder>;
}

// Each function below is shipped to the worker by its source text (see SEARCH_WORKER_SOURCE), so each may
// refer only to globals and to the other functions listed there: no imports, no module-level constants.

/** Builds the handler of a search worker (src/workers/bounded-pool.ts): one batch in, its answer out. */
function searchWorkerMain(): (req: Omit<BatchRequest, 'id'>) => { result: Omit<Extract<BatchReply, { ok: true }>, 'id' | 'ok'> } {
  const io: WorkerIo = {
    fs: process.getBuiltinModule('node:fs'),
    scratch: Buffer.allocUnsafeSlow(64 * 1024),
    large: null,
    decoder: new TextDecoder('utf-8'),
  };
  let lastKey = '';
  let matcher: Matcher | null = null;
  // A throw (an invalid regex) is answered by the pool as the job's error.
  return (req) => {
    const key = JSON.stringify(req.spec);
    if (key !== lastKey || !matcher) {
      matcher = makeMatcher(req.spec);
      lastKey = key;
    }
    const m = matcher;
    const nameHits: number[] = [];
    req.names.forEach((n, i) => {
      if (m.name(n)) nameHits.push(i);
    });
    const files: BatchFiles = { status: new Uint8Array(req.spec.content ? req.paths.length : 0), bytes: 0, hits: [] };
    if (req.spec.content) {
      req.paths.forEach((p, i) => {
        const o = searchFile(io, p, req.spec, m);
        files.status[i] = o.status;
        files.bytes += o.bytes;
        for (const [line, column, preview] of o.hits) files.hits.push([i, line, column, preview]);
      });
    }
    return { result: { files, nameHits } };
  };
}

/** Chooses how to match: a RegExp, a byte search (exact or ASCII case-folded), or a Unicode case-insensitive RegExp. */
function makeMatcher(spec: SearchSpec): Matcher {
  if (spec.kind === 'regex') {
    const re = new RegExp(spec.query, spec.caseSensitive ? 'gm' : 'gim');
    return {
      bytes: null,
      text: re,
      name: (n) => {
        re.lastIndex = 0;
        return re.test(n);
      },
    };
  }
  const folded = spec.caseSensitive ? spec.query : spec.query.toLowerCase();
  const name = (n: string) => (spec.caseSensitive ? n : n.toLowerCase()).includes(folded);
  if (spec.caseSensitive || !/[A-Za-z]/.test(spec.query)) {
    const needle = Buffer.from(spec.query, 'utf8');
    return { bytes: (buf, from) => buf.indexOf(needle, from), text: null, name };
  }
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(spec.query)) return { bytes: caseFoldFinder(spec.query), text: null, name };
  return { bytes: null, text: new RegExp(escapeRegExp(spec.query), 'giu'), name };
}

/** Escapes a literal for use inside a RegExp. */
function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** How often `byte` occurs in source text, roughly: the rarest byte of a query is the best anchor. */
function commonness(byte: number): number {
  const c = byte | 0x20;
  if (c >= 0x61 && c <= 0x7a) return 40 - 1.5 * 'etaoinsrhldcumfpgwybvkxjqz'.indexOf(String.fromCharCode(c));
  if (byte === 0x20 || byte === 0x0a || byte === 0x09) return 100;
  if (byte >= 0x30 && byte <= 0x39) return 8;
  if ('_.,;()=":\'-/{}'.includes(String.fromCharCode(byte))) return 15;
  return 5;
}

// Case-insensitive ASCII literal on raw bytes, as grep tools do it: memchr for the query's rarest byte (both
// cases), then a folded compare around each candidate. When candidates are dense in a file (a common
// anchor), the rest of that file is scanned with a precompiled case-insensitive RegExp over a latin1 view,
// whose offsets are byte offsets (without the u flag no non-ASCII character folds to ASCII).
function caseFoldFinder(query: string): Finder {
  const lower = Buffer.from(query.toLowerCase(), 'latin1');
  const len = lower.length;
  let k = 0;
  for (let i = 1; i < len; i++) if (commonness(lower[i] as number) < commonness(lower[k] as number)) k = i;
  const anchor = lower[k] as number;
  const variants = anchor >= 0x61 && anchor <= 0x7a ? [anchor, anchor - 0x20] : [anchor];
  const next = variants.map(() => -2);
  const re = new RegExp(escapeRegExp(query), 'gi');
  let cached: Buffer | null = null;
  let misses = 0;
  let text: string | null = null;
  const viaRegExp = (from: number) => {
    re.lastIndex = from;
    const m = re.exec(text as string);
    return m ? m.index : -1;
  };
  return (buf, from) => {
    if (cached !== buf) {
      cached = buf;
      next.fill(-2);
      misses = 0;
      text = null;
    }
    if (text !== null) return viaRegExp(from);
    let pos = from + k;
    for (;;) {
      let cand = -1;
      for (let v = 0; v < variants.length; v++) {
        let at = next[v] as number;
        if (at !== -1 && at < pos) next[v] = at = buf.indexOf(variants[v] as number, pos);
        if (at !== -1 && (cand === -1 || at < cand)) cand = at;
      }
      if (cand === -1) return -1;
      const start = cand - k;
      if (start + len <= buf.length) {
        let j = 0;
        for (; j < len; j++) {
          let c = buf[start + j] as number;
          if (c >= 0x41 && c <= 0x5a) c |= 0x20;
          if (c !== lower[j]) break;
        }
        if (j === len) return start;
      }
      pos = cand + 1;
      if (++misses > 256 && misses * 64 > pos) {
        text = buf.toString('latin1');
        return viaRegExp(from);
      }
    }
  };
}

/** One file searched: opened without following links, checked to be the walked file, read whole, its hits found. */
function searchFile(io: WorkerIo, path: string, spec: SearchSpec, m: Matcher): FileOutcome {
  const fs = io.fs;
  let fd: number;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return { status: 3, bytes: 0, hits: [] }; // vanished, became a link, unreadable: not an error for a search
  }
  if (!isWhere(fs, fd, path)) {
    fs.closeSync(fd);
    return { status: 3, bytes: 0, hits: [] }; // a directory on the way was swapped for a link: not this file
  }
  let buf: Buffer | FileStatus;
  try {
    buf = readWhole(io, fd, spec.maxBytes);
  } catch {
    return { status: 3, bytes: 0, hits: [] };
  } finally {
    fs.closeSync(fd);
  }
  if (typeof buf === 'number') return { status: buf, bytes: 0, hits: [] };
  const hits = m.bytes ? byteHits(buf, m.bytes, spec.maxHitsPerFile, spec.previewChars) : textHits(io.decoder.decode(buf), m.text as RegExp, spec.maxHitsPerFile, spec.previewChars);
  return { status: 0, bytes: buf.length, hits };
}

/**
 * The path was opened by string, so a directory on the way may have been swapped for a symlink since the
 * walk checked it: the descriptor must be the file at `path`. Without /proc the service only runs when the
 * weaker check was accepted at start, and then there is nothing to compare with.
 */
function isWhere(fs: typeof import('node:fs'), fd: number, path: string): boolean {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`) === path;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** The whole file at `fd`, or why it is skipped: binary (1), over `maxBytes` (2), not a regular file (3). */
function readWhole(io: WorkerIo, fd: number, maxBytes: number): Buffer | FileStatus {
  const { fs, scratch } = io;
  const CHUNK = scratch.length;
  // Files over CHUNK are read into a reused buffer up to this size (larger ones get their own).
  const KEEP_LARGE = 1024 * 1024;
  const n = fs.readSync(fd, scratch, 0, CHUNK, 0);
  if (isBinary(scratch, n)) return 1;
  if (n < CHUNK) return n > maxBytes ? 2 : scratch.subarray(0, n);
  const st = fs.fstatSync(fd);
  if (!st.isFile()) return 3;
  if (st.size > maxBytes) return 2;
  let big: Buffer;
  if (st.size + 1 > KEEP_LARGE) big = Buffer.allocUnsafe(st.size + 1);
  else {
    if (!io.large || io.large.length < st.size + 1) io.large = Buffer.allocUnsafeSlow(Math.min(KEEP_LARGE, 2 * (st.size + 1)));
    big = io.large.subarray(0, st.size + 1);
  }
  scratch.copy(big, 0, 0, n);
  let len = n;
  while (len < big.length) {
    const r = fs.readSync(fd, big, len, big.length - len, len);
    if (r === 0) break;
    len += r;
  }
  if (len > maxBytes) return 2; // grew while being read
  return big.subarray(0, len);
}

// Same rule as looksBinary in text.ts: a NUL byte in the first 8 KiB, unless there is a UTF-16 BOM.
function isBinary(buf: Buffer, n: number): boolean {
  if (n >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) return false;
  return buf.subarray(0, Math.min(n, 8192)).indexOf(0) !== -1;
}

// One hit per line; only the lines around hits are decoded (long lines only around the hit).
function byteHits(buf: Buffer, find: Finder, max: number, previewChars: number): LineHit[] {
  const WINDOW_BEFORE = 200;
  const WINDOW_AFTER = 800;
  const hits: LineHit[] = [];
  let line = 1;
  let counted = 0;
  let from = 0;
  while (hits.length < max && from <= buf.length) {
    const at = find(buf, from);
    if (at === -1) break;
    for (let p = buf.indexOf(10, counted); p !== -1 && p < at; p = buf.indexOf(10, p + 1)) line++;
    counted = at;
    const lineStart = at === 0 ? 0 : buf.lastIndexOf(10, at - 1) + 1;
    let lineEnd = buf.indexOf(10, at);
    if (lineEnd === -1) lineEnd = buf.length;
    const column = buf.toString('utf8', lineStart, at).length + 1;
    let preview: string;
    if (lineEnd - lineStart <= WINDOW_BEFORE + WINDOW_AFTER) {
      preview = cutPreview(buf.toString('utf8', lineStart, lineEnd), column, previewChars);
    } else {
      const winStart = Math.max(lineStart, at - WINDOW_BEFORE);
      const win = buf.toString('utf8', winStart, Math.min(lineEnd, at + WINDOW_AFTER)).replace(/^\uFFFD+|\uFFFD+$/g, '');
      preview = cutPreview(win, Math.min(at - winStart + 1, win.length), previewChars);
      if (winStart > lineStart && !preview.startsWith('…')) preview = `…${preview}`;
      if (!preview.endsWith('…')) preview = `${preview}…`;
    }
    hits.push([line, column, preview]);
    from = lineEnd + 1;
  }
  return hits;
}

function textHits(text: string, re: RegExp, max: number, previewChars: number): LineHit[] {
  const hits: LineHit[] = [];
  let line = 1;
  let counted = 0;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (hits.length < max && (m = re.exec(text)) !== null) {
    const at = m.index;
    for (let p = text.indexOf('\n', counted); p !== -1 && p < at; p = text.indexOf('\n', p + 1)) line++;
    counted = at;
    const start = at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
    let end = text.indexOf('\n', at);
    if (end === -1) end = text.length;
    hits.push([line, at - start + 1, cutPreview(text.slice(start, end), at - start + 1, previewChars)]);
    if (end >= text.length) break;
    re.lastIndex = end + 1;
  }
  return hits;
}

/** The line around a hit, trimmed, cut to `max` characters around `column` with '…' where cut. */
function cutPreview(line: string, column: number, max: number): string {
  const s = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (s.length <= max) return s.trim();
  const from = Math.max(0, Math.min(column - 1 - Math.floor(max / 4), s.length - max));
  return `${from > 0 ? '…' : ''}${s.slice(from, from + max).trim()}${from + max < s.length ? '…' : ''}`;
}

/**
 * The search worker's handler as source text for the pool: the functions above as declarations, and the
 * handler searchWorkerMain builds, evaluated once per worker.
 */
export const SEARCH_WORKER_SOURCE = `(() => {
${[searchWorkerMain, makeMatcher, escapeRegExp, commonness, caseFoldFinder, searchFile, isWhere, readWhole, isBinary, byteHits, textHits, cutPreview].map(String).join('\n')}
return ${searchWorkerMain.name}();
})()`;
