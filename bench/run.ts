// `npm run bench`: builds toolgate, starts it (production settings) next to the ceiling servers and
// the MCP filesystem server, measures every workload in interleaved rounds, prints each target with
// PASS/MISS, and writes bench/results/latest.json and the tables of bench/README.md.
// Knobs: BENCH_QUICK=1 (1–2 minute smoke run), BENCH_ROUNDS, BENCH_DURATION_S, BENCH_ONLY=read,write,…
// (see bench/README.md).
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bigSection, type BigResults } from './lib/big-files.js';
import { COLD_START_MAX_RATIO, coldSection } from './lib/cold-start.js';
import { compareLoad, rpsRatio, type Series, type Subject } from './lib/compare.js';
import { ensureBigFile, ensureTree, makePool } from './lib/fixtures.js';
import { closeClient, post } from './lib/http-client.js';
import { elapsedS, progress } from './lib/log.js';
import { describeMachine } from './lib/machine.js';
import { options, REPO_DIR } from './lib/options.js';
import { startPeer, type Peer } from './lib/peer.js';
import { targetLines, writeJson, writeReadme, type Results, type Target } from './lib/report.js';
import { searchSection } from './lib/search.js';
import { buildToolgate } from './lib/build.js';
import { CEILING_SERVER, getStatus, startCeiling, startReadFloor, startToolgate, toolgateNodeArgs, useToolgateMain, type Server, type ToolgateEnv } from './lib/servers.js';
import { fmt, MiB } from './lib/stats.js';
import { editWorkload, READ_REL, readWorkload, writeReadFile, writeWorkload, type Targets } from './lib/workloads.js';

