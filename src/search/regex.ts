// User regular expressions under a hard time limit (replace_in_file; search_files uses the same
// approach in pool.ts). JavaScript's engine backtracks, so a pattern such as (a+)+$ can run for hours
// on a short input; every user regex therefore runs in a worker thread that is terminated when it passes the
// limit, and recreated for the next job. The event loop never executes a user pattern.
import { Worker } from 'node:worker_threads';
import { ToolError } from '../envelope.js';

/** Compiles a pattern in the main thread only to validate it (compiling never backtracks). */
export function checkUserRegex(source: string, flags: string): void {
  try {
    new RegExp(source, flags);
  } catch (err) {
    const reason = (err as Error).message.replace(/^Invalid regular expression: /, '');
    throw new ToolError('INVALID_REGEX', `Invalid regex pattern: ${reason}`);
  }
}

/** Escapes a literal for use inside a RegExp. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

export interface ReplaceMatches {
  /** Start and end (UTF-16 offsets) of each match, in order. */
  starts: number[];
  ends: number[];
  /** The expanded replacement of each match ($1, $&, $<name>…), or null when `new` holds no '$'. */
  replacements: string[] | null;
  /** The cap was reached: there may be more matches. */
  capped: boolean;
  /** The expanded replacements passed `maxLength` characters, so the result would too: nothing else is returned. */
  tooLarge?: boolean;
}

// Plain JavaScript run with `eval: true`, so it needs no build step and loads the same way from src/ (tests)
// and dist/. Kept small: match positions and expanded replacements only.
const WORKER_SOURCE = String.raw`
const { parentPort } = require('node:worker_threads');

// The replacement parsed once into literal text and references ($&, $1, $<name>, the text before or after
// the match), read the way String.prototype.replace reads it for a regex with that many numbered groups.
function compile(rep, groups, named) {
  const parts = [];
  let lit = '';
  for (let i = 0; i < rep.length; i++) {
    const c = rep[i];
    if (c !== '$' || i + 1 >= rep.length) { lit += c; continue; }
    const n = rep[i + 1];
    let ref;
    if (n === '$') { lit += '$'; i++; continue; }
    else if (n === '&') { ref = { k: '&' }; i++; }
    else if (n === '\x60') { ref = { k: 'pre' }; i++; }
    else if (n === "'") { ref = { k: 'post' }; i++; }
    else if (n >= '0' && n <= '9') {
      const two = rep.slice(i + 1, i + 3);
      if (two.length === 2 && two[1] >= '0' && two[1] <= '9' && Number(two) >= 1 && Number(two) <= groups) { ref = { k: 'g', g: Number(two) }; i += 2; }
      else if (Number(n) >= 1 && Number(n) <= groups) { ref = { k: 'g', g: Number(n) }; i++; }
      else { lit += c; continue; }
    } else if (n === '<' && named) {
      const close = rep.indexOf('>', i + 2);
      if (close === -1) { lit += c; continue; }
      ref = { k: 'name', name: rep.slice(i + 2, close) };
      i = close;
    } else { lit += c; continue; }
    if (lit !== '') { parts.push(lit); lit = ''; }
    parts.push(ref);
  }
  if (lit !== '') parts.push(lit);
  return parts;
}

function piece(p, m, text) {
  if (typeof p === 'string') return p;
  if (p.k === '&') return m[0];
  if (p.k === 'pre') return text.slice(0, m.index);
  if (p.k === 'post') return text.slice(m.index + m[0].length);
  if (p.k === 'g') return m[p.g] ?? '';
  return m.groups[p.name] ?? '';
}

// The pieces are sized before they are joined: null when the expansion would pass budget characters
// ($& or $' repeated can multiply the file), so an oversized string is never built.
function expand(parts, m, text, budget) {
  const pieces = new Array(parts.length);
  let length = 0;
  for (let i = 0; i < parts.length; i++) {
    pieces[i] = piece(parts[i], m, text);
    length += pieces[i].length;
    if (length > budget) return null;
  }
  return pieces.join('');
}

function replace(msg) {
  const re = new RegExp(msg.source, msg.flags);
  const text = msg.text;
  const starts = [], ends = [];
  const reps = msg.expand ? [] : null;
  let capped = false;
  // The result holds every expansion, so their total bounds it from below: past maxLength, stop building them.
  let held = 0;
  let parts = null;
  for (const m of text.matchAll(re)) {
    if (starts.length >= msg.limit) { capped = true; break; }
    starts.push(m.index);
    ends.push(m.index + m[0].length);
    if (reps) {
      parts ??= compile(msg.replacement, m.length - 1, m.groups !== undefined);
      const rep = expand(parts, m, text, msg.maxLength - held);
      if (rep === null) return { starts: [], ends: [], replacements: null, capped: false, tooLarge: true };
      held += rep.length;
      reps.push(rep);
    }
  }
  return { starts, ends, replacements: reps, capped };
}

parentPort.on('message', (msg) => {
  try {
    const result = replace(msg);
    parentPort.postMessage({ id: msg.id, ok: true, result });
  } catch (err) {
    parentPort.postMessage({ id: msg.id, ok: false, error: String((err && err.message) || err) });
  }
});
`;

