// date, pwd and ls implemented in-process: nothing is spawned, ls reads the tree through the sandbox's
// walk (as list_directory does), and every path the output shows is relative to the project root.
import type { Stats } from 'node:fs';
import { E } from '../../errors.js';
import { DEFAULT_SKIP_DIRS, joinRel, walkTree, type WalkEntry } from '../../search/walk.js';
import type { ResolvedPath } from '../../workspace/sandbox.js';
import type { ToolContext } from '../define.js';
import { DATE_FLAGS, LS_FLAGS, parseArgs, PWD_FLAGS } from './argv.js';

export interface CommandOutput {
  output: string;
  truncated: boolean;
  pathResolved?: string | null;
  entries?: number;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The wall-clock fields of `d` in UTC or in the server's zone (the process's TZ). */
function fields(d: Date, utc: boolean) {
  return utc
    ? { y: d.getUTCFullYear(), mo: d.getUTCMonth(), day: d.getUTCDate(), wd: d.getUTCDay(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds(), offsetMin: 0 }
    : { y: d.getFullYear(), mo: d.getMonth(), day: d.getDate(), wd: d.getDay(), h: d.getHours(), mi: d.getMinutes(), s: d.getSeconds(), offsetMin: -d.getTimezoneOffset() };
}

function offset(min: number, colon: boolean): string {
  const a = Math.abs(min);
  return `${min < 0 ? '-' : '+'}${pad(Math.floor(a / 60))}${colon ? ':' : ''}${pad(a % 60)}`;
}

function zoneName(d: Date, utc: boolean): string {
  if (utc) return 'UTC';
  const part = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName');
  return part?.value ?? offset(-d.getTimezoneOffset(), false);
}

/** GNU date's default, -R and -I[date|seconds] formats (C locale); `+FORMAT` is not offered. */
export function runDate(argv: readonly string[], now = new Date()): CommandOutput {
  // GNU spells -I's argument glued to it (-Iseconds); as separate letters it would read as flags.
  const normalized = argv.map((a) => (/^-I(date|hours|minutes|seconds)$/.test(a) ? `--iso-8601=${a.slice(2)}` : a));
  const { flags, values, operands } = parseArgs('date', normalized, DATE_FLAGS);
  if (operands.length > 0) {
    const what = operands[0]?.startsWith('+') ? 'a +FORMAT is not supported (use -I, -Iseconds or -R; time_now gives ISO 8601)' : 'date cannot set the clock';
    throw E.dateInvalid(what);
  }
  const utc = flags.has('u');
  const f = fields(now, utc);
  let out: string;
  if (flags.has('I')) {
    const precision = values.get('I') ?? 'date';
    if (!['date', 'hours', 'minutes', 'seconds'].includes(precision)) throw E.datePrecisionInvalid(precision);
    out = `${f.y}-${pad(f.mo + 1)}-${pad(f.day)}`;
    if (precision !== 'date') {
      out += `T${pad(f.h)}`;
      if (precision !== 'hours') out += `:${pad(f.mi)}`;
      if (precision === 'seconds') out += `:${pad(f.s)}`;
      out += offset(f.offsetMin, true);
    }
  } else if (flags.has('R')) {
    out = `${DAYS[f.wd]}, ${pad(f.day)} ${MONTHS[f.mo]} ${f.y} ${pad(f.h)}:${pad(f.mi)}:${pad(f.s)} ${offset(f.offsetMin, false)}`;
  } else {
    out = `${DAYS[f.wd]} ${MONTHS[f.mo]} ${String(f.day).padStart(2)} ${pad(f.h)}:${pad(f.mi)}:${pad(f.s)} ${zoneName(now, utc)} ${f.y}`;
  }
  return { output: `${out}\n`, truncated: false, pathResolved: null };
}

/** The project root as the command sees it: "/" (a host path never appears). */
export function runPwd(argv: readonly string[]): CommandOutput {
  const { operands } = parseArgs('pwd', argv, PWD_FLAGS);
  if (operands.length > 0) throw E.pwdArguments();
  return { output: '/\n', truncated: false, pathResolved: '.' };
}

interface LsEntry {
  name: string;
  /** Directory the entry is listed under, relative to the operand ('' for its own entries). */
  parent: string;
  kind: WalkEntry['kind'];
  stat: Stats;
}

function modeString(kind: WalkEntry['kind'], st: Stats): string {
  const type = kind === 'directory' ? 'd' : kind === 'symlink' ? 'l' : kind === 'file' ? '-' : st.isFIFO() ? 'p' : st.isSocket() ? 's' : st.isCharacterDevice() ? 'c' : st.isBlockDevice() ? 'b' : '?';
  const m = st.mode;
  const bit = (mask: number, ch: string) => (m & mask ? ch : '-');
  const x = (exec: number, special: number, set: string, unset: string) => (m & special ? (m & exec ? set : unset) : m & exec ? 'x' : '-');
  return (
    type +
    bit(0o400, 'r') + bit(0o200, 'w') + x(0o100, 0o4000, 's', 'S') +
    bit(0o040, 'r') + bit(0o020, 'w') + x(0o010, 0o2000, 's', 'S') +
    bit(0o004, 'r') + bit(0o002, 'w') + x(0o001, 0o1000, 't', 'T')
  );
}

function humanSize(n: number): string {
  const units = ['K', 'M', 'G', 'T', 'P'];
  if (n < 1024) return String(n);
  let v = n;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  // GNU ls rounds up, with one decimal below 10 (4096 -> 4.0K, 2000 -> 2.0K, 15000 -> 15K).
  const tenths = Math.ceil(v * 10) / 10;
  return `${tenths < 10 ? tenths.toFixed(1) : String(Math.ceil(v))}${units[u]}`;
}

function timeString(ms: number, now: number): string {
  const d = new Date(ms);
  const recent = now - ms < 182.5 * 86_400_000 && ms - now < 3_600_000;
  const tail = recent ? `${pad(d.getHours())}:${pad(d.getMinutes())}` : ` ${d.getFullYear()}`;
  return `${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2)} ${tail}`;
}

/** ls's long format; symlink targets are not shown (a target may be a host path outside the workspace). */
function longLines(entries: LsEntry[], human: boolean): string[] {
  const now = Date.now();
  const rows = entries.map((e) => [modeString(e.kind, e.stat), String(e.stat.nlink), String(e.stat.uid), String(e.stat.gid), human ? humanSize(e.stat.size) : String(e.stat.size), timeString(e.stat.mtimeMs, now), e.name]);
  const widths = [0, 1, 2, 3, 4].map((i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  return rows.map((r) => `${r[0]} ${(r[1] as string).padStart(widths[1] as number)} ${(r[2] as string).padEnd(widths[2] as number)} ${(r[3] as string).padEnd(widths[3] as number)} ${(r[4] as string).padStart(widths[4] as number)} ${r[5]} ${r[6]}`);
}

function sortEntries(entries: LsEntry[], flags: Set<string>): LsEntry[] {
  const byName = (a: LsEntry, b: LsEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const cmp = flags.has('S') ? (a: LsEntry, b: LsEntry) => b.stat.size - a.stat.size || byName(a, b) : flags.has('t') ? (a: LsEntry, b: LsEntry) => b.stat.mtimeMs - a.stat.mtimeMs || byName(a, b) : byName;
  const sorted = [...entries].sort(cmp);
  return flags.has('r') ? sorted.reverse() : sorted;
}

/** Builds the output line by line until the byte cap; returns whether it was cut. */
class CappedText {
  private parts: string[] = [];
  private bytes = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  line(s: string): boolean {
    if (this.truncated) return false;
    const size = Buffer.byteLength(s) + 1;
    if (this.bytes + size > this.max) {
      this.truncated = true;
      return false;
    }
    this.parts.push(s);
    this.bytes += size;
    return true;
  }
  get text(): string {
    return this.parts.length === 0 ? '' : `${this.parts.join('\n')}\n`;
  }
}

const MAX_RECURSIVE_DEPTH = 32;

/** ls with -l -a -A -1 -h -R -t -S -r over sandbox-resolved operands (default "."); -a lists no . and .. (as -A). */
export async function runLs(ctx: ToolContext, argv: readonly string[]): Promise<CommandOutput> {
  const { flags, operands } = parseArgs('ls', argv, LS_FLAGS);
  const names = operands.length > 0 ? operands : ['.'];
  const resolved: ResolvedPath[] = [];
  for (const name of names) {
    const p = await ctx.resolve(name, { allowRoot: true });
    if (!p.stat) throw E.lsNotFound(p.rel);
    resolved.push(p);
  }
  const { searchMaxFiles, searchTimeoutMs, maxOutputBytes } = ctx.ws.limits;
  const out = new CappedText(maxOutputBytes);
  const long = flags.has('l');
  const show = (entries: LsEntry[]) => {
    for (const l of long ? longLines(entries, flags.has('h')) : entries.map((e) => e.name)) if (!out.line(l)) return;
  };
  const files = resolved.filter((p) => !p.stat?.isDirectory());
  const dirs = resolved.filter((p) => p.stat?.isDirectory());
  show(sortEntries(files.map((p) => ({ name: p.rel, parent: '', kind: p.stat?.isFile() ? 'file' : 'other', stat: p.stat as Stats })), flags));
  let walkTruncated = false;
  let count = files.length;
  const headers = resolved.length > 1 || flags.has('R');
  let first = files.length === 0;
  for (const p of dirs) {
    const found: LsEntry[] = [];
    const walk = await walkTree(p.ws, p, {
      maxDepth: flags.has('R') ? MAX_RECURSIVE_DEPTH : 1,
      stats: true,
      maxEntries: Math.max(1, searchMaxFiles - count),
      deadline: Date.now() + searchTimeoutMs,
      signal: ctx.signal,
      includeHidden: flags.has('a') || flags.has('A'),
      reportSkipped: true,
      onEntry: (e) => {
        if (e.stat) found.push({ name: e.name, parent: e.relFromStart.slice(0, Math.max(0, e.relFromStart.length - e.name.length - 1)), kind: e.kind, stat: e.stat });
      },
    });
    walkTruncated ||= walk.truncated;
    count += found.length;
    // Entries grouped by directory, each directory's section in breadth-first order (GNU ls is depth-first; the walk is not).
    const groups = new Map<string, LsEntry[]>([['', []]]);
    for (const e of found) {
      if (!groups.has(e.parent)) groups.set(e.parent, []);
      groups.get(e.parent)?.push(e);
      // A directory gets its section even when empty; the ones the walk never enters (.git) get none.
      const key = e.parent === '' ? e.name : `${e.parent}/${e.name}`;
      if (e.kind === 'directory' && flags.has('R') && !DEFAULT_SKIP_DIRS.has(e.name) && !groups.has(key)) groups.set(key, []);
    }
    for (const [parent, entries] of groups) {
      if (headers) {
        if (!first && !out.line('')) break;
        if (!out.line(`${parent === '' ? p.rel : joinRel(p.rel, parent)}:`)) break;
      }
      first = false;
      if (long && !out.line(`total ${Math.ceil(entries.reduce((s, e) => s + e.stat.blocks * 512, 0) / 1024)}`)) break;
      show(sortEntries(entries, flags));
    }
  }
  return { output: out.text, truncated: out.truncated || walkTruncated, pathResolved: resolved.length === 1 ? (resolved[0] as ResolvedPath).rel : null, entries: count };
}
