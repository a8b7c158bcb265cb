// The body of a search worker thread (see pool.ts). It runs in a worker so that user regexes can be
// stopped by terminating the thread, and so that file reads are plain synchronous syscalls on another core
// instead of thread-pool round trips on the event loop.
//
// searchWorkerMain is shipped to the worker as source text (Function#toString) and called there once, so it
// must be self-contained: no imports and no references to anything outside its own body except globals.

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

/** Builds the handler of a search worker (src/workers/bounded-pool.ts): one batch in, its answer out. */
export function searchWorkerMain(): (req: Omit<BatchRequest, 'id'>) => { result: Omit<Extract<BatchReply, { ok: true }>, 'id' | 'ok'> } {
  const fs = process.getBuiltinModule('node:fs');
  const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;
  const CHUNK = 64 * 1024;
  const SNIFF = 8192;
  const WINDOW_BEFORE = 200;
  const WINDOW_AFTER = 800;
  const scratch = Buffer.allocUnsafeSlow(CHUNK);
  // Files over CHUNK are read into a reused buffer up to this size (larger ones get their own).
  const KEEP_LARGE = 1024 * 1024;
  let large: Buffer | null = null;
  const decoder = new TextDecoder('utf-8');

  type Finder = (buf: Buffer, from: number) => number;
  interface Matcher {
    bytes: Finder | null;
    text: RegExp | null;
    name: (name: string) => boolean;
  }

  const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

  // Same rule as looksBinary in text.ts: a NUL byte in the first 8 KiB, unless there is a UTF-16 BOM.
  const isBinary = (buf: Buffer, n: number) => {
    if (n >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) return false;
    return buf.subarray(0, Math.min(n, SNIFF)).indexOf(0) !== -1;
  };

  const commonness = (byte: number) => {
    const c = byte | 0x20;
    if (c >= 0x61 && c <= 0x7a) return 40 - 1.5 * 'etaoinsrhldcumfpgwybvkxjqz'.indexOf(String.fromCharCode(c));
    if (byte === 0x20 || byte === 0x0a || byte === 0x09) return 100;
    if (byte >= 0x30 && byte <= 0x39) return 8;
    if ('_.,;()=":\'-/{}'.includes(String.fromCharCode(byte))) return 15;
    return 5;
  };

  // Case-insensitive ASCII literal on raw bytes, as grep tools do it: memchr for the query's rarest byte (both
  // cases), then a folded compare around each candidate. When candidates are dense in a file (a common
  // anchor), the rest of that file is scanned with a precompiled case-insensitive RegExp over a latin1 view,
  // whose offsets are byte offsets (without the u flag no non-ASCII character folds to ASCII).
  const caseFoldFinder = (query: string): Finder => {
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
  };

  const makeMatcher = (spec: SearchSpec): Matcher => {
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
  };

  const cutPreview = (line: string, column: number, max: number) => {
    const s = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (s.length <= max) return s.trim();
    const from = Math.max(0, Math.min(column - 1 - Math.floor(max / 4), s.length - max));
    return `${from > 0 ? '…' : ''}${s.slice(from, from + max).trim()}${from + max < s.length ? '…' : ''}`;
  };

  // One hit per line; only the lines around hits are decoded (long lines only around the hit).
  const byteHits = (buf: Buffer, find: Finder, max: number, previewChars: number): LineHit[] => {
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
  };

  const textHits = (text: string, re: RegExp, max: number, previewChars: number): LineHit[] => {
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
  };

  /**
   * The path was opened by string, so a directory on the way may have been swapped for a symlink since the
   * walk checked it: the descriptor must be the file at `path`. Without /proc the service only runs when the
   * weaker check was accepted at start, and then there is nothing to compare with.
   */
  const isWhere = (fd: number, path: string): boolean => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT';
    }
  };

  const searchFile = (path: string, spec: SearchSpec, m: Matcher): FileOutcome => {
    let fd: number;
    try {
      fd = fs.openSync(path, OPEN_FLAGS);
    } catch {
      return { status: 3, bytes: 0, hits: [] }; // vanished, became a link, unreadable: not an error for a search
    }
    if (!isWhere(fd, path)) {
      fs.closeSync(fd);
      return { status: 3, bytes: 0, hits: [] }; // a directory on the way was swapped for a link: not this file
    }
    let buf: Buffer;
    try {
      const n = fs.readSync(fd, scratch, 0, CHUNK, 0);
      if (isBinary(scratch, n)) return { status: 1, bytes: 0, hits: [] };
      if (n < CHUNK) {
        if (n > spec.maxBytes) return { status: 2, bytes: 0, hits: [] };
        buf = scratch.subarray(0, n);
      } else {
        const st = fs.fstatSync(fd);
        if (!st.isFile()) return { status: 3, bytes: 0, hits: [] };
        if (st.size > spec.maxBytes) return { status: 2, bytes: 0, hits: [] };
        let big: Buffer;
        if (st.size + 1 > KEEP_LARGE) big = Buffer.allocUnsafe(st.size + 1);
        else {
          if (!large || large.length < st.size + 1) large = Buffer.allocUnsafeSlow(Math.min(KEEP_LARGE, 2 * (st.size + 1)));
          big = large.subarray(0, st.size + 1);
        }
        scratch.copy(big, 0, 0, n);
        let len = n;
        while (len < big.length) {
          const r = fs.readSync(fd, big, len, big.length - len, len);
          if (r === 0) break;
          len += r;
        }
        if (len > spec.maxBytes) return { status: 2, bytes: 0, hits: [] }; // grew while being read
        buf = big.subarray(0, len);
      }
    } catch {
      return { status: 3, bytes: 0, hits: [] };
    } finally {
      fs.closeSync(fd);
    }
    const hits = m.bytes ? byteHits(buf, m.bytes, spec.maxHitsPerFile, spec.previewChars) : textHits(decoder.decode(buf), m.text as RegExp, spec.maxHitsPerFile, spec.previewChars);
    return { status: 0, bytes: buf.length, hits };
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
        const o = searchFile(p, req.spec, m);
        files.status[i] = o.status;
        files.bytes += o.bytes;
        for (const [line, column, preview] of o.hits) files.hits.push([i, line, column, preview]);
      });
    }
    return { result: { files, nameHits } };
  };
}
