// `npm run bench:ab -- <refA> <refB>`: two builds of toolgate side by side on the same load, rounds
// interleaved, to tell whether a change helps on a noisy machine (two runs of `npm run bench` minutes
// apart differ by more than most changes). Each build serves its own copy of the workspace with the
// production settings of the bench. Workloads: BENCH_ONLY=read,write,edit,cold (default edit); rounds and
// windows as in `npm run bench`. A ref `.` is the working tree (built with `npm run build`).
//
// With read, write or cold measured, it also prints PASS/MISS for B against A as the baseline on the hot
// path's targets (TARGETS below; cold: B's start against the bare Fastify route's). `npm run bench:ab -- --guard`
// is the guard against the next slide: the baseline commit GUARD_BASELINE against the working tree, read,
// write and cold, exit 1 on a MISS (bench/README.md, "Guard").
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildToolgate } from './lib/build.js';
import { COLD_START_MAX_RATIO, coldSection } from './lib/cold-start.js';
import { compareLoad, rpsRatio, type Subject } from './lib/compare.js';
import { makePool } from './lib/fixtures.js';
import { progress } from './lib/log.js';
import { options } from './lib/options.js';
import { procCpuMs } from './lib/proc-cpu.js';
import { startToolgate, useToolgateMain, type Server } from './lib/servers.js';
import { fmt, MiB } from './lib/stats.js';
import { editWorkload, readWorkload, writeReadFile, writeWorkload, type Targets } from './lib/workloads.js';

/** The hot path's baseline: the build before the new doors (issue 22). */
const GUARD_BASELINE = '0f0025a';
/** Peak RSS under the c=32 loads may exceed the baseline's by this much (issue 37: at most +2 MiB; issue 22 allowed 5). */
const RSS_SLACK_MIB = 2;

const C = options.concurrency;

interface Target {
  workload: 'read' | 'write' | 'cold';
  /** The load's concurrency (none for a start). */
  concurrency?: number;
  /** B's server CPU per call at most this many times A's (the least of each side's rounds); calls per second are shown beside. */
  maxCpuRatio?: number;
  rss?: true;
  /** A start of B (spawn to the first 200 from /readyz) at most this many times the bare Fastify route's. */
  maxToBare?: number;
}
const TARGETS: Target[] = [
  { workload: 'read', concurrency: 1, maxCpuRatio: 1.0 },
  { workload: 'read', concurrency: C, maxCpuRatio: 1.0 },
  { workload: 'write', concurrency: 1, maxCpuRatio: 1.0 },
  { workload: 'write', concurrency: C, maxCpuRatio: 1.0 },
  { workload: 'read', concurrency: C, rss: true },
  { workload: 'write', concurrency: C, rss: true },
  { workload: 'cold', maxToBare: COLD_START_MAX_RATIO },
];

const args = process.argv.slice(2);
const guard = args[0] === '--guard';
const refs = guard ? [GUARD_BASELINE, args[1] ?? '.'] : args;
if ((guard && args.length > 2) || (!guard && refs.length !== 2)) {
  throw new Error('usage: npm run bench:ab -- <refA> <refB>   (a ref "." is the working tree)\n       npm run bench:ab -- --guard [refB]   (baseline ' + GUARD_BASELINE + ', refB default ".")');
}
const wanted = process.env.BENCH_ONLY ? [...options.sections] : guard ? ['read', 'write', 'cold'] : ['edit'];

const token = randomBytes(32).toString('hex');
const tokensFile = path.join(options.cacheDir, 'tokens-ab.json');
await fs.mkdir(options.cacheDir, { recursive: true });
await fs.writeFile(tokensFile, JSON.stringify([{ id: 'bench', sha256: createHash('sha256').update(token).digest('hex'), projects: ['*'], risks: ['read', 'write', 'destructive'] }]));
// BENCH_TURN=<id>: every call names this agent turn (Toolgate-Turn), so its changes are recorded under it; a build without turns ignores the header.
const auth: Record<string, string> = { authorization: `Bearer ${token}`, ...(process.env.BENCH_TURN && { 'toolgate-turn': process.env.BENCH_TURN }) };
const pool = makePool(8 * MiB, 4242);
const logDir = path.join(options.cacheDir, 'logs-ab');
await fs.mkdir(logDir, { recursive: true });

