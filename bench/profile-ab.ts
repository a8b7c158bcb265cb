// `npm run bench:profile -- <refA> <refB>`: where a call's CPU time goes, per layer, on two builds side by
// side. Each build is compiled without the production bundle (tsc's per-module files, so a profile's
// frames name the module and therefore the layer), started with the bench's production settings and
// `--cpu-prof`, and given the read and the write load at c=1 and c=N, one profile per load. The table is
// microseconds of the main thread per completed call by layer, counted over the load's window only, so a
// build that serves more calls is not charged for it; busy time includes waits inside synchronous calls.
// Profiles land in <cache>/prof-ab/<commit>/ for `tsx bench/profile-summary.ts`. BENCH_PROFILE_DOORS=rest,mcp also
// sends the read as an MCP tools/call (POST /mcp, the door's direct route), a load of its own ("read mcp").
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { buildToolgate } from './lib/build.js';
import { makePool } from './lib/fixtures.js';
import { progress } from './lib/log.js';
import { options, REPO_DIR } from './lib/options.js';
import { startToolgate, useToolgateMain } from './lib/servers.js';
import { MiB } from './lib/stats.js';
import type { Subject } from './lib/compare.js';
import { runLoad } from './lib/http-load.js';
import { READ_REL, readWorkload, writeReadFile, writeWorkload, type Targets } from './lib/workloads.js';

const refs = process.argv.slice(2);
if (refs.length < 1) throw new Error('usage: npm run bench:profile -- <ref> [<ref>…]');
const wanted = process.env.BENCH_ONLY ? [...options.sections].filter((s) => s === 'read' || s === 'write') : ['read', 'write'];
const C = options.concurrency;
const seconds = Number(process.env.BENCH_PROFILE_S ?? 6);
const doors = (process.env.BENCH_PROFILE_DOORS ?? 'rest').split(',').filter((d): d is 'rest' | 'mcp' => d === 'rest' || d === 'mcp');

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** The layer a frame belongs to, from its module path (tsc output mirrors src/). */
function layerOf(url: string, fn: string): string {
  const d = url.indexOf('/dist-prof/');
  if (d >= 0) {
    const rel = url.slice(d + '/dist-prof/'.length);
    if (rel.startsWith('transports/')) return 'door (transports/)';
    if ((rel.startsWith('pipeline/') && rel !== 'pipeline/policy-gate.js') || rel === 'tools/execute.js' || rel === 'ops/operations.js') return 'pipeline';
    if (rel.startsWith('policy/') || rel === 'ops/policy.js' || rel === 'pipeline/policy-gate.js' || rel === 'tools/plan.js') return 'policy gate';
    if (rel.startsWith('ops/audit')) return 'audit';
    if (rel.startsWith('ops/')) return 'ops (auth, metrics, limits, guard)';
    if (rel.startsWith('workspace/')) return 'sandbox (workspace/)';
    if (rel === 'envelope.js' || rel === 'errors.js' || rel.startsWith('errors/')) return 'envelope';
    if (rel.startsWith('tools/') || rel.startsWith('edit/')) return 'tool';
    return 'app (other)';
  }
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/');
    const pkg = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? '?');
    if (pkg === 'fastify' || pkg.startsWith('@fastify/') || pkg === 'find-my-way' || pkg === 'light-my-request' || pkg === 'avvio' || pkg === 'fast-json-stringify' || pkg === 'secure-json-parse') return 'fastify';
    if (pkg === 'pino' || pkg === 'sonic-boom' || pkg === 'pino-std-serializers' || pkg === 'fast-redact' || pkg === 'thread-stream') return 'logging (pino)';
    if (pkg === 'zod') return 'validation (zod)';
    if (pkg === 'prom-client' || pkg === 'tdigest' || pkg === 'bintrees') return 'metrics (prom-client)';
    return `other package`;
  }
  if (url.startsWith('node:')) return 'node core (JS)';
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(program)') return 'V8/native (program)';
  if (fn === '(idle)' || fn === '(root)') return fn;
  return 'native (I/O, crypto, syscalls)';
}

