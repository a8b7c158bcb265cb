// Knobs of `npm run bench`, all from the environment, so a smoke run and the full run share one code path.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_DIR = path.resolve(BENCH_DIR, '..');

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}=${JSON.stringify(raw)}: must be a non-negative number`);
  return n;
}

const quick = process.env.BENCH_QUICK === '1' || process.env.BENCH_QUICK === 'true';

export const SECTIONS = ['read', 'write', 'edit', 'search', 'big', 'cold'] as const;
export type Section = (typeof SECTIONS)[number];

function sections(): Set<Section> {
  const raw = process.env.BENCH_ONLY;
  if (!raw) return new Set(SECTIONS);
  const wanted = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const s of wanted) if (!(SECTIONS as readonly string[]).includes(s)) throw new Error(`BENCH_ONLY: unknown section '${s}' (known: ${SECTIONS.join(', ')})`);
  return new Set(wanted as Section[]);
}

export const options = {
  quick,
  /** Interleaved rounds of every load comparison (throughput, p50/p99). */
  rounds: num('BENCH_ROUNDS', quick ? 2 : 5),
  /** Seconds of counted load per subject per round. */
  durationS: num('BENCH_DURATION_S', quick ? 1 : 2),
  /** Seconds of uncounted load before each counted window (connections fill up, slow first answers, JIT). */
  rampS: num('BENCH_RAMP_S', 1),
  /** Request pairs per round of the sequential latency comparisons (big-file reads). */
  pairs: num('BENCH_PAIRS', quick ? 5 : 20),
  /** Rounds of the big-file edits/overwrites and of search-vs-rg. */
  bigRounds: num('BENCH_BIG_ROUNDS', quick ? 2 : 5),
  searchRounds: num('BENCH_SEARCH_ROUNDS', quick ? 2 : 5),
  /** Start-up rounds (each starts toolgate and the bare server once). */
  coldRounds: num('BENCH_COLD_ROUNDS', quick ? 3 : 10),
  /** High concurrency level (the low one is always 1). */
  concurrency: num('BENCH_CONCURRENCY', 32),
  /** Where generated data lives (reused between runs). Outside the repository, so ripgrep's .gitignore handling cannot skip it. */
  cacheDir: path.resolve(process.env.BENCH_CACHE_DIR ?? path.join(os.tmpdir(), 'toolgate-bench')),
  sections: sections(),
  skipBuild: process.env.BENCH_SKIP_BUILD === '1',
  /** Measure this commit (built in the cache directory) instead of the working tree. */
  ref: process.env.BENCH_REF || null,
  /** Start the load instance of toolgate with --cpu-prof (profiles land in <cache>/prof). */
  cpuProf: process.env.BENCH_CPU_PROF === '1',
  /**
   * V8's old-generation limit for toolgate (`--max-old-space-size`), as it gets it in production: in the chart's pod
   * (memory limit 512Mi) Node sizes the heap from the cgroup limit, 256 MiB (`heap_size_limit` 259 MiB in a 512m
   * container). Left to the host's 24 GiB, Node would size 4 GiB and let the old generation grow 4× between
   * collections. 0 = the host's default.
   */
  toolgateHeapMiB: num('BENCH_TOOLGATE_HEAP_MB', 256),
  /** toolgate's log level under load: production default `info` unless overridden. */
  toolgateLogLevel: process.env.BENCH_TOOLGATE_LOG_LEVEL ?? 'info',
  /** Extra TOOLGATE_* settings for experiments (`K=V,K=V`), e.g. TOOLGATE_AUDIT_STDOUT=false; recorded in the results. */
  toolgateExtraEnv: Object.fromEntries(
    (process.env.BENCH_TOOLGATE_ENV ?? '')
      .split(',')
      .map((kv) => kv.trim())
      .filter(Boolean)
      .map((kv) => {
        const i = kv.indexOf('=');
        if (i <= 0 || !(kv.startsWith('TOOLGATE_') || kv.startsWith('UV_THREADPOOL_SIZE=') || kv.startsWith('MALLOC_ARENA_MAX='))) throw new Error(`BENCH_TOOLGATE_ENV: '${kv}' is not TOOLGATE_NAME=value , UV_THREADPOOL_SIZE=n or MALLOC_ARENA_MAX=n`);
        return [kv.slice(0, i), kv.slice(i + 1)];
      }),
  ) as Record<string, string>,
  /** Where the figures go: quick runs do not overwrite the committed ones. */
  resultsFile: path.join(BENCH_DIR, 'results', quick ? 'quick.json' : 'latest.json'),
  writeReadme: process.env.BENCH_WRITE_README !== undefined ? process.env.BENCH_WRITE_README === '1' : !quick,
};

export type Options = typeof options;
