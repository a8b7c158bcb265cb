// `npm run bench:ab -- <refA> <refB>`: two builds of toolgate side by side on the same load, rounds
// interleaved, to tell whether a change helps on a noisy machine (two runs of `npm run bench` minutes
// apart differ by more than most changes). Each build serves its own copy of the workspace with the
// production settings of the bench. Workloads: BENCH_ONLY=read,write,edit (default edit); rounds and
// windows as in `npm run bench`. A ref `.` is the working tree (built with `npm run build`).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildToolgate } from './lib/build.js';
import { compareLoad, rpsRatio, type Subject } from './lib/compare.js';
import { makePool } from './lib/fixtures.js';
import { progress } from './lib/log.js';
import { options } from './lib/options.js';
import { startToolgate, useToolgateMain, type Server } from './lib/servers.js';
import { fmt, MiB } from './lib/stats.js';
import { editWorkload, readWorkload, writeReadFile, writeWorkload, type Targets } from './lib/workloads.js';

const refs = process.argv.slice(2);
if (refs.length !== 2) throw new Error('usage: npm run bench:ab -- <refA> <refB>   (a ref "." is the working tree)');
const wanted = process.env.BENCH_ONLY ? [...options.sections] : ['edit'];
const C = options.concurrency;

const token = randomBytes(32).toString('hex');
const tokensFile = path.join(options.cacheDir, 'tokens-ab.json');
await fs.mkdir(options.cacheDir, { recursive: true });
await fs.writeFile(tokensFile, JSON.stringify([{ id: 'bench', sha256: createHash('sha256').update(token).digest('hex'), projects: ['*'], risks: ['read', 'write', 'destructive'] }]));
const auth = { authorization: `Bearer ${token}` };
const pool = makePool(8 * MiB, 4242);
const logDir = path.join(options.cacheDir, 'logs-ab');
await fs.mkdir(logDir, { recursive: true });

const servers: Server[] = [];
try {
  const sides: Array<{ name: string; t: Targets }> = [];
  for (const [i, ref] of refs.entries()) {
    const build = await buildToolgate(ref === '.' ? null : ref);
    useToolgateMain(build.main);
    const ws = path.join(options.cacheDir, `ws-ab-${i}`);
    await fs.rm(ws, { recursive: true, force: true });
    await fs.mkdir(ws, { recursive: true });
    await writeReadFile(ws, pool);
    const tg = await startToolgate(`toolgate ${build.commit}`, { root: ws, tokensFile, instanceId: `ab-${i}`, logLevel: options.toolgateLogLevel, extra: options.toolgateExtraEnv }, path.join(logDir, `toolgate-${i}.log`));
    servers.push(tg);
    sides.push({ name: `${build.commit}${build.dirty ? '+dirty' : ''}`, t: { ws, auth, toolgate: tg, peer: null, bareConst: null, bareFile: null, bareFileSync: null, guardedRead: null } });
  }
  const make = async (w: string, t: Targets): Promise<Subject[]> => {
    if (w === 'read') return readWorkload(t).filter((s) => s.key === 'toolgate');
    if (w === 'write') return (await writeWorkload(t, pool, 2 * C)).filter((s) => s.key === 'toolgate');
    if (w === 'edit') return (await editWorkload(t, pool, 2 * C)).filter((s) => s.key === 'toolgate');
    throw new Error(`bench:ab measures read, write and edit, not ${w}`);
  };
  const lines: string[] = [];
  for (const w of wanted) {
    const subjects: Subject[] = [];
    for (const [i, side] of sides.entries()) {
      const s = (await make(w, side.t))[0] as Subject;
      subjects.push({ ...s, key: `side${i}`, label: side.name });
    }
    for (const c of [1, C]) {
      const durationS = w === 'edit' && c > 1 ? options.durationS * 3 : options.durationS;
      const r = await compareLoad(`${w} A/B`, c, subjects, { durationS });
      const a = r.side0?.median;
      const b = r.side1?.median;
      lines.push(
        `${w} c=${c}: ${sides[0]?.name} ${fmt(a?.rps)} req/s p50 ${fmt(a?.p50)} ms, peak ${fmt(a?.peakRssMiB)} MiB | ${sides[1]?.name} ${fmt(b?.rps)} req/s p50 ${fmt(b?.p50)} ms, peak ${fmt(b?.peakRssMiB)} MiB | B/A ${fmt(rpsRatio(r, 'side1', 'side0'))}×`,
      );
      progress(lines[lines.length - 1] as string);
    }
  }
  process.stdout.write(`\n${lines.join('\n')}\n`);
} finally {
  for (const s of servers) await s.stop();
}