const servers: Server[] = [];
try {
  const sides: Array<{ name: string; main: string; t: Targets }> = [];
  for (const [i, ref] of refs.entries()) {
    const build = await buildToolgate(ref === '.' ? null : ref);
    useToolgateMain(build.main);
    const ws = path.join(options.cacheDir, `ws-ab-${i}`);
    await fs.rm(ws, { recursive: true, force: true });
    await fs.mkdir(ws, { recursive: true });
    await writeReadFile(ws, pool);
    const tg = await startToolgate(`toolgate ${build.commit}`, { root: ws, tokensFile, instanceId: `ab-${i}`, logLevel: options.toolgateLogLevel, extra: options.toolgateExtraEnv }, path.join(logDir, `toolgate-${i}.log`));
    servers.push(tg);
    sides.push({ name: `${build.commit}${build.dirty ? '+dirty' : ''}`, main: build.main, t: { ws, auth, toolgate: tg, peer: null, bareConst: null, bareFile: null, bareFileSync: null, guardedRead: null } });
  }
  const make = async (w: string, t: Targets): Promise<Subject[]> => {
    if (w === 'read') return readWorkload(t).filter((s) => s.key === 'toolgate');
    if (w === 'write') return (await writeWorkload(t, pool, 2 * C)).filter((s) => s.key === 'toolgate');
    if (w === 'edit') return (await editWorkload(t, pool, 2 * C)).filter((s) => s.key === 'toolgate');
    throw new Error(`bench:ab measures read, write, edit and cold, not ${w}`);
  };
  const lines: string[] = [];
  /** What each measured load gave, for the targets: B/A and the two peak RSS medians. */
  const got = new Map<string, Measured>();
  for (const w of wanted) {
    if (w === 'cold') {
      // Each build's starts against the bare route's, interleaved (bench/lib/cold-start.ts); the target is B's.
      for (const [i, side] of sides.entries()) {
        useToolgateMain(side.main);
        const c = await coldSection({ tokensFile, logLevel: options.toolgateLogLevel, extra: options.toolgateExtraEnv }, options.cacheDir, logDir);
        if (i === 1) got.set('cold', { ratio: c.ratio, rssA: Number.NaN, rssB: c.toolgateIdleRssMiB, cpuA: Number.NaN, cpuB: Number.NaN });
        lines.push(`cold: ${side.name} ${fmt(c.toolgateMs.median)} ms vs bare ${fmt(c.bareMs.median)} ms, ${fmt(c.ratio)}× bare, RSS when ready ${fmt(c.toolgateIdleRssMiB)} MiB`);
        progress(lines[lines.length - 1] as string);
      }
      continue;
    }
    // Server CPU per call of each run (user + system, every thread, /proc): far steadier between rounds than calls
    // per second. The ramp's calls are not counted, so the figure is a little high, alike for both sides.
    const cpu: number[][] = sides.map(() => []);
    const subjects: Subject[] = [];
    for (const [i, side] of sides.entries()) {
      const s = (await make(w, side.t))[0] as Subject;
      const pid = side.t.toolgate.pid;
      subjects.push({
        ...s,
        key: `side${i}`,
        label: side.name,
        async run(c, seconds, rampS) {
          const before = await procCpuMs(`/proc/${pid}/stat`);
          const res = await s.run(c, seconds, rampS);
          const after = await procCpuMs(`/proc/${pid}/stat`);
          cpu[i]?.push(((after.user + after.system - before.user - before.system) * 1000) / Math.max(1, res.ok + res.failed));
          return res;
        },
      });
    }
    for (const c of [1, C]) {
      const durationS = w === 'edit' && c > 1 ? options.durationS * 3 : options.durationS;
      for (const k of cpu) k.length = 0;
      const r = await compareLoad(`${w} A/B`, c, subjects, { durationS });
      const a = r.side0?.median;
      const b = r.side1?.median;
      // The least CPU a round took: other load on the machine only ever adds to it.
      const [cpuA, cpuB] = cpu.map((k) => (k.length > 0 ? Math.min(...k) : Number.NaN)) as [number, number];
      got.set(`${w} c=${c}`, { ratio: rpsRatio(r, 'side1', 'side0'), rssA: a?.peakRssMiB ?? Number.NaN, rssB: b?.peakRssMiB ?? Number.NaN, cpuA, cpuB });
      lines.push(
        `${w} c=${c}: ${sides[0]?.name} ${fmt(a?.rps)} req/s p50 ${fmt(a?.p50)} ms, ${fmt(cpuA)} µs CPU/call, peak ${fmt(a?.peakRssMiB)} MiB | ${sides[1]?.name} ${fmt(b?.rps)} req/s p50 ${fmt(b?.p50)} ms, ${fmt(cpuB)} µs CPU/call, peak ${fmt(b?.peakRssMiB)} MiB | B/A ${fmt(rpsRatio(r, 'side1', 'side0'))}× calls/s, ${fmt(cpuB / cpuA)}× CPU/call`,
      );
      progress(lines[lines.length - 1] as string);
    }
  }
  process.stdout.write(`\n${lines.join('\n')}\n`);
  const verdicts = judge(got, sides[0]?.name ?? refs[0] ?? '', sides[1]?.name ?? refs[1] ?? '');
  if (verdicts.length > 0) process.stdout.write(`\n${verdicts.join('\n')}\n`);
  if (guard && verdicts.some((v) => v.startsWith('MISS'))) process.exitCode = 1;
} finally {
  for (const s of servers) await s.stop();
}

