// The figures of a run: bench/results/*.json (everything, every round) and the generated block of
// bench/README.md (medians, ratios, targets).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { BigResults } from './big-files.js';
import type { ColdResults } from './cold-start.js';
import type { Series } from './compare.js';
import type { Machine } from './machine.js';
import { BENCH_DIR } from './options.js';
import type { SearchResults } from './search.js';
import { fmt } from './stats.js';

export interface Target {
  id: string;
  what: string;
  /** The measured figure in words, e.g. "4120 req/s vs 1500 req/s". */
  measured: string;
  ratio: number | null;
  goal: string;
  /** null: not measured (skipped). */
  pass: boolean | null;
  note?: string;
}

export interface Results {
  meta: {
    date: string;
    commit: string;
    dirty: boolean;
    source: 'working tree' | 'commit snapshot';
    mode: 'full' | 'quick';
    durationS: number;
    settings: Record<string, unknown>;
    machine: Machine;
    /** 1-minute load average at the start and the end (other work on the machine skews absolute figures). */
    loadAvg: { start: number; end: number };
    toolgate: { tools: string[]; ops: Record<string, boolean>; logLevel: string; extraEnv: Record<string, string>; nodeArgs: string[] };
    peer: string | null;
    rg: string | null;
  };
  load: Record<string, Record<string, Record<string, Series>>>;
  rssUnderLoadMiB: { perOperation: Record<string, number>; max: number } | null;
  search: SearchResults | null;
  big: BigResults | null;
  cold: ColdResults | null;
  targets: Target[];
  skipped: { what: string; why: string }[];
  notes: string[];
}

