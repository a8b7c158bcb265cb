// Interleaved comparisons: every subject runs once per round, the order reversing every other round
// (A,B,B,A,…), and each figure is the median over rounds. Peak RSS of each subject's process is
// taken per run.
import type { LoadResult } from './http-load.js';
import { progress, sleep } from './log.js';
import { options } from './options.js';
import { watchPeak } from './rss.js';
import { fmt, median, MiB, pairedRatio } from './stats.js';

export interface Subject {
  key: string;
  label: string;
  /** Process whose peak RSS is recorded; null when the subject runs inside the bench itself. */
  pid: number | null;
  /** `seconds` of counted load after `rampS` seconds of uncounted load on the same connections. */
  run(concurrency: number, seconds: number, rampS: number): Promise<LoadResult>;
}

export interface RunFigures {
  rps: number;
  p50: number;
  p99: number;
  peakRssMiB: number;
  ok: number;
  failed: number;
  flagged: number;
}

export interface Series {
  label: string;
  median: RunFigures;
  rounds: RunFigures[];
  /** Failed answers and flagged (e.g. truncated) answers over all rounds. */
  failedTotal: number;
  flaggedTotal: number;
  firstFailure: string | null;
}

/** Time for in-flight requests of a cut-off run to finish before the next subject starts. */
const SETTLE_MS = 250;

export async function compareLoad(title: string, concurrency: number, subjects: Subject[], opts: { rounds?: number; durationS?: number; rampS?: number } = {}): Promise<Record<string, Series>> {
  const rounds = opts.rounds ?? options.rounds;
  const durationS = opts.durationS ?? options.durationS;
  const rampS = opts.rampS ?? options.rampS;
  const out: Record<string, Series> = {};
  for (const s of subjects) out[s.key] = { label: s.label, median: undefined as unknown as RunFigures, rounds: [], failedTotal: 0, flaggedTotal: 0, firstFailure: null };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? subjects : [...subjects].reverse();
    const line: string[] = [];
    for (const s of order) {
      const watch = s.pid === null ? null : watchPeak(s.pid);
      const res = await s.run(concurrency, durationS, rampS);
      const peak = watch ? watch.stop() : Number.NaN;
      const series = out[s.key] as Series;
      series.rounds.push({ rps: res.rps, p50: res.p50, p99: res.p99, peakRssMiB: peak / MiB, ok: res.ok, failed: res.failed, flagged: res.flagged });
      if (res.firstFailure && !series.firstFailure) series.firstFailure = res.firstFailure;
      // Requests cut off by the end of an HTTP run are still being served: let them finish (a slow
      // operation at high concurrency takes up to its p99) before the next run reads file states.
      const settle = Math.max(SETTLE_MS, Math.min(10_000, 2 * (Number.isFinite(res.p99) ? res.p99 : 0)));
      line.push(`${s.key} ${fmt(res.rps)}/s p50 ${fmt(res.p50)} ms${res.failed > 0 ? ` (${res.failed} failed)` : ''}${res.flagged > 0 ? ` (${res.flagged} flagged)` : ''}`);
      await sleep(settle);
    }
    progress(`  ${title} c=${concurrency} round ${r + 1}/${rounds}: ${line.join(' | ')}`);
  }
  for (const s of subjects) {
    const series = out[s.key] as Series;
    const pick = (k: keyof RunFigures) => median(series.rounds.map((x) => x[k]));
    series.failedTotal = series.rounds.reduce((n, x) => n + x.failed, 0);
    series.flaggedTotal = series.rounds.reduce((n, x) => n + x.flagged, 0);
    series.median = { rps: pick('rps'), p50: pick('p50'), p99: pick('p99'), peakRssMiB: pick('peakRssMiB'), ok: pick('ok'), failed: pick('failed'), flagged: pick('flagged') };
    if (series.firstFailure) progress(`  ! ${title} c=${concurrency} ${s.key}: failures, first: ${series.firstFailure}`);
  }
  return out;
}

/** Paired throughput ratio a/b over the rounds of one comparison. */
export function rpsRatio(series: Record<string, Series>, a: string, b: string): number {
  const x = series[a];
  const y = series[b];
  if (!x || !y) return Number.NaN;
  return pairedRatio(
    x.rounds.map((f) => f.rps),
    y.rounds.map((f) => f.rps),
  );
}
