// User regular expressions under a hard time limit (replace_in_file; search_files uses the same
// approach in pool.ts). JavaScript's engine backtracks, so a pattern such as (a+)+$ can run for hours
// on a short input; every user regex therefore runs in a worker thread (the shared bounded pool,
// src/workers/bounded-pool.ts) that is terminated when it passes the limit, and recreated for the next job.
// The event loop never executes a user pattern.
import { E } from '../errors.js';
import { BoundedPool, WorkerFailure, WorkerJobError } from '../workers/bounded-pool.js';
import { PartKind, type ServiceRuntime } from '../workspace/runtime.js';

/** Compiles a pattern in the main thread only to validate it (compiling never backtracks). */
export function checkUserRegex(source: string, flags: string): void {
  try {
    new RegExp(source, flags);
  } catch (err) {
    const reason = (err as Error).message.replace(/^Invalid regular expression: /, '');
    throw E.invalidRegex(reason);
  }
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

// Plain JavaScript, the handler of a worker of the shared bounded pool (src/workers/bounded-pool.ts), so it
// needs no build step and loads the same way from src/ (tests), dist/ and the bundle. Kept small: match
// positions and expanded replacements only.
const HANDLER = String.raw`(() => {

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

return (msg) => ({ result: replace(msg) });
})()`;

// Raised when a user regex passes its time limit; tools turn it into TIMEOUT with their own wording.
export { RegexTimeout } from '../errors.js';

/** The worker's heap: a 64 MiB file (TOOLGATE_MAX_EDIT_BYTES) and its matches fit; more is FILE_TOO_LARGE. */
const REGEX_WORKER_HEAP_MB = 384;

// One worker per service (its runtime), one job at a time, kept between jobs; one past its limit is terminated
// (a stuck regex never yields) and the next job gets a fresh one.
const REGEX_POOL = new PartKind(
  () =>
    new BoundedPool({
      name: 'regex',
      handler: HANDLER,
      size: 1,
      reuse: true,
      timeFrom: 'dispatch',
      resourceLimits: { maxOldGenerationSizeMb: REGEX_WORKER_HEAP_MB, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    }),
);

async function run<T>(runtime: ServiceRuntime, message: Record<string, unknown>, timeoutMs: number): Promise<T> {
  try {
    return await runtime.part(REGEX_POOL).run<T>(message, { timeoutMs });
  } catch (err) {
    if (err instanceof WorkerJobError) throw E.invalidRegex(err.message);
    if (err instanceof WorkerFailure && err.kind === 'timeout') throw E.regexTimeout(timeoutMs);
    if (err instanceof WorkerFailure && err.kind === 'memory') {
      throw E.regexOutOfMemory(REGEX_WORKER_HEAP_MB);
    }
    throw E.regexFailed((err as Error)?.message ?? String(err));
  }
}

/**
 * All matches of a user regex in `text` (at most `limit`), with the replacements expanded the way
 * String.prototype.replace does; `tooLarge` instead when the expansions alone pass `maxLength` characters.
 * Runs in the regex worker of the calling service (`runtime`).
 */
export function regexReplaceMatches(runtime: ServiceRuntime, text: string, source: string, flags: string, replacement: string, limit: number, timeoutMs: number, maxLength: number): Promise<ReplaceMatches> {
  return run<ReplaceMatches>(
    runtime,
    { op: 'replace', text, source, flags: flags.includes('g') ? flags : `${flags}g`, replacement, expand: replacement.includes('$'), limit, maxLength },
    timeoutMs,
  );
}
