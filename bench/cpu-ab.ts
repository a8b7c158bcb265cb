// CPU time of the server per call (user + system, all its threads, from /proc/<pid>/stat), two builds
// interleaved: less sensitive to other load on the machine than calls per second. The main thread's user
// and system time are shown apart (its /proc/<pid>/task/<pid>/stat): system time is what the file-system
// calls cost, and it moves far less between rounds than user time does.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildToolgate } from './lib/build.js';
import { makePool } from './lib/fixtures.js';
import { options } from './lib/options.js';
import { procCpuMs } from './lib/proc-cpu.js';
import { startToolgate, useToolgateMain, type Server } from './lib/servers.js';
import { MiB } from './lib/stats.js';
import { readWorkload, writeReadFile, writeWorkload, type Targets } from './lib/workloads.js';

const refs = process.argv.slice(2);
const rounds = Number(process.env.ROUNDS ?? 3);
const C = options.concurrency;
const token = randomBytes(32).toString('hex');
const tokensFile = path.join(options.cacheDir, 'tokens-cpu.json');
await fs.writeFile(tokensFile, JSON.stringify([{ id: 'bench', sha256: createHash('sha256').update(token).digest('hex'), projects: ['*'], risks: ['read', 'write', 'destructive'] }]));
const auth = { authorization: `Bearer ${token}` };
const pool = makePool(8 * MiB, 4242);
interface Cpu {
  /** Every thread, user + system, ms. */
  all: number;
  mainUser: number;
  mainSystem: number;
}
async function cpuMs(pid: number): Promise<Cpu> {
  const all = await procCpuMs(`/proc/${pid}/stat`);
  const main = await procCpuMs(`/proc/${pid}/task/${pid}/stat`);
  return { all: all.user + all.system, mainUser: main.user, mainSystem: main.system };
}
const servers: Server[] = [];
const sides: { name: string; t: Targets }[] = [];
for (const [i, ref] of refs.entries()) {
  const b = await buildToolgate(ref === '.' ? null : ref);
  useToolgateMain(b.main);
  const ws = path.join(options.cacheDir, `ws-cpu-${i}`);
  await fs.rm(ws, { recursive: true, force: true });
  await fs.mkdir(ws, { recursive: true });
  await writeReadFile(ws, pool);
  const tg = await startToolgate(`tg ${b.commit}`, { root: ws, tokensFile, instanceId: `cpu-${i}`, logLevel: 'info' }, path.join(options.cacheDir, 'logs-cpu', `${i}.log`));
  servers.push(tg);
  sides.push({ name: b.commit + (b.dirty ? '+dirty' : ''), t: { ws, auth, toolgate: tg, peer: null, bareConst: null, bareFile: null, bareFileSync: null, guardedRead: null } });
}
try {
  for (const w of (process.env.WORK ?? 'read,write').split(',')) {
    const subj = [];
    for (const s of sides) subj.push(w === 'read' ? readWorkload(s.t)[0] : (await writeWorkload(s.t, pool, 2 * C))[0]);
    for (const c of [1, C]) {
      const per: Cpu[][] = sides.map(() => []);
      for (const i of sides.keys()) await subj[i]!.run(c, 1, 0); // JIT warm-up, not measured
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? sides.map((_, i) => i) : sides.map((_, i) => sides.length - 1 - i);
        for (const i of order) {
          const s = sides[i]!;
          const before = await cpuMs(s.t.toolgate.pid);
          const res = await subj[i]!.run(c, options.durationS, 0);
          const after = await cpuMs(s.t.toolgate.pid);
          const calls = Math.max(1, res.ok + res.failed);
          const us = (k: keyof Cpu) => ((after[k] - before[k]) * 1000) / calls;
          per[i]!.push({ all: us('all'), mainUser: us('mainUser'), mainSystem: us('mainSystem') });
        }
      }
      // The least CPU a round took: other load on the machine only ever adds to it.
      const least = (a: Cpu[], k: keyof Cpu) => Math.min(...a.map((v) => v[k])).toFixed(0);
      const each = (a: Cpu[], k: keyof Cpu) => a.map((v) => v[k].toFixed(0)).join(' ');
      const side = (a: Cpu[]) => `${least(a, 'all')} µs/call min [${each(a, 'all')}], main thread user [${each(a, 'mainUser')}] system [${each(a, 'mainSystem')}]`;
      console.log(`${w} c=${c}: ${sides.map((s, i) => `${s.name} ${side(per[i]!)}`).join(' | ')}`);
    }
  }
} finally {
  for (const s of servers) await s.stop();
}