function ripgrep(): { bin: string; version: string } | null {
  const bin = process.env.BENCH_RG_BIN ?? 'rg';
  try {
    const v = execFileSync(bin, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return { bin, version: v.split('\n')[0]?.trim() ?? 'rg' };
  } catch {
    return null;
  }
}

async function probeToolgate(tg: Server, auth: Record<string, string>, ws: string): Promise<{ tools: Set<string>; ops: Record<string, boolean> }> {
  const listed = await getStatus(tg.port, '/v1/tools', auth);
  const tools = new Set([...listed.body.matchAll(/"name"\s*:\s*"([A-Za-z0-9_-]+)"/g)].map((m) => m[1] as string));
  const noAuth = await post(tg.port, '/v1/tools/read_file', JSON.stringify({ path: READ_REL }), {});
  await post(tg.port, '/v1/tools/read_file', JSON.stringify({ path: READ_REL }), auth);
  const metrics = await getStatus(tg.port, '/metrics', auth);
  // Audit lines may be group-committed: give the file a moment to appear.
  let audit = false;
  const dir = path.join(ws, '.toolgate', 'audit');
  for (let i = 0; i < 30 && !audit; i++) {
    for (const f of await fs.readdir(dir).catch(() => [] as string[])) if ((await fs.stat(path.join(dir, f))).size > 0) audit = true;
    if (!audit) await new Promise((r) => setTimeout(r, 100));
  }
  return { tools, ops: { auth: noAuth.status === 401, metrics: metrics.status === 200 && metrics.body.includes('toolgate_'), audit } };
}

function ratioTarget(id: string, what: string, goal: string, measured: string, ratio: number | null, ok: (r: number) => boolean, note?: string): Target {
  const pass = ratio === null || !Number.isFinite(ratio) ? null : ok(ratio);
  return { id, what, measured, ratio, goal, pass, ...(note && { note }) };
}

function buildTargets(r: Results, C: number): Target[] {
  const t: Target[] = [];
  const load = (op: string, c: number) => r.load[op]?.[`c${c}`];
  const rps = (s: Record<string, Series> | undefined, k: string) => `${fmt(s?.[k]?.median.rps)} req/s`;
  const read = load('read', C);
  // The floor of a read that does the spec's per-call work (ceiling.mjs guarded-read), against the peer and the constant route.
  const floorNote = (vs: 'peer' | 'bare_const') =>
    read?.guarded_read && read[vs]
      ? `a bare route doing the spec's per-call work inline (auth, sandbox walk, sha256, envelope, metrics, audit) reaches ${fmt(rpsRatio(read, 'guarded_read', vs))}× ${vs === 'peer' ? 'the peer' : 'of the constant route'}; toolgate ${fmt(rpsRatio(read, 'toolgate', 'guarded_read'))}× of it`
      : null;
  t.push(
    ratioTarget('read_vs_peer', `read_file 4 KiB, c=${C}, vs peer read_text_file`, '≥ 2.0×', `${rps(read, 'toolgate')} vs ${rps(read, 'peer')}`, read?.peer ? rpsRatio(read, 'toolgate', 'peer') : null, (x) => x >= 2, floorNote('peer') ?? undefined),
  );
  const fileCeiling = read?.bare_file && read.bare_const ? rpsRatio(read, 'bare_file', 'bare_const') : Number.NaN;
  t.push(
    ratioTarget(
      'read_vs_bare',
      `read_file 4 KiB, c=${C}, vs bare constant route`,
      '≥ 0.5×',
      `${rps(read, 'toolgate')} vs ${rps(read, 'bare_const')}`,
      read?.bare_const ? rpsRatio(read, 'toolgate', 'bare_const') : null,
      (x) => x >= 0.5,
      [
        Number.isFinite(fileCeiling) ? `the bare fs.readFile route reaches ${fmt(fileCeiling)}× of the constant route; toolgate ${fmt(rpsRatio(read as Record<string, Series>, 'toolgate', 'bare_file'))}× of it` : null,
        read?.bare_file_sync && read.bare_const
          ? `the bare readFileSync route ${fmt(rpsRatio(read, 'bare_file_sync', 'bare_const'))}× of the constant route${read.peer ? ` and ${fmt(rpsRatio(read, 'bare_file_sync', 'peer'))}× the peer` : ''}; toolgate ${fmt(rpsRatio(read, 'toolgate', 'bare_file_sync'))}× of it`
          : null,
        floorNote('bare_const'),
      ]
        .filter((x) => x !== null)
        .join('; ') || undefined,
    ),
  );
  for (const c of [1, C]) {
    const w = load('write', c);
    const plain = w?.plain_durable ? `; toolgate reaches ${fmt(rpsRatio(w, 'toolgate', 'plain_durable'))}× of a plain durable write` : '';
    const guarded =
      w?.guarded_durable && w.peer
        ? `, ${fmt(rpsRatio(w, 'toolgate', 'guarded_durable'))}× of the fs calls of a locked, backed-up durable write alone, which reach ${fmt(rpsRatio(w, 'guarded_durable', 'peer'))}× the peer`
        : '';
    t.push(ratioTarget(`write_vs_peer_c${c}`, `write_file 4 KiB durable, c=${c}, vs peer write_file`, '≥ 1.0×', `${rps(w, 'toolgate')} vs ${rps(w, 'peer')}`, w?.peer ? rpsRatio(w, 'toolgate', 'peer') : null, (x) => x >= 1, `the peer does not fsync${plain}${guarded}`));
  }
  for (const c of [1, C]) {
    const e = load('edit', c);
    t.push(ratioTarget(`edit_vs_peer_c${c}`, `edit_file one line of 1 MiB, c=${c}, vs peer edit_file`, '≥ 3.0×', `${rps(e, 'toolgate')} vs ${rps(e, 'peer')}`, e?.peer ? rpsRatio(e, 'toolgate', 'peer') : null, (x) => x >= 3));
  }
  const s = r.search;
  t.push(
    ratioTarget(
      'search_vs_rg',
      'content search, time vs rg on the same tree',
      '≤ 2.0×',
      s ? `${fmt(s.latencyMs.toolgate?.median)} ms vs ${fmt(s.latencyMs.rg?.median)} ms` : 'n/a',
      s?.ratioToRg ?? null,
      (x) => x <= 2,
      s && s.toolgateTruncated ? 'toolgate answer was truncated' : undefined,
    ),
  );
  const b: BigResults | null = r.big;
  t.push(ratioTarget('head_vs_4k', 'lines 1–100 of 1 GiB, time vs the whole 4 KiB read', '≤ 2.0×', b ? `${fmt(b.head100Ms.median)} ms vs ${fmt(b.read4kMs.median)} ms` : 'n/a', b?.head100Ratio ?? null, (x) => x <= 2));
  t.push({
    id: 'head_rss',
    what: 'lines 1–100 of 1 GiB, extra RSS',
    measured: b ? `${fmt(b.head100ExtraRssMiB.median)} MiB` : 'n/a',
    ratio: null,
    goal: '≤ 64 MiB',
    pass: b ? b.head100ExtraRssMiB.median <= 64 : null,
  });
  t.push(ratioTarget('tail_vs_head', 'last 100 lines of 1 GiB (tail: 100), time vs lines 1–100', '≤ 2.0×', b ? `${fmt(b.tailFromEnd100Ms.median)} ms (+${fmt(b.tailFromEnd100ExtraRssMiB.median)} MiB) vs ${fmt(b.head100Ms.median)} ms` : 'n/a', b?.tailFromEnd100Ratio ?? null, (x) => x <= 2));
  t.push(
    ratioTarget(
      'edit50_vs_plain',
      'one-line edit of 50 MiB vs plain durable write of the same bytes',
      '≤ 1.5×',
      b ? `${fmt(b.edit50Ms.median)} ms vs ${fmt(b.plainWrite50Ms.median)} ms` : 'n/a',
      b?.edit50Ratio ?? null,
      (x) => x <= 1.5,
      b?.guardedEdit50Ms ? `the same edit's read, two sha256, backup copy and durable write alone (in the bench process) take ${fmt(b.guardedEdit50Ms.median)} ms, ${fmt(b.guardedEdit50Ratio)}× the plain write` : undefined,
    ),
  );
  const c = r.cold;
  t.push(ratioTarget('cold_vs_bare', 'cold start to first 200 from /readyz vs bare Fastify', `≤ ${COLD_START_MAX_RATIO}×`, c ? `${fmt(c.toolgateMs.median)} ms vs ${fmt(c.bareMs.median)} ms` : 'n/a', c?.ratio ?? null, (x) => x <= COLD_START_MAX_RATIO));
  const rss = r.rssUnderLoadMiB;
  const worst = rss ? Object.entries(rss.perOperation).sort((x, y) => y[1] - x[1])[0] : undefined;
  t.push({
    id: 'rss_under_load',
    what: `RSS of toolgate under c=${C} load (worst operation)`,
    measured: worst ? `${fmt(worst[1])} MiB (${worst[0]})` : 'n/a',
    ratio: null,
    goal: '≤ 200 MiB',
    pass: rss ? rss.max <= 200 : null,
  });
  return t;
}

async function main(): Promise<void> {
  const C = options.concurrency;
  progress(
    `toolgate bench (${options.quick ? 'quick' : 'full'}): ${options.rounds} rounds × (${options.rampS} s ramp + ${options.durationS} s counted), c=1 and c=${C}; sections ${[...options.sections].join(', ')}; cache ${options.cacheDir}`,
  );
  const rg = ripgrep();
  const results: Results = {
    meta: {
      date: new Date().toISOString(),
      commit: '',
      dirty: false,
      source: 'working tree',
      mode: options.quick ? 'quick' : 'full',
      durationS: 0,
      settings: { rounds: options.rounds, durationS: options.durationS, rampS: options.rampS, pairs: options.pairs, bigRounds: options.bigRounds, searchRounds: options.searchRounds, coldRounds: options.coldRounds, concurrency: C },
      machine: describeMachine(path.dirname(options.cacheDir)),
      loadAvg: { start: os.loadavg()[0] ?? 0, end: 0 },
      toolgate: { tools: [], ops: {}, logLevel: options.toolgateLogLevel, extraEnv: options.toolgateExtraEnv, nodeArgs: toolgateNodeArgs() },
      peer: null,
      rg: rg?.version ?? null,
    },
    load: {},
    rssUnderLoadMiB: null,
    search: null,
    big: null,
    cold: null,
    targets: [],
    skipped: [],
    notes: [],
  };
  const skip = (what: string, why: string) => {
    results.skipped.push({ what, why });
    progress(`SKIP ${what}: ${why}`);
  };
  if (results.meta.loadAvg.start > 0.5) {
    progress(`note: load average ${results.meta.loadAvg.start.toFixed(2)} — other work on this machine will skew absolute figures (ratios are interleaved)`);
  }
  if (Object.keys(options.toolgateExtraEnv).length > 0) {
    results.notes.push(`Experiment: toolgate ran with ${Object.entries(options.toolgateExtraEnv).map(([k, v]) => `${k}=${v}`).join(', ')} (not the production settings).`);
  }
  if (!rg) results.notes.push('ripgrep (rg) is not installed: the search-vs-rg comparison was skipped (apt-get install ripgrep).');

  const build = await buildToolgate();
  useToolgateMain(build.main);
  results.meta.commit = build.commit;
  results.meta.dirty = build.dirty;
  results.meta.source = build.source;
  await fs.access(CEILING_SERVER);

  // Workspace: generated data is kept, per-run files and toolgate's state are not.
  const ws = path.join(options.cacheDir, 'ws');
  const logDir = path.join(options.cacheDir, 'logs');
  await fs.rm(logDir, { recursive: true, force: true });
  await fs.mkdir(logDir, { recursive: true });
  await fs.rm(path.join(ws, '.toolgate'), { recursive: true, force: true });
  await fs.rm(path.join(ws, 'scratch'), { recursive: true, force: true });
  await fs.mkdir(ws, { recursive: true });

  const token = randomBytes(32).toString('hex');
  const tokensFile = path.join(options.cacheDir, 'tokens.json');
  const tokenSha256 = createHash('sha256').update(token).digest('hex');
  await fs.writeFile(tokensFile, JSON.stringify([{ id: 'bench', sha256: tokenSha256, projects: ['*'], risks: ['read', 'write', 'destructive'] }], null, 2));
  const auth = { authorization: `Bearer ${token}` };
  const baseEnv: Omit<ToolgateEnv, 'root' | 'instanceId'> = { tokensFile, logLevel: options.toolgateLogLevel, extra: options.toolgateExtraEnv };

  const pool = makePool(8 * MiB, 4242);
  const tree = options.sections.has('search') ? await ensureTree(ws, options.cacheDir) : null;
  const big = options.sections.has('big') ? await ensureBigFile(ws, options.cacheDir) : null;
  const readFile = await writeReadFile(ws, pool);

  const servers: Server[] = [];
  let peer: Peer | null = null;
  try {
    const needLoad = ['read', 'write', 'edit', 'search'].some((s) => options.sections.has(s as never));
    if (needLoad || options.sections.has('big')) {
      progress('starting toolgate (load instance), the bare Fastify ceilings and the MCP filesystem server');
      const profArgs = options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${path.join(options.cacheDir, 'prof', 'load')}`] : [];
      const tg = await startToolgate('toolgate', { ...baseEnv, root: ws, instanceId: 'bench-load' }, path.join(logDir, 'toolgate.log'), profArgs);
      servers.push(tg);
      const t: Targets = { ws, auth, toolgate: tg, peer: null, bareConst: null, bareFile: null, bareFileSync: null, guardedRead: null };
      t.bareConst = await startCeiling('bare const', 'const', null, path.join(logDir, 'bare-const.log'));
      t.bareFile = await startCeiling('bare file', 'file', readFile, path.join(logDir, 'bare-file.log'));
      t.bareFileSync = await startCeiling('bare file sync', 'file-sync', readFile, path.join(logDir, 'bare-file-sync.log'));
      // The floor's audit file starts empty each run (its chain starts at null like a fresh toolgate's).
      const floorAudit = path.join(options.cacheDir, 'floor-audit.jsonl');
      await fs.rm(floorAudit, { force: true });
      t.guardedRead = await startReadFloor('guarded read', ws, tokenSha256, floorAudit, path.join(logDir, 'guarded-read.log'));
      servers.push(t.bareConst, t.bareFile, t.bareFileSync, t.guardedRead);
      try {
        peer = await startPeer(ws);
        t.peer = peer;
        results.meta.peer = `@modelcontextprotocol/server-filesystem ${peer.version} over stdio (MCP SDK client)`;
      } catch (err) {
        skip('peer comparisons', `the MCP filesystem server did not start: ${err instanceof Error ? err.message : String(err)}`);
      }
      const probe = await probeToolgate(tg, auth, ws);
      results.meta.toolgate.tools = [...probe.tools].sort();
      results.meta.toolgate.ops = probe.ops;
      progress(`toolgate tools: ${results.meta.toolgate.tools.join(', ') || '(none listed)'}; auth ${probe.ops.auth ? 'on' : 'OFF'}, audit ${probe.ops.audit ? 'on' : 'OFF'}, metrics ${probe.ops.metrics ? 'on' : 'OFF'}`);
      for (const [k, v] of Object.entries(probe.ops)) {
        if (!v) results.notes.push(`The ops layer's ${k} was not active in this build: the figures are without it, not with production settings.`);
      }
      const has = (tool: string) => probe.tools.has(tool);

      const section = async (name: 'read' | 'write' | 'edit', tool: string, make: () => Promise<Subject[]>) => {
        if (!options.sections.has(name)) return;
        if (!has(tool)) return skip(`${name} load`, `toolgate has no ${tool} tool yet`);
        progress(`${name}: ${tool} at c=1 and c=${C}`);
        const subjects = await make();
        results.load[name] = {};
        for (const c of [1, C]) {
          // Slow operations at high concurrency complete in waves (each ~C× the single latency): a longer window keeps the count from being a matter of where the waves fall.
          const durationS = name === 'edit' && c > 1 ? options.durationS * 3 : options.durationS;
          (results.load[name] as Record<string, Record<string, Series>>)[`c${c}`] = await compareLoad(name, c, subjects, { durationS });
        }
      };
      await section('read', 'read_file', async () => readWorkload(t));
      await section('write', 'write_file', () => writeWorkload(t, pool, 2 * C));
      await section('edit', 'edit_file', () => editWorkload(t, pool, 2 * C));
      if (options.sections.has('search') && tree) {
        if (!has('search_files')) skip('search', 'toolgate has no search_files tool yet');
        else {
          progress(`search: search_files content search vs ${rg ? 'rg and ' : ''}grep`);
          try {
            results.search = await searchSection(t, tree, rg?.bin ?? null);
            results.load.search = results.search.load;
          } catch (err) {
            skip('search', `search_files failed: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      }
      const perOperation: Record<string, number> = {};
      for (const [op, byConc] of Object.entries(results.load)) {
        const s = byConc[`c${C}`]?.toolgate;
        if (s) perOperation[op] = s.median.peakRssMiB;
      }
      if (Object.keys(perOperation).length > 0) results.rssUnderLoadMiB = { perOperation, max: Math.max(...Object.values(perOperation)) };

      // Stop the load instance and the ceilings; big files get a fresh instance with an idle baseline.
      for (const s of servers.splice(0)) await s.stop();
      if (options.cpuProf) progress(`CPU profile of the load instance written to ${path.join(options.cacheDir, 'prof', 'load')}`);

      if (options.sections.has('big') && big) {
        const missing = ['read_file', 'edit_file', 'write_file'].filter((x) => !has(x));
        if (missing.length > 0) skip('big files', `toolgate has no ${missing.join(', ')} yet`);
        else {
          progress('big files: fresh toolgate instance');
          const profArgs = options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${path.join(options.cacheDir, 'prof', 'big')}`] : [];
          const tgBig = await startToolgate('toolgate (big)', { ...baseEnv, root: ws, instanceId: 'bench-big' }, path.join(logDir, 'toolgate-big.log'), profArgs);
          servers.push(tgBig);
          try {
            results.big = await bigSection(tgBig, auth, ws, big, pool, peer);
          } catch (err) {
            skip('big files', `failed: ${err instanceof Error ? err.message : String(err)}`);
          }
          for (const s of servers.splice(0)) await s.stop();
        }
      }
    }
    if (peer) {
      await peer.close();
      peer = null;
    }
    if (options.sections.has('cold')) {
      progress(`cold start: ${options.coldRounds} rounds, toolgate vs bare Fastify`);
      results.cold = await coldSection(baseEnv, options.cacheDir, logDir);
    }
  } finally {
    for (const s of servers) await s.stop().catch(() => undefined);
    if (peer) await peer.close().catch(() => undefined);
    closeClient();
  }

  results.meta.durationS = elapsedS();
  results.meta.loadAvg.end = os.loadavg()[0] ?? 0;
  results.targets = buildTargets(results, C);
  await writeJson(options.resultsFile, results);
  progress(`wrote ${path.relative(REPO_DIR, options.resultsFile)}`);
  if (options.writeReadme) progress(`wrote ${path.relative(REPO_DIR, await writeReadme(results))}`);
  process.stdout.write(`\nTargets (${results.meta.mode} run, ${Math.round(results.meta.durationS)} s):\n${targetLines(results.targets).join('\n')}\n`);
  if (results.skipped.length > 0) process.stdout.write(`\nSkipped:\n${results.skipped.map((s) => `  ${s.what}: ${s.why}`).join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
