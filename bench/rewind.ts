// `npx tsx bench/rewind.ts`: the time of rewinding one agent turn of N changed files (default 100), and of its
// dry run, through the real app (in process, app.inject), on a workspace in BENCH_CACHE_DIR's file system.
// Each round rewinds the newest checkpoint, so the project flips between before and after the turn; the median
// and the slowest of the rounds are printed. Benchmarks measure; tests assert (bench/README.md).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const FILES = Number(process.env.BENCH_REWIND_FILES ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const BYTES = 4096;
const base = await fs.mkdtemp(path.join(process.env.BENCH_CACHE_DIR ?? os.tmpdir(), 'toolgate-rewind-bench-'));
const root = path.join(base, 'ws');
await fs.mkdir(root);
const line = (i: number, tag: string) => `${tag} line of file ${i}: ${'x'.repeat(60)}\n`;
for (let i = 0; i < FILES; i++) await fs.writeFile(path.join(root, `f${i}.txt`), line(i, 'before').repeat(Math.ceil(BYTES / 80)));
const app = await buildApp(loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_LOG_LEVEL: 'warn' }));
const call = async (tool: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const res = await app.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload, headers });
  if (res.statusCode !== 200) throw new Error(`${tool}: ${res.body}`);
  return JSON.parse(res.body) as { data: { version?: { sha256: string } } };
};
try {
  for (let i = 0; i < FILES; i++) {
    const rel = `f${i}.txt`;
    const sha = (await call('file_info', { path: rel })).data.version?.sha256;
    await call('write_file', { path: rel, content: line(i, 'after').repeat(Math.ceil(BYTES / 80)), expected_sha256: sha }, { 'toolgate-turn': 'bench-turn' });
  }
  const time = async (payload: Record<string, unknown>) => {
    const started = performance.now();
    await call('rewind', payload);
    return performance.now() - started;
  };
  const dry: number[] = [];
  const real: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    dry.push(await time({ checkpoint: 'latest', dry_run: true }));
    real.push(await time({ checkpoint: 'latest' }));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const fmt = (xs: number[]) => `median ${median(xs).toFixed(1)} ms, slowest ${Math.max(...xs).toFixed(1)} ms`;
  console.log(`rewind of a turn of ${FILES} changed files (${BYTES} B each), ${ROUNDS} rounds, load ${os.loadavg()[0]?.toFixed(2)}:`);
  console.log(`  dry run: ${fmt(dry)}`);
  console.log(`  rewind:  ${fmt(real)}`);
} finally {
  await app.close();
  await fs.rm(base, { recursive: true, force: true });
}