/**
 * Time per layer among the samples taken while the load ran (`from`–`to`, µs of CLOCK_MONOTONIC, the clock of
 * V8's profile timestamps and of process.hrtime): start-up, the workload's set-up and the shutdown are left out.
 */
function perLayer(prof: Profile, from: number, to: number): Map<string, number> {
  const layerOfNode = new Map(prof.nodes.map((n) => [n.id, layerOf(n.callFrame.url, n.callFrame.functionName)]));
  const m = new Map<string, number>();
  const samples = prof.samples ?? [];
  const deltas = prof.timeDeltas ?? [];
  let t = prof.startTime;
  for (let i = 0; i < samples.length; i++) {
    const delta = deltas[i] ?? 0;
    t += delta;
    if (t < from || t > to) continue;
    // A sample stands for the time since the previous one.
    const l = layerOfNode.get(samples[i] as number) ?? '?';
    m.set(l, (m.get(l) ?? 0) + delta);
  }
  return m;
}

/** The build of `ref` with tsc's per-module output in dist-prof/ instead of the bundle. */
async function profBuild(ref: string): Promise<{ main: string; commit: string }> {
  const b = await buildToolgate(ref);
  const dir = path.dirname(path.dirname(b.main));
  const out = path.join(dir, 'dist-prof');
  if (!(await fs.stat(path.join(out, '.built')).catch(() => null))) {
    await fs.rm(out, { recursive: true, force: true });
    await fs.cp(path.join(dir, 'dist'), out, { recursive: true });
    const r = spawnSync(process.execPath, [path.join(REPO_DIR, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', out], { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tsc --outDir dist-prof at ${b.commit} failed:\n${r.stdout}${r.stderr}`);
    await fs.writeFile(path.join(out, '.built'), new Date().toISOString());
  }
  return { main: path.join(out, 'main.js'), commit: b.commit };
}

const token = randomBytes(32).toString('hex');
const tokensFile = path.join(options.cacheDir, 'tokens-prof.json');
await fs.mkdir(options.cacheDir, { recursive: true });
await fs.writeFile(tokensFile, JSON.stringify([{ id: 'bench', sha256: createHash('sha256').update(token).digest('hex'), projects: ['*'], risks: ['read', 'write', 'destructive'] }]));
const auth = { authorization: `Bearer ${token}` };
const pool = makePool(8 * MiB, 4242);

type Row = { ref: string; load: string; calls: number; layers: Map<string, number> };

/**
 * The read as an MCP tools/call over POST /mcp (what an MCP client sends; the door's direct route). One call first,
 * outside the profile's window: the door loads the MCP SDK at its first POST.
 */
async function mcpReadSubject(t: Targets): Promise<Subject> {
  const headers = { ...t.auth, accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: { path: READ_REL } } });
  const warm = await runLoad({ port: t.toolgate.port, path: '/mcp', headers, connections: 1, amount: 1, body });
  if (warm.ok !== 1) throw new Error(`MCP tools/call failed: ${warm.firstFailure ?? 'no answer'}`);
  return { key: 'toolgate', label: 'toolgate read_file over MCP', pid: t.toolgate.pid, run: (c, s, rampS) => runLoad({ port: t.toolgate.port, path: '/mcp', headers, connections: c, durationS: s, rampS, body }) };
}
const rows: Row[] = [];
await fs.rm(path.join(options.cacheDir, 'ws-prof'), { recursive: true, force: true });
// The removal's journal traffic settles before the first load (see below).
spawnSync('sync');
for (const ref of refs) {
  const build = await profBuild(ref);
  useToolgateMain(build.main);
  for (const [w, door] of wanted.flatMap((w) => (w === 'read' ? doors : ['rest' as const]).map((d) => [w, d] as const))) {
    const load = door === 'mcp' ? `${w} mcp` : w;
    for (const c of [1, C]) {
      // A workspace of its own per load, removed only at the end: removing the last one's thousands of backups
      // right before a write load kept the journal busy under it (creates blocked for milliseconds).
      const ws = path.join(options.cacheDir, 'ws-prof', `${build.commit}-${w}-${c}`);
      await fs.mkdir(ws, { recursive: true });
      await writeReadFile(ws, pool);
      const profDir = path.join(options.cacheDir, 'prof-ab', build.commit, `${load.replace(' ', '-')}-c${c}`);
      await fs.rm(profDir, { recursive: true, force: true });
      const tg = await startToolgate(`toolgate ${build.commit}`, { root: ws, tokensFile, instanceId: 'prof', logLevel: options.toolgateLogLevel, extra: options.toolgateExtraEnv }, path.join(options.cacheDir, 'logs-prof', `${build.commit}.log`), ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
      let calls: number;
      let from: number;
      let to: number;
      try {
        const t: Targets = { ws, auth, toolgate: tg, peer: null, bareConst: null, bareFile: null, bareFileSync: null, guardedRead: null };
        const subject = door === 'mcp' ? await mcpReadSubject(t) : w === 'read' ? readWorkload(t)[0] : (await writeWorkload(t, pool, 2 * C))[0];
        if (!subject) throw new Error('no toolgate subject');
        // No uncounted ramp: the profile covers the whole run, so every call in it is counted (JIT warm-up included, on both builds).
        from = Number(process.hrtime.bigint() / 1000n);
        const r = await subject.run(c, seconds, 0);
        to = Number(process.hrtime.bigint() / 1000n);
        calls = r.ok;
      } finally {
        await tg.stop();
      }
      const file = (await fs.readdir(profDir)).find((f) => f.endsWith('.cpuprofile'));
      if (!file) throw new Error(`no profile in ${profDir}`);
      const prof = JSON.parse(await fs.readFile(path.join(profDir, file), 'utf8')) as Profile;
      rows.push({ ref: build.commit, load: `${load} c=${c}`, calls, layers: perLayer(prof, from, to) });
      progress(`${build.commit} ${load} c=${c}: ${calls} calls counted, profile ${path.join(profDir, file)}`);
    }
  }
}

await fs.rm(path.join(options.cacheDir, 'ws-prof'), { recursive: true, force: true });

// One table per load: µs of CPU per counted call, per layer, each ref a column.
const loads = [...new Set(rows.map((r) => r.load))];
const out: string[] = [];
for (const load of loads) {
  const rs = rows.filter((r) => r.load === load);
  const layers = [...new Set(rs.flatMap((r) => [...r.layers.keys()]))].filter((l) => l !== '(idle)' && l !== '(root)');
  const cost = (r: Row, l: string) => (r.layers.get(l) ?? 0) / Math.max(1, r.calls);
  layers.sort((a, b) => cost(rs[rs.length - 1] as Row, b) - cost(rs[rs.length - 1] as Row, a));
  out.push(`\n**${load}** (main-thread µs per call)\n`, `| layer | ${rs.map((r) => r.ref.slice(0, 7)).join(' | ')} |`, `|---|${rs.map(() => '---:').join('|')}|`);
  for (const l of layers) out.push(`| ${l} | ${rs.map((r) => cost(r, l).toFixed(0)).join(' | ')} |`);
  const busy = (r: Row) => [...r.layers].filter(([l]) => l !== '(idle)' && l !== '(root)').reduce((s, [, v]) => s + v, 0) / Math.max(1, r.calls);
  out.push(`| **busy total** | ${rs.map((r) => `**${busy(r).toFixed(0)}**`).join(' | ')} |`);
}
process.stdout.write(`${out.join('\n')}\n`);