interface Job {
  id: number;
  message: Record<string, unknown>;
  transfer: ArrayBuffer[];
  timeoutMs: number;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

/** One worker, one job at a time; a job past its limit kills the worker (the next job gets a fresh one). */
class RegexRunner {
  private worker: Worker | null = null;
  private queue: Job[] = [];
  private running: { job: Job; timer: NodeJS.Timeout } | null = null;
  private nextId = 1;

  run<T>(message: Record<string, unknown>, timeoutMs: number, transfer: ArrayBuffer[] = []): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, message, transfer, timeoutMs, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  private spawn(): Worker {
    const w = new Worker(WORKER_SOURCE, { eval: true });
    w.unref();
    w.on('message', (reply: Reply) => this.settle(reply));
    w.on('error', (err) => this.fail(w, err));
    w.on('exit', () => this.fail(w, new Error('regex worker exited')));
    return w;
  }

  private pump(): void {
    if (this.running || this.queue.length === 0) return;
    const job = this.queue.shift() as Job;
    this.worker ??= this.spawn();
    const worker = this.worker;
    const timer = setTimeout(() => {
      // Terminate first: a stuck regex never yields, so the worker cannot answer anyway.
      this.worker = null;
      this.running = null;
      void worker.terminate();
      job.reject(new RegexTimeout(job.timeoutMs));
      this.pump();
    }, job.timeoutMs);
    this.running = { job, timer };
    try {
      worker.postMessage({ ...job.message, id: job.id }, job.transfer);
    } catch (err) {
      clearTimeout(timer);
      this.running = null;
      job.reject(err);
      this.pump();
    }
  }

  private settle(reply: Reply): void {
    const cur = this.running;
    if (!cur || cur.job.id !== reply.id) return;
    clearTimeout(cur.timer);
    this.running = null;
    if (reply.ok) cur.job.resolve(reply.result);
    else cur.job.reject(new ToolError('INVALID_REGEX', `Invalid regex pattern: ${reply.error}`));
    this.pump();
  }

  private fail(w: Worker, err: unknown): void {
    if (this.worker !== w) return; // an old, terminated worker
    this.worker = null;
    const cur = this.running;
    if (cur) {
      clearTimeout(cur.timer);
      this.running = null;
      cur.job.reject(new ToolError('EXECUTION_ERROR', `Regex evaluation failed: ${(err as Error)?.message ?? String(err)}`));
    }
    this.pump();
  }
}

/** Raised when a user regex passes its time limit; tools turn it into TIMEOUT with their own wording. */
export class RegexTimeout extends ToolError {
  constructor(readonly limitMs: number) {
    super(
      'TIMEOUT',
      `Regex pattern ran longer than ${limitMs} ms (TOOLGATE_REGEX_TIMEOUT_MS) and was stopped; simplify it (avoid nested quantifiers such as (a+)+) or use an exact match.`,
    );
  }
}

const runner = new RegexRunner();

/**
 * All matches of a user regex in `text` (at most `limit`), with the replacements expanded the way
 * String.prototype.replace does; `tooLarge` instead when the expansions alone pass `maxLength` characters.
 */
export function regexReplaceMatches(text: string, source: string, flags: string, replacement: string, limit: number, timeoutMs: number, maxLength: number): Promise<ReplaceMatches> {
  return runner.run<ReplaceMatches>(
    { op: 'replace', text, source, flags: flags.includes('g') ? flags : `${flags}g`, replacement, expand: replacement.includes('$'), limit, maxLength },
    timeoutMs,
  );
}
