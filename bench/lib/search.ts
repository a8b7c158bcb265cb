// Content search against ripgrep and grep on the same tree and query: whole commands timed from
// spawn to exit, toolgate timed from request to answer, interleaved, median of rounds.
import { spawn } from 'node:child_process';
import { compareLoad, type Series } from './compare.js';
import type { TreeInfo } from './fixtures.js';
import { envelopeOf, post } from './http-client.js';
import { progress } from './log.js';
import { options } from './options.js';
import { fmt, median, pairedRatio } from './stats.js';
import { searchBody, searchSubject, type Targets } from './workloads.js';

export interface CommandRun {
  ms: number;
  lines: number;
  code: number | null;
}

export function timeCommand(cmd: string, args: string[]): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let lines = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ ms: performance.now() - t0, lines, code }));
  });
}

export interface SearchResults {
  query: string;
  tree: { files: number; bytes: number };
  expectedMatches: number;
  found: Record<string, number | null>;
  toolgateTruncated: boolean | null;
  latencyMs: Record<string, { median: number; rounds: number[] }>;
  ratioToRg: number | null;
  ratioToGrep: number;
  load: Record<string, Record<string, Series>>;
}

/** The number of content hits in a search_files answer, whatever the exact shape of `data`. */
function hitsOf(data: Record<string, unknown>, stats: Record<string, number>): number | null {
  if (typeof stats.matches === 'number') return stats.matches;
  for (const key of ['matches', 'content_matches', 'results', 'hits']) {
    const v = data[key];
    if (Array.isArray(v)) return v.filter((m) => m && typeof m === 'object' && 'line' in m).length || v.length;
  }
  return null;
}

export async function searchSection(t: Targets, tree: TreeInfo, rg: string | null): Promise<SearchResults> {
  const body = searchBody(tree.needle);
  const rgArgs = ['-n', '--no-config', '-F', tree.needle, tree.dir];
  const grepArgs = ['-rn', '-F', tree.needle, tree.dir];
  const tgOnce = async () => {
    const a = await post(t.toolgate.port, '/v1/tools/search_files', body, t.auth);
    const env = envelopeOf(a, 'search_files');
    return { ms: a.ms, hits: hitsOf(env.data, env.stats), truncated: env.data.truncated === true };
  };
  // Probe (also warms the page cache for everyone): all must find the same lines.
  const probe = await tgOnce();
  const found: Record<string, number | null> = { toolgate: probe.hits, grep: (await timeCommand('grep', grepArgs)).lines };
  if (rg) found.rg = (await timeCommand(rg, rgArgs)).lines;
  progress(`  search probe: toolgate ${String(probe.hits)} hits in ${fmt(probe.ms)} ms${probe.truncated ? ' (TRUNCATED)' : ''}, rg ${String(found.rg ?? 'n/a')}, grep ${String(found.grep)} (expected ${tree.needleFiles})`);

  const runners: [string, () => Promise<number>][] = [
    ['toolgate', async () => (await tgOnce()).ms],
    ...(rg ? ([['rg', async () => (await timeCommand(rg, rgArgs)).ms]] as [string, () => Promise<number>][]) : []),
    ['grep', async () => (await timeCommand('grep', grepArgs)).ms],
  ];
  const rounds: Record<string, number[]> = Object.fromEntries(runners.map(([k]) => [k, []]));
  for (let r = 0; r < options.searchRounds; r++) {
    const order = r % 2 === 0 ? runners : [...runners].reverse();
    for (const [k, fn] of order) (rounds[k] as number[]).push(await fn());
    progress(`  search vs rg/grep round ${r + 1}/${options.searchRounds}: ${runners.map(([k]) => `${k} ${fmt((rounds[k] as number[])[r])} ms`).join(' | ')}`);
  }
  const latencyMs = Object.fromEntries(Object.entries(rounds).map(([k, v]) => [k, { median: median(v), rounds: v }]));

  // Throughput under load: one search per connection per round at c=1 (three) and c=N (one each).
  const load: Record<string, Record<string, Series>> = {};
  const searchRounds = Math.max(1, Math.min(options.rounds, options.quick ? 1 : 3));
  load.c1 = await compareLoad('search_files', 1, [searchSubject(t, tree.needle, 3)], { rounds: searchRounds });
  load[`c${options.concurrency}`] = await compareLoad('search_files', options.concurrency, [searchSubject(t, tree.needle, 1)], { rounds: searchRounds });

  return {
    query: tree.needle,
    tree: { files: tree.files, bytes: tree.bytes },
    expectedMatches: tree.needleFiles,
    found,
    toolgateTruncated: probe.truncated,
    latencyMs,
    ratioToRg: rg ? pairedRatio(rounds.toolgate as number[], rounds.rg as number[]) : null,
    ratioToGrep: pairedRatio(rounds.toolgate as number[], rounds.grep as number[]),
    load,
  };
}