/** PASS/MISS of B against A for each target whose load was measured (unmeasured ones are named, not judged). */
interface Measured {
  /** B/A calls per second (paired ratio of the rounds); for cold, B's start against the bare route's. */
  ratio: number;
  rssA: number;
  rssB: number;
  /** Server CPU per call, µs, the least of each side's rounds. */
  cpuA: number;
  cpuB: number;
}

function judge(got: Map<string, Measured>, nameA: string, nameB: string): string[] {
  const out: string[] = [];
  const skipped: string[] = [];
  for (const t of TARGETS) {
    const key = t.workload === 'cold' ? 'cold' : `${t.workload} c=${t.concurrency}`;
    const m = got.get(key);
    const what =
      t.maxToBare !== undefined
        ? `cold start <= ${fmt(t.maxToBare)}x the bare Fastify route`
        : t.rss
          ? `peak RSS ${key} <= baseline + ${RSS_SLACK_MIB} MiB`
          : `${t.workload}_file 4 KiB c=${t.concurrency} server CPU per call <= ${fmt(t.maxCpuRatio)}x baseline`;
    if (!m) {
      skipped.push(what);
      continue;
    }
    const pass = t.maxToBare !== undefined ? m.ratio <= t.maxToBare : t.rss ? m.rssB <= m.rssA + RSS_SLACK_MIB : m.cpuB <= m.cpuA * (t.maxCpuRatio as number);
    const figure =
      t.maxToBare !== undefined
        ? `${fmt(m.ratio)}x`
        : t.rss
          ? `${fmt(m.rssB)} MiB vs ${fmt(m.rssA)} MiB (${m.rssB - m.rssA >= 0 ? '+' : ''}${fmt(m.rssB - m.rssA)} MiB)`
          : `${fmt(m.cpuB)} vs ${fmt(m.cpuA)} µs, ${fmt(m.cpuB / m.cpuA)}x (calls per second ${fmt(m.ratio)}x)`;
    out.push(`${pass ? 'PASS' : 'MISS'}  ${what}: ${figure}`);
  }
  if (out.length > 0) out.unshift(`targets of ${nameB} against the baseline ${nameA}:`);
  if (out.length > 0 && skipped.length > 0) out.push(`(not measured: ${skipped.join('; ')}; BENCH_ONLY=read,write,cold measures them)`);
  return out;
}