export async function writeJson(file: string, results: Results): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(results, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 2)}\n`);
  await fs.rename(tmp, file);
}

const verdict = (t: Target) => (t.pass === null ? 'SKIP' : t.pass ? 'PASS' : 'MISS');

export function targetLines(targets: Target[]): string[] {
  return targets.map((t) => `${verdict(t).padEnd(4)}  ${t.what}: ${t.measured}${t.ratio !== null ? ` → ${fmt(t.ratio)}×` : ''} (goal ${t.goal})${t.note ? ` — ${t.note}` : ''}`);
}

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map((h) => (/^(req|p50|p99|peak|median|ratio|ms|extra|time|RSS|hits)/i.test(h) ? '---:' : '---'))), ...rows.map(line)].join('\n');
}

function notesOf(s: Series): string {
  const all = s.rounds.reduce((n, x) => n + x.ok + x.failed, 0);
  const parts: string[] = [];
  if (s.failedTotal > 0) parts.push(`${s.failedTotal} failed answers in all rounds`);
  if (s.flaggedTotal > 0) parts.push(`${s.flaggedTotal} of ${all} answers truncated`);
  return parts.join('; ');
}

const OPS: Record<string, string> = {
  read: 'read_file 4 KiB',
  write: 'write_file 4 KiB (durable)',
  edit: 'edit_file, one line of 1 MiB',
  search: 'search_files content, 200 MiB tree',
};

export function markdown(r: Results): string {
  const m = r.meta;
  const out: string[] = [];
  out.push(
    `Run of ${m.date} (${m.mode}), toolgate at commit \`${m.commit}\` (${m.source === 'commit snapshot' ? 'built from the commit alone, BENCH_REF' : `working tree${m.dirty ? ' with uncommitted changes in src/' : ''}`}), ${Math.round(m.durationS)} s in all. ` +
      `Load: ${String(m.settings.rounds)} interleaved rounds per comparison, each run ${String(m.settings.rampS)} s of uncounted ramp then ${String(m.settings.durationS)} s counted; ` +
      'figures are medians over rounds, ratios are medians of per-round ratios.',
  );
  out.push('');
  out.push(
    `Machine: ${m.machine.cpu}, ${m.machine.cores} cores, ${m.machine.ramGiB} GiB RAM, Node ${m.machine.node}, ${m.machine.kernel}, disk ${m.machine.disk}. ` +
      `Load average (1 min) ${fmt(m.loadAvg.start)} at the start, ${fmt(m.loadAvg.end)} at the end.`,
  );
  out.push('');
  out.push(
    `toolgate: ${m.toolgate.nodeArgs.length > 0 ? `\`node ${m.toolgate.nodeArgs.join(' ')} dist/main.js\` (BENCH_TOOLGATE_HEAP_MB; 256 MiB is the heap Node sets in the chart's 512Mi pod)` : '`node dist/main.js`'}, auth ${m.toolgate.ops.auth ? 'on (tokens file + bearer token)' : '**off**'}, audit ${m.toolgate.ops.audit ? 'on' : '**off**'}, metrics ${m.toolgate.ops.metrics ? 'on' : '**off**'}, ` +
      `rate limit 10^9/min, log level ${m.toolgate.logLevel}. Peer: ${m.peer ?? 'n/a'}. ripgrep: ${m.rg ?? 'not installed'}.`,
  );
  out.push('');
  out.push('### Targets');
  out.push('');
  out.push(
    table(
      ['result', 'target', 'measured', 'ratio', 'goal'],
      r.targets.map((t) => [`**${verdict(t)}**`, t.what, t.measured + (t.note ? ` (${t.note})` : ''), t.ratio !== null ? `${fmt(t.ratio)}×` : 'n/a', t.goal]),
    ),
  );
  out.push('');
  out.push('### Throughput and latency');
  out.push('');
  const rows: string[][] = [];
  for (const [op, byConc] of Object.entries(r.load)) {
    for (const [conc, bySubject] of Object.entries(byConc)) {
      for (const s of Object.values(bySubject)) {
        const x = s.median;
        rows.push([OPS[op] ?? op, conc.replace('c', ''), s.label, fmt(x.rps), fmt(x.p50), fmt(x.p99), fmt(x.peakRssMiB), notesOf(s)]);
      }
    }
  }
  out.push(table(['operation', 'concurrency', 'subject', 'req/s', 'p50 ms', 'p99 ms', 'peak RSS MiB', 'notes'], rows));
  if (r.rssUnderLoadMiB) {
    out.push('');
    out.push(
      `Peak RSS of toolgate under concurrency-${String(m.settings.concurrency)} load (median of per-round peaks): ` +
        Object.entries(r.rssUnderLoadMiB.perOperation)
          .map(([op, v]) => `${op} ${fmt(v)} MiB`)
          .join(', ') +
        '.',
    );
  }
  if (r.search) {
    const s = r.search;
    out.push('');
    out.push('### Content search');
    out.push('');
    out.push(`Query \`${s.query}\` (literal, ${s.expectedMatches} hits) over ${s.tree.files} files, ${Math.round(s.tree.bytes / 1024 / 1024)} MiB; whole-command wall time, page cache warm.`);
    out.push('');
    out.push(
      table(
        ['tool', 'median ms', 'hits'],
        Object.entries(s.latencyMs).map(([k, v]) => [k === 'toolgate' ? 'toolgate search_files (HTTP, c=1)' : k === 'rg' ? 'rg -n -F' : 'grep -rn -F', fmt(v.median), String(s.found[k] ?? 'n/a')]),
      ),
    );
  }
  if (r.big) {
    const b = r.big;
    out.push('');
    out.push('### Big files');
    out.push('');
    out.push(
      `1 GiB text file (${b.file.lines} lines). A fresh toolgate instance: RSS ${fmt(b.freshRssMiB)} MiB before any call, ${fmt(b.idleRssMiB)} MiB after one call of each kind; ` +
        `extra RSS = peak during the call minus RSS just before it (${b.rssMethod === 'VmHWM' ? 'kernel high-water mark VmHWM, reset through /proc/<pid>/clear_refs' : 'VmRSS sampled every 10 ms'}).`,
    );
    out.push('');
    const rowsB: string[][] = [
      ['read_file 4 KiB (whole)', fmt(b.read4kMs.median), '', '', ''],
      ['read_file lines 1–100 of 1 GiB', fmt(b.head100Ms.median), fmt(b.head100ExtraRssMiB.median), '', `${fmt(b.head100Ratio)}× the 4 KiB read`],
      ['read_file last 100 lines of 1 GiB', fmt(b.tail100Ms.median), fmt(b.tail100ExtraRssMiB.median), fmt(b.tail100PeakRssMiB.median), 'scans the file for line breaks'],
    ];
    if (b.peer) {
      rowsB.push(['peer read_text_file head 100 of 1 GiB', fmt(b.peer.head100Ms.median), '', '', '']);
      rowsB.push(['peer read_text_file tail 100 of 1 GiB', fmt(b.peer.tail100Ms.median), '', '', 'reads backwards from the end']);
    }
    rowsB.push(['edit_file one line of 50 MiB', fmt(b.edit50Ms.median), fmt(b.edit50ExtraRssMiB.median), fmt(b.edit50PeakRssMiB.median), `${fmt(b.edit50Ratio)}× the plain durable write`]);
    rowsB.push(['plain durable write of the same 50 MiB (in-bench)', fmt(b.plainWrite50Ms.median), '', '', 'temp + write + fsync + rename + dir fsync']);
    if (b.guardedEdit50Ms) {
      rowsB.push(['the edit\'s own work alone (in-bench)', fmt(b.guardedEdit50Ms.median), '', '', `${fmt(b.guardedEdit50Ratio)}× the plain write: read + sha256 of old and new + backup copy + the durable write`]);
    }
    rowsB.push([
      'write_file 4.8 MiB, every line changed',
      fmt(b.overwrite5.ms.median),
      fmt(b.overwrite5.extraRssMiB.median),
      fmt(b.overwrite5.peakRssMiB.median),
      `${fmt(b.overwrite5.ratio)}× a plain durable write of the same bytes; +${b.overwrite5.linesAdded}/−${b.overwrite5.linesRemoved} lines, status ${b.overwrite5.status}${b.overwrite5.diffTruncated ? ', diff cut' : ''}`,
    ]);
    rowsB.push(['plain durable write of the same bytes (in-bench)', fmt(b.overwrite5.plainWriteMs.median), '', '', '']);
    out.push(table(['operation', 'median ms', 'extra RSS MiB', 'peak RSS MiB', 'notes'], rowsB));
  }
  if (r.cold) {
    const c = r.cold;
    out.push('');
    out.push('### Cold start');
    out.push('');
    out.push(
      table(
        ['server', 'median ms to first 200 from /readyz', 'RSS when ready MiB'],
        [
          ['toolgate (production settings, empty workspace)', fmt(c.toolgateMs.median), fmt(c.toolgateIdleRssMiB)],
          ['bare Fastify', fmt(c.bareMs.median), fmt(c.bareIdleRssMiB)],
        ],
      ),
    );
  }
  if (r.skipped.length > 0 || r.notes.length > 0) {
    out.push('');
    out.push('### Notes of this run');
    out.push('');
    for (const s of r.skipped) out.push(`- Skipped: ${s.what} — ${s.why}`);
    for (const n of r.notes) out.push(`- ${n}`);
  }
  return out.join('\n');
}

const START = '<!-- bench:generated:start -->';
const END = '<!-- bench:generated:end -->';

/** Replaces the generated block of bench/README.md, leaving the hand-written text around it. */
export async function writeReadme(r: Results): Promise<string> {
  const file = path.join(BENCH_DIR, 'README.md');
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    text = `# toolgate benchmarks\n\n${START}\n${END}\n`;
  }
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  const block = `${START}\n<!-- Written by \`npm run bench\`; edit the text outside these markers only. -->\n\n${markdown(r)}\n\n${END}`;
  text = a === -1 || b === -1 ? `${text.trimEnd()}\n\n${block}\n` : `${text.slice(0, a)}${block}${text.slice(b + END.length)}`;
  await fs.writeFile(file, text);
  return file;
}
