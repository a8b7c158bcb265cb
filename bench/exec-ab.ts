// `npx tsx bench/exec-ab.ts <refA> <refB>`: run_command's cost in two builds side by side (bench/README.md,
// "run_command"), rounds interleaved: a call of `true` over REST; one changed file in a project of many files
// (EXEC_BENCH_FILES, default 100,000); a command that removes a tree of 5,000 files and makes it again (a build's
// output); `npm ci` of a small project (express) from a cache inside it, offline; EXEC_BENCH_ONLY picks some.
// Each build serves its own copy of the project with TOOLGATE_EXEC=sandboxed, or the mode after a colon
// (`.:direct .:sandboxed` compares the two modes of the working tree). Prints medians in ms and B/A.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildToolgate } from './lib/build.js';
import { startToolgate, useToolgateMain, type Server } from './lib/servers.js';
import { median } from './lib/stats.js';

const [refA, refB] = process.argv.slice(2);
if (!refA || !refB) {
  console.error('usage: npx tsx bench/exec-ab.ts <refA> <refB>   (a ref "." is the working tree)');
  process.exit(2);
}
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const FILES = Number(process.env.EXEC_BENCH_FILES ?? 100_000);

interface Workload {
  name: string;
  calls: number;
  body: Record<string, unknown>;
  /** The project this workload runs on. */
  project: 'small' | 'large' | 'npm';
}

/** The npm project: its manifest, lock and a cache holding every package (under .cache, a bulk directory). */
const NPM_CACHE = '.cache/npm';

/** Removes a tree of 50 directories of 100 files (as a build or an install does) and makes it again. */
function treeCommand(dir: string): string {
  return `rm -rf ${dir} && mkdir ${dir} && cd ${dir} && seq 1 50 | xargs mkdir && for d in $(seq 1 50); do (cd $d && seq 1 100 | xargs touch); done`;
}

const ALL: Workload[] = [
  { name: 'true', calls: 20, body: { command: 'true' }, project: 'small' },
  { name: `one changed file, ${FILES} files`, calls: 5, body: { command: 'echo x >> changed.txt' }, project: 'large' },
  { name: 'tree: 5,000 files removed and made again', calls: 3, body: { command: treeCommand('gen') }, project: 'small' },
  { name: 'deps: node_modules of 5,000 files removed and made again', calls: 3, body: { command: treeCommand('node_modules') }, project: 'small' },
  { name: 'npm ci: express, offline from a cache in the project', calls: 3, body: { command: `npm ci --offline --cache /workspace/${NPM_CACHE} --no-audit --no-fund --loglevel=error`, timeout_s: 300 }, project: 'npm' },
];

/** EXEC_BENCH_ONLY=true,tree (name prefixes) runs those workloads alone. */
const only = process.env.EXEC_BENCH_ONLY?.split(',') ?? null;
const WORKLOADS = ALL.filter((w) => !only || only.some((o) => w.name.startsWith(o)));

async function makeProject(dir: string, files: number): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'changed.txt'), 'start\n');
  const perDir = 1000;
  for (let d = 0; d * perDir < files; d++) {
    const sub = path.join(dir, `d${d}`);
    await fs.mkdir(sub);
    await Promise.all(Array.from({ length: Math.min(perDir, files - d * perDir) }, (_, i) => fs.writeFile(path.join(sub, `f${i}.txt`), 'x')));
  }
}

interface Subject {
  ref: string;
  servers: Record<'small' | 'large' | 'npm', Server>;
}

/** A template of the npm project, its cache filled once from the registry on the host (the bench's only download). */
let npmTemplate: Promise<string> | null = null;
function makeNpmTemplate(base: string): Promise<string> {
  npmTemplate ??= (async () => {
    const dir = path.join(base, 'npm-template');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-app', version: '1.0.0', private: true, dependencies: { express: '4.21.2' } }));
    execFileSync('npm', ['install', '--cache', path.join(dir, NPM_CACHE), '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
    return dir;
  })();
  return npmTemplate;
}

async function start(spec: string, base: string, token: string, tokensFile: string): Promise<Subject> {
  const [ref = '.', mode = 'sandboxed'] = spec.split(':');
  const build = await buildToolgate(ref === '.' ? null : ref);
  useToolgateMain(build.main);
  const servers = {} as Record<'small' | 'large' | 'npm', Server>;
  const label = `${build.commit}-${mode}`;
  for (const kind of ['small', 'large', 'npm'] as const) {
    const root = path.join(base, `${label}-${kind}`);
    if (kind === 'large' && WORKLOADS.some((w) => w.project === 'large')) await makeProject(root, FILES);
    else if (kind === 'npm' && WORKLOADS.some((w) => w.project === 'npm')) await fs.cp(await makeNpmTemplate(base), root, { recursive: true });
    else await makeProject(root, 10);
    servers[kind] = await startToolgate(`${spec}-${kind}`, { root, tokensFile, instanceId: `exec-bench-${kind}`, logLevel: 'warn', extra: { TOOLGATE_EXEC: mode, TOOLGATE_EXEC_MIN_FREE_BYTES: '0', TOOLGATE_AUDIT_STDOUT: 'false' } }, path.join(base, `${label}-${kind}.log`), [], 120_000);
  }
  void token;
  return { ref: spec, servers };
}

async function call(server: Server, token: string, body: Record<string, unknown>): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`http://127.0.0.1:${server.port}/v1/tools/run_command`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const env = (await res.json()) as { status: string; text: string };
  if (env.status === 'error') throw new Error(`${server.name}: ${env.text}`);
  return performance.now() - t0;
}

const base = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-exec-bench-'));
const token = `tg_bench_${randomBytes(16).toString('hex')}`;
const { createHash } = await import('node:crypto');
const tokensFile = path.join(base, 'tokens.yaml');
await fs.writeFile(tokensFile, `- id: bench\n  sha256: ${createHash('sha256').update(token).digest('hex')}\n  projects: ['*']\n  risks: [read, write, execute]\n`);
const subjects = [await start(refA, base, token, tokensFile), await start(refB, base, token, tokensFile)];
const times = new Map<string, number[]>();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const w of WORKLOADS) {
      for (const s of round % 2 === 0 ? subjects : [...subjects].reverse()) {
        const key = `${s.ref}\0${w.name}`;
        const list = times.get(key) ?? [];
        for (let i = 0; i < w.calls; i++) list.push(await call(s.servers[w.project], token, w.body));
        times.set(key, list);
      }
    }
  }
  console.log(`| workload | ${refA} | ${refB} | B/A |\n| --- | ---: | ---: | ---: |`);
  for (const w of WORKLOADS) {
    const a = median(times.get(`${refA}\0${w.name}`) ?? []);
    const b = median(times.get(`${refB}\0${w.name}`) ?? []);
    console.log(`| ${w.name} | ${a.toFixed(1)} ms | ${b.toFixed(1)} ms | ${(b / a).toFixed(2)}× |`);
  }
} finally {
  for (const s of subjects) for (const srv of Object.values(s.servers)) await srv.stop();
  await fs.rm(base, { recursive: true, force: true });
}
