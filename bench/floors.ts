// `npx tsx bench/floors.ts [ref]`: toolgate against its floors in one run: read_file 4 KiB against the read floor
// (ceiling.mjs guarded-read) and write_file 4 KiB against the write floor (guarded-write), each at c=1 and c=N,
// rounds interleaved. A floor is the same Fastify server with one bare route doing the same per-call and
// file-system work inline (bench/README.md, "Floors"). Printed: calls per second and their paired ratio, and
// server CPU per call (user + system of every thread, /proc) of each side, the least of the rounds, and beside it
// the medians of its system time and of the main thread's share (the event loop's). BENCH_ONLY=write
// measures one of the two; CEILING_LOCK=owned gives the write floor toolgate's kind of file lock (ceiling.mjs),
// CEILING_LOCK=link a lock made by a link of one owner file (no inode per write).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildToolgate } from './lib/build.js';
import type { Subject } from './lib/compare.js';
import { makePool } from './lib/fixtures.js';
import { progress } from './lib/log.js';
import { options } from './lib/options.js';
import { procCpuMs } from './lib/proc-cpu.js';
import { startReadFloor, startToolgate, startWriteFloor, useToolgateMain, type Server } from './lib/servers.js';
import { fmt, median, MiB, pairedRatio } from './lib/stats.js';
import { readWorkload, writeReadFile, writeWorkload, type Targets } from './lib/workloads.js';

const ref = process.argv[2] ?? '.';
const C = options.concurrency;
const token = randomBytes(32).toString('hex');
const tokenSha256 = createHash('sha256').update(token).digest('hex');
await fs.mkdir(options.cacheDir, { recursive: true });
const tokensFile = path.join(options.cacheDir, 'tokens-floors.json');
await fs.writeFile(tokensFile, JSON.stringify([{ id: 'bench', sha256: tokenSha256, projects: ['*'], risks: ['read', 'write', 'destructive'] }]));
const auth = { authorization: `Bearer ${token}` };
const pool = makePool(8 * MiB, 4242);
const logDir = path.join(options.cacheDir, 'logs-floors');
await fs.mkdir(logDir, { recursive: true });

const build = await buildToolgate(ref === '.' ? null : ref);
useToolgateMain(build.main);
const ws = path.join(options.cacheDir, 'ws-floors');
await fs.rm(ws, { recursive: true, force: true });
await fs.mkdir(ws, { recursive: true });
await writeReadFile(ws, pool);
const floorState = path.join(options.cacheDir, 'floor-state');
await fs.rm(floorState, { recursive: true, force: true });
const servers: Server[] = [];
try {
  const tg = await startToolgate(`toolgate ${build.commit}`, { root: ws, tokensFile, instanceId: 'floors', logLevel: options.toolgateLogLevel, extra: options.toolgateExtraEnv }, path.join(logDir, 'toolgate.log'));
  servers.push(tg);
  const readFloor = await startReadFloor('read floor', ws, tokenSha256, path.join(floorState, 'read-audit.jsonl'), path.join(logDir, 'read-floor.log'));
  servers.push(readFloor);
  const writeFloor = await startWriteFloor('write floor', ws, floorState, tokenSha256, path.join(floorState, 'write-audit.jsonl'), path.join(logDir, 'write-floor.log'));
  servers.push(writeFloor);
  await fs.mkdir(floorState, { recursive: true });
  const t: Targets = { ws, auth, toolgate: tg, peer: null, bareConst: null, bareFile: null, bareFileSync: null, guardedRead: readFloor, guardedWrite: writeFloor };
  const lines: string[] = [];
  for (const w of (['read', 'write'] as const).filter((x) => options.sections.has(x))) {
    const all = w === 'read' ? readWorkload(t) : await writeWorkload(t, pool, 2 * C);
    const floorKey = w === 'read' ? 'guarded_read' : 'guarded_write';
    const pair = all.filter((s) => s.key === 'toolgate' || s.key === floorKey) as [Subject, Subject];
    for (const c of [1, C]) {
      for (const s of pair) await s.run(c, 1, 0); // JIT warm-up, not measured (so no ramp below)
      const rps: number[][] = [[], []];
      const cpu: number[][] = [[], []];
      const sys: number[][] = [[], []];
      const main: number[][] = [[], []];
      for (let r = 0; r < options.rounds; r++) {
        const order = r % 2 === 0 ? [0, 1] : [1, 0];
        for (const i of order) {
          const s = pair[i] as Subject;
          const pid = s.pid as number;
          const before = await procCpuMs(`/proc/${pid}/stat`);
          const mainBefore = await procCpuMs(`/proc/${pid}/task/${pid}/stat`);
          const res = await s.run(c, options.durationS, 0);
          const after = await procCpuMs(`/proc/${pid}/stat`);
          const mainAfter = await procCpuMs(`/proc/${pid}/task/${pid}/stat`);
          const calls = Math.max(1, res.ok + res.failed);
          rps[i]!.push(res.rps);
          cpu[i]!.push(((after.user + after.system - before.user - before.system) * 1000) / calls);
          sys[i]!.push(((after.system - before.system) * 1000) / calls);
          main[i]!.push(((mainAfter.user + mainAfter.system - mainBefore.user - mainBefore.system) * 1000) / calls);
          await new Promise((done) => setTimeout(done, 250));
        }
        progress(`  ${w} c=${c} round ${r + 1}/${options.rounds}: toolgate ${fmt(rps[0]!.at(-1))}/s | floor ${fmt(rps[1]!.at(-1))}/s`);
      }
      // Where the CPU went, medians per call: system time of every thread, and the main thread's (the event loop's) share.
      const split = (i: number): string => `(system ${fmt(median(sys[i]!))}, main thread ${fmt(median(main[i]!))})`;
      const line = `${w} c=${c}: toolgate ${fmt(median(rps[0]!))} req/s, ${fmt(Math.min(...cpu[0]!))} µs CPU/call ${split(0)} | floor ${fmt(median(rps[1]!))} req/s, ${fmt(Math.min(...cpu[1]!))} µs CPU/call ${split(1)} | toolgate/floor ${fmt(pairedRatio(rps[0]!, rps[1]!))}× calls/s, ${fmt(Math.min(...cpu[1]!) / Math.min(...cpu[0]!))}× of the floor's CPU per call`;
      lines.push(line);
      progress(line);
    }
  }
  console.log(`\n${build.commit}${build.dirty ? '+dirty' : ''} against its floors (${options.rounds} rounds of ${options.durationS} s):\n${lines.join('\n')}`);
} finally {
  for (const s of servers) await s.stop();
}
