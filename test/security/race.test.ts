// Race suite (docs/api.md): while a separate process keeps swapping workspace entries for symlinks that lead out
// (to a directory outside, the state directory, another project), every path-taking tool is called on paths
// below them over HTTP. Nothing outside may be created, changed, removed or shown, and no answer may be a 5xx.
// TOOLGATE_RACE_MS sets how long each tool family races (default 3000 ms).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyAuditFile } from '../../src/ops/audit-verify.js';
import { TEMP_MARKER } from '../../src/workspace/sandbox.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { makeToken } from '../ops/ops-helpers.js';

const FAMILY_MS = Number(process.env.TOOLGATE_RACE_MS ?? 3000);
if (!(FAMILY_MS > 0)) throw new Error(`TOOLGATE_RACE_MS=${process.env.TOOLGATE_RACE_MS ?? ''}: a number of milliseconds above 0`);
/** Calls in flight at once: the server interleaves them, which widens every check-to-use window. */
const WORKERS = 6;
const CALL_TIMEOUT_MS = 20_000;
const SWAPPER = fileURLToPath(new URL('./race-swapper.mjs', import.meta.url));
const EXCHANGER = fileURLToPath(new URL('./race-swapper.py', import.meta.url));
const INSTANCE = 'race';
/** A key of every audit line and of no envelope: audit text in an answer means the audit log was read. */
const AUDIT_MARK = 'sha256_before';
const onlyA = makeToken('only-a', { projects: ['a'] });

/** Fixture of one run: paths, markers, the app and its address, the calls made (one audit line each). */
interface Run {
  base: string;
  projects: string;
  a: string;
  b: string;
  state: string;
  outside: string;
  markers: { outside: string; projectB: string; state: string };
  auditName: string;
  t: TestApp;
  url: string;
  calls: number;
}

/**
 * Whether python3 can exchange two names atomically here (renameat2 RENAME_EXCHANGE). Where it cannot, the
 * entries meant for it are flipped with plain renames too, so the suite still runs everything.
 */
const canExchange = ((): boolean => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-race-probe-'));
  try {
    return spawnSync('python3', [EXCHANGER, '--probe', dir], { stdio: 'ignore', timeout: 10_000 }).status === 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})();

/** An entry the swapper flips: a directory (`d` <-> symlink) or a leaf file (`d/f` <-> symlink). */
interface Entry {
  id: string;
  kind: 'dir' | 'leaf';
  /** Plain renames (`d` is missing between the states) or an atomic exchange (never missing). */
  swap: 'rename' | 'exchange';
  /** What the symlink leads to (the race's target). */
  target: 'outside' | 'state' | 'audit' | 'projectB';
  /** The directory tools are called on, and the files below it (workspace-relative). */
  dir: string;
  files: string[];
}

/** Every target as a swapped parent directory and as a swapped leaf, once per way of swapping. */
function entries(auditName: string): Entry[] {
  const shapes: Omit<Entry, 'swap' | 'dir' | 'files'>[] = [
    { id: 'dO', kind: 'dir', target: 'outside' },
    { id: 'dS', kind: 'dir', target: 'state' },
    { id: 'dA', kind: 'dir', target: 'audit' },
    { id: 'dB', kind: 'dir', target: 'projectB' },
    { id: 'lO', kind: 'leaf', target: 'outside' },
    { id: 'lS', kind: 'leaf', target: 'state' },
    { id: 'lA', kind: 'leaf', target: 'audit' },
    { id: 'lB', kind: 'leaf', target: 'projectB' },
  ];
  // Below a directory, the names its target holds too, so that a check passes on the real entry.
  const names = { outside: ['f', 'g', 's/h'], projectB: ['f', 'g', 's/h'], state: ['f', `audit/${auditName}`], audit: ['f', auditName] };
  return (['rename', 'exchange'] as const).flatMap((swap) =>
    shapes.map((s) => {
      const dir = swap === 'rename' ? s.id : `${s.id}x`;
      return { ...s, id: dir, swap, dir, files: s.kind === 'leaf' ? [`${dir}/f`] : names[s.target].map((n) => `${dir}/${n}`) };
    }),
  );
}

/** Where each entry's symlink points; relative targets as a hostile agent would plant them. */
function linkTarget(run: Run, e: Entry): string {
  if (e.kind === 'dir') return { outside: run.outside, state: '.toolgate', audit: '.toolgate/audit', projectB: '../b/d' }[e.target];
  return { outside: path.join(run.outside, 'f'), state: '../.toolgate/f', audit: `../.toolgate/audit/${run.auditName}`, projectB: '../../b/d/f' }[e.target];
}

const INSIDE_TEXT = (name: string) => `inside ${name}\nline two\n`;

async function put(file: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, text);
}

// ---------------------------------------------------------------- calls ----

interface Answer {
  tool: string;
  entry: number;
  from: number;
  to: number;
  status: number;
  code: string | null;
  raw: string;
  data: Record<string, unknown> | null;
}

const clockBase = process.hrtime.bigint();
const clock = () => Number(process.hrtime.bigint() - clockBase);

async function call(run: Run, tool: string, body: Record<string, unknown>, entry = -1): Promise<Answer> {
  const from = clock();
  run.calls++;
  let status = 0;
  let raw: string;
  try {
    const res = await fetch(`${run.url}/v1/projects/a/tools/${tool}`, {
      method: 'POST',
      headers: { ...onlyA.header, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    status = res.status;
    raw = await res.text();
  } catch (err) {
    // No answer at all (a hang or a dropped connection) counts with the 5xx answers.
    raw = String(err);
  }
  let data: Record<string, unknown> | null = null;
  let code: string | null = null;
  try {
    const env = JSON.parse(raw) as { data: Record<string, unknown> | null; error?: { code: string } };
    data = env.data;
    code = env.error?.code ?? null;
  } catch {
    status = status < 500 ? 599 : status; // not an envelope
  }
  return { tool, entry, from, to: clock(), status, code, raw, data };
}

// ------------------------------------------------------------- families ----

/** What one step of a client worker does: calls on entry `e` (index `k`), the `i`-th step overall. */
type Op = (run: Run, e: Entry, k: number, i: number, pool: string[]) => Promise<Answer[]>;

const pick = <T>(xs: T[], i: number): T => xs[i % xs.length] as T;
const one = (tool: string, body: (e: Entry, i: number) => Record<string, unknown>): Op => async (run, e, k, i) => [await call(run, tool, body(e, i), k)];

const FAMILIES: Record<string, Op[]> = {
  // Content that leaves the sandbox through a read: whole files, dry-run diffs, search previews.
  read: [
    one('read_file', (e, i) => ({ path: pick(e.files, i) })),
    one('file_info', (e, i) => ({ path: pick(e.files, i) })),
    one('replace_in_file', (e, i) => ({ path: pick(e.files, i), old: '[\\s\\S]+', new: '-', regex: true, dry_run: true })),
    one('search_files', (e) => ({ path: e.dir, query: '.', regex: true, mode: 'both' })),
    one('search_files', (e, i) => ({ path: pick(e.files, i), query: '.', regex: true, mode: 'content' })),
  ],
  // Names and sizes that leave the sandbox through listings and walks.
  list: [
    one('list_directory', (e) => ({ path: e.dir, depth: 3, include_hidden: true })),
    one('find_large_files', (e) => ({ path: e.dir, min_size_bytes: 0 })),
    one('disk_usage', (e) => ({ path: e.dir })),
    one('list_backups', (e, i) => ({ path: pick(e.files, i) })),
    one('file_info', (e) => ({ path: e.dir })),
  ],
  // Bytes written through a swapped parent or leaf: new files, overwrites, appends, edits, directories.
  write: [
    one('write_file', (e, i) => ({ path: `${e.dir}/n${i}`, content: `new ${i}\nline two\n` })),
    one('write_file', (e, i) => ({ path: pick(e.files, i), content: `written ${i}\nline two\n` })),
    one('append_to_file', (e, i) => ({ path: pick(e.files, i), content: `appended ${i}\n` })),
    one('replace_in_file', (e, i) => ({ path: pick(e.files, i), old: '[\\s\\S]+', new: `replaced ${i}\nline two\n`, regex: true })),
    one('edit_file', (e, i) => ({ path: pick(e.files, i), old_text: 'line two', new_text: 'line two.' })),
    one('create_directory', (e, i) => ({ path: `${e.dir}/c${i}` })),
  ],
  // Files pulled out of (or pushed into) a swapped directory: deletes into backups, moves both ways, restores.
  move: [
    async (run, e, k, i, pool) => {
      const a = await call(run, 'delete_file', { path: pick(e.files, i) }, k);
      const id = a.data?.backup_id;
      if (typeof id === 'string') pool.push(id);
      return [a];
    },
    one('move_file', (e, i) => ({ path: pick(e.files, i), destination: `out/m${i}` })),
    async (run, e, k, i) => {
      // A plain workspace file moved onto a path below the swapped entry.
      const w = await call(run, 'write_file', { path: `out/src${i}`, content: `to move ${i}\nline two\n` });
      return [w, await call(run, 'move_file', { path: `out/src${i}`, destination: pick(e.files, i), overwrite: true }, k)];
    },
    one('move_file', (e, i) => ({ path: `${e.dir}/s`, destination: `out/ms${i}` })),
    one('list_backups', (e, i) => ({ path: pick(e.files, i) })),
    async (run, _e, _k, i, pool) => {
      if (pool.length === 0) return [];
      // A backup's path names the entry it came from; which one is known from the id only, so -1.
      return [await call(run, 'restore_backup', { backup_id: pick(pool, i) })];
    },
  ],
};

// ------------------------------------------------------------ snapshots ----

/** Path -> description (type, size, sha256, mode, mtime; link target) of everything below `root`. */
async function snapshot(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string): Promise<void> => {
    for (const name of await fs.readdir(dir)) {
      const abs = path.join(dir, name);
      const rel = path.relative(root, abs);
      const st = await fs.lstat(abs);
      if (st.isSymbolicLink()) out.set(rel, `link ${await fs.readlink(abs)}`);
      else if (st.isDirectory()) {
        out.set(rel, `dir ${st.mode} ${st.mtimeMs}`);
        await walk(abs);
      } else {
        const sha = createHash('sha256')
          .update(await fs.readFile(abs))
          .digest('hex');
        out.set(rel, `file ${st.size} ${sha} ${st.mode} ${st.mtimeMs}`);
      }
    }
  };
  await walk(root);
  return out;
}

function diff(before: Map<string, string>, after: Map<string, string>): { created: string[]; changed: string[]; removed: string[] } {
  return {
    created: [...after.keys()].filter((k) => !before.has(k)),
    changed: [...after.keys()].filter((k) => before.has(k) && before.get(k) !== after.get(k)),
    removed: [...before.keys()].filter((k) => !after.has(k)),
  };
}

/** Names the service itself writes in a state directory (audit, backups, locks, temp files, checkpoint records); nothing else may appear. */
function isServiceStatePath(rel: string): boolean {
  const date = '\\d{4}-\\d{2}-\\d{2}';
  return [
    /^(audit|backups|locks|tmp)$/,
    new RegExp(`^audit/${INSTANCE}-${date}\\.jsonl$`),
    /^backups\/[0-9a-f]{16}$/,
    // A backup, named with its record, and the file key's origin (src/workspace/backups.ts).
    /^backups\/[0-9a-f]{16}\/[0-9a-f]{16}-[0-9a-z]{8,}-[0-9a-f]{6}\.[a-z][a-z0-9_:]*\.[0-7]{1,6}\.([0-9a-f]{64}|-)\.([A-Za-z0-9_-]{2,}|-)\.[kr]\.kept$/,
    /^backups\/[0-9a-f]{16}\/origin$/,
    // A file lock, its holder's record inside.
    /^locks\/[0-9a-f]{32}\.lock$/,
    new RegExp(`^tmp/${INSTANCE}$`),
    // The temp directory's owner record (a regular file; "state symlinks" would catch a link).
    new RegExp(`^tmp/${INSTANCE}/\\.owner$`),
    // The checkpoint records (docs/api.md, "Turns, checkpoints and rewind"): this instance's segments and the retention note.
    /^checkpoints(\/log)?$/,
    new RegExp(`^checkpoints/log/[0-9a-z]{9}-${INSTANCE}-[0-9a-f]{6}\\.jsonl$`),
    /^checkpoints\/pruned\.json$/,
  ].some((re) => re.test(rel)) || (rel.startsWith(`tmp/${INSTANCE}/`) && path.basename(rel).includes(TEMP_MARKER));
}

/** Every regular file below `root` (except the `skip` directory) whose name or content holds a marker. */
async function filesWithMarkers(root: string, markers: string[], skip?: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of await fs.readdir(dir)) {
      const abs = path.join(dir, name);
      if (abs === skip) continue;
      const st = await fs.lstat(abs);
      if (st.isDirectory()) await walk(abs);
      else if (st.isFile()) {
        const text = name + (await fs.readFile(abs, 'latin1'));
        if (markers.some((m) => text.includes(m))) found.push(path.relative(root, abs));
      }
    }
  };
  await walk(root);
  return found;
}

// ---------------------------------------------------------------- setup ----

let run: Run | null = null;
/** Undone in afterEach, last first, even when beforeEach or the test failed half-way. */
let cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  const base = await makeTempDir('toolgate-race-');
  cleanups.push(() => fs.rm(base, { recursive: true, force: true }));
  const projects = path.join(base, 'projects');
  const a = path.join(projects, 'a');
  const b = path.join(projects, 'b');
  const outside = path.join(base, 'outside');
  const hex = randomBytes(6).toString('hex');
  const markers = { outside: `OUTSIDE_SECRET_${hex}`, projectB: `PROJECTB_SECRET_${hex}`, state: `STATE_SECRET_${hex}` };
  // Outside and in project B, the same names as below the real entries, so a check passes on the real one.
  for (const [dir, mark] of [
    [outside, markers.outside],
    [path.join(b, 'd'), markers.projectB],
  ] as const) {
    for (const name of ['f', 'g', 's/h']) await put(path.join(dir, name), `${mark} ${name}\nline two\n`);
    await put(path.join(dir, `${mark}.name`), `${mark}\n`);
  }
  await put(path.join(a, 'hello.txt'), 'hello\n');
  await fs.mkdir(path.join(a, 'out'));
  await fs.mkdir(path.join(a, 'park'));
  const t = await makeApp({ TOOLGATE_PROJECTS_ROOT: projects, TOOLGATE_REQUIRE_VERSION: 'never', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_INSTANCE_ID: INSTANCE }, { tokens: [onlyA.entry] });
  cleanups.push(() => t.close());
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  run = { base, projects, a, b, state: path.join(a, '.toolgate'), outside, markers, auditName: '', t, url: address, calls: 0 };
  // The first call opens project a, creating its state directory and today's audit file.
  expect((await call(run, 'read_file', { path: 'hello.txt' })).status).toBe(200);
  await t.app.toolgate.audit.flush();
  const audits = await fs.readdir(path.join(run.state, 'audit'));
  expect(audits).toHaveLength(1);
  run.auditName = audits[0] as string;
  // Files of no service purpose in the state directory: readable only through an escape.
  await put(path.join(run.state, 'f'), `${markers.state} planted\nline two\n`);
  await put(path.join(run.state, 'audit', `${markers.state}.planted`), `${markers.state}\n`);
  for (const e of entries(run.auditName)) {
    for (const file of e.files) await put(path.join(a, file), INSIDE_TEXT(file));
  }
});

afterEach(async () => {
  const todo = cleanups.reverse();
  cleanups = [];
  run = null;
  for (const undo of todo) await undo();
});

// ----------------------------------------------------------------- race ----

interface SwapperResult {
  swaps: number;
  repairs: number;
  errors: number;
  /** Per entry: [from, to] of each time its symlink was in place, in order. */
  intervals: number[][];
}

/** Starts one swapper process on some entries; resolves once it swaps, with a promise of its counts when it stops. */
async function startSwapper(r: Run, list: Entry[], indexes: number[], exchange: boolean): Promise<{ done: Promise<SwapperResult> }> {
  const name = exchange ? 'exchange' : 'rename';
  const configFile = path.join(r.base, `swapper-${name}.json`);
  const intervalsFile = path.join(r.base, `intervals-${name}.bin`);
  const pairs = indexes.map((k) => {
    const e = list[k] as Entry;
    const live = path.join(r.a, e.kind === 'dir' ? e.dir : (e.files[0] as string));
    return {
      kind: e.kind,
      live,
      realPark: path.join(r.a, 'park', `${e.id}.real`),
      linkPark: `${live}_alt`,
      linkTarget: linkTarget(r, e),
      files: e.kind === 'dir' ? e.files.map((f) => path.relative(e.dir, f)) : undefined,
    };
  });
  await fs.writeFile(configFile, JSON.stringify({ durationMs: FAMILY_MS, clockBase: clockBase.toString(), intervalsFile, pairs }));
  const child = exchange ? spawn('python3', [EXCHANGER, configFile], { stdio: ['ignore', 'pipe', 'inherit'] }) : spawn(process.execPath, [SWAPPER, configFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  // Busy swappers would starve the server on a small machine; niced, they take the CPU it leaves.
  if (child.pid !== undefined) os.setPriority(child.pid, 10);
  // Stops at its own deadline; killed here too when the test ends first (a failure, a timeout).
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('ready\n')) resolve();
    });
    child.on('error', reject);
    child.on('exit', () => reject(new Error(`${name} swapper exited before it was ready: ${out}`)));
  });
  const done = new Promise<SwapperResult>((resolve, reject) => {
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${name} swapper exited with ${String(code)}: ${out}`));
      void fs.readFile(intervalsFile).then((buf) => {
        const flat = new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8);
        const intervals: number[][] = list.map(() => []);
        for (let i = 0; i < flat.length; i += 3) intervals[indexes[flat[i] as number] as number]?.push(flat[i + 1] as number, flat[i + 2] as number);
        const counts = JSON.parse(out.split('\n').filter(Boolean).at(-1) as string) as Omit<SwapperResult, 'intervals'>;
        resolve({ ...counts, intervals });
      }, reject);
    });
  });
  await ready;
  return { done };
}

/** Both swappers (plain renames in Node, exchanges in python3 where it can); their counts merged. */
async function startSwappers(r: Run, list: Entry[]): Promise<{ done: Promise<SwapperResult> }> {
  const byRename = list.flatMap((e, k) => (e.swap === 'rename' || !canExchange ? [k] : []));
  const byExchange = list.flatMap((e, k) => (e.swap === 'exchange' && canExchange ? [k] : []));
  const started = await Promise.all([startSwapper(r, list, byRename, false), ...(byExchange.length > 0 ? [startSwapper(r, list, byExchange, true)] : [])]);
  const done = Promise.all(started.map((s) => s.done)).then((all) => ({
    swaps: all.reduce((n, x) => n + x.swaps, 0),
    repairs: all.reduce((n, x) => n + x.repairs, 0),
    errors: all.reduce((n, x) => n + x.errors, 0),
    intervals: list.map((_, k) => all.flatMap((x) => x.intervals[k] ?? [])),
  }));
  return { done };
}

/** True when one of the (sorted, flat [from, to, …]) intervals overlaps [from, to]. */
function overlaps(intervals: number[], from: number, to: number): boolean {
  let lo = 0;
  let hi = intervals.length / 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((intervals[mid * 2 + 1] as number) < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < intervals.length / 2 && (intervals[lo * 2] as number) <= to;
}

interface Figures {
  family: string;
  calls: number;
  /** Calls on a swapped entry during which its symlink was in place at least once. */
  raced: number;
  /** Answers with an error code (ACCESS_DENIED, NOT_FOUND, … are fine under a race). */
  refused: number;
  swaps: number;
  /** How the 'exchange' entries were flipped. */
  exchangeBy: string;
  swapperRepairs: number;
  swapperErrors: number;
  refusals: Record<string, number>;
  escapes: Record<string, number>;
  /** A few examples per escape kind, to say what broke. */
  examples: Record<string, string[]>;
}

async function race(r: Run, family: string): Promise<Figures> {
  const list = entries(r.auditName);
  const before = { outside: await snapshot(r.outside), b: await snapshot(r.b), state: await snapshot(r.state) };
  const callsBefore = r.calls;
  const { done } = await startSwappers(r, list);
  let running = true;
  const stopped = done.finally(() => (running = false));
  stopped.catch(() => undefined); // awaited below, after the workers stop; no unhandled rejection meanwhile
  const answers: Answer[] = [];
  const ops = FAMILIES[family] as Op[];
  const pool: string[] = [];
  let step = 0;
  const worker = async (): Promise<void> => {
    while (running) {
      const i = step++;
      const k = i % list.length;
      const op = ops[Math.floor(i / list.length) % ops.length] as Op;
      answers.push(...(await op(r, list[k] as Entry, k, i, pool)));
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  const swapped = await stopped;
  await r.t.app.toolgate.audit.flush();

  const escapes: Record<string, number> = {};
  const examples: Record<string, string[]> = {};
  const escape = (kind: string, what: string[]): void => {
    escapes[kind] = (escapes[kind] ?? 0) + what.length;
    if (what.length > 0) examples[kind] = [...(examples[kind] ?? []), ...what].slice(0, 5);
  };
  // Outside and project b: not one entry created, changed (content, size, mode, mtime) or removed.
  for (const [kind, d] of [
    ['outside', diff(before.outside, await snapshot(r.outside))],
    ['projectB', diff(before.b, await snapshot(r.b))],
  ] as const) {
    escape(`${kind} created`, d.created);
    escape(`${kind} changed`, d.changed);
    escape(`${kind} removed`, d.removed);
  }

  // The state directory: planted files untouched, nothing but the service's own names, no symlink, the
  // audit chain intact with one line per call, no outside bytes in backups.
  const stateAfter = await snapshot(r.state);
  const planted = [...before.state.keys()].filter((k) => !isServiceStatePath(k) && before.state.get(k)?.startsWith('file'));
  escape('state planted changed', planted.filter((k) => stateAfter.has(k) && stateAfter.get(k) !== before.state.get(k)));
  escape('state planted removed', planted.filter((k) => !stateAfter.has(k)));
  escape('state foreign entries', [...stateAfter.keys()].filter((k) => !before.state.has(k) && !isServiceStatePath(k)));
  escape('state symlinks', [...stateAfter].filter(([, v]) => v.startsWith('link')).map(([k]) => k));
  const auditFiles = [...stateAfter.keys()].filter((k) => /^audit\/.*\.jsonl$/.test(k) && isServiceStatePath(k));
  let auditLines = 0;
  const broken: string[] = [];
  for (const f of auditFiles) {
    const v = await verifyAuditFile(path.join(r.state, f)).catch((err: Error) => ({ ok: false, lines: 0, reason: err.message }));
    auditLines += v.lines;
    if (!v.ok) broken.push(`${f}: ${v.reason ?? ''}`);
  }
  escape('audit chain broken', broken);
  if (auditLines !== r.calls) escape('audit lines lost or added', [`${r.calls} calls, ${auditLines} lines`]);
  const { outside, projectB, state } = r.markers;
  escape('outside bytes pulled into state', await filesWithMarkers(path.join(r.state, 'backups'), [outside, projectB, state]).catch(() => []));
  escape('outside bytes pulled into workspace', await filesWithMarkers(r.a, [outside, projectB, state, AUDIT_MARK], r.state));

  // Answers: no marker, no audit text, no host path, no 5xx.
  const leak = (marker: string) => answers.filter((a) => a.raw.includes(marker)).map((a) => `${a.tool} ${list[a.entry]?.id ?? ''}`);
  escape('answers with outside bytes or names', leak(outside));
  escape('answers with project b bytes or names', leak(projectB));
  escape('answers with state bytes or names', leak(state));
  escape('answers with audit log text', leak(AUDIT_MARK));
  escape('answers with a host path', leak(r.base));
  const messageOf = (a: Answer) => (/"message":"([^"]{0,120})/.exec(a.raw)?.[1] ?? a.raw.slice(0, 120));
  escape('answers 5xx', answers.filter((a) => a.status >= 500).map((a) => `${a.tool} ${list[a.entry]?.id ?? ''} ${a.status} ${a.code ?? ''}: ${messageOf(a)}`));

  const refusals: Record<string, number> = {};
  for (const a of answers) if (a.code) refusals[a.code] = (refusals[a.code] ?? 0) + 1;
  const raced = answers.filter((a) => a.entry >= 0 && overlaps(swapped.intervals[a.entry] ?? [], a.from, a.to)).length;
  return {
    family,
    calls: r.calls - callsBefore,
    raced,
    refused: Object.values(refusals).reduce((n, x) => n + x, 0),
    swaps: swapped.swaps,
    exchangeBy: canExchange ? 'python3 renameat2(RENAME_EXCHANGE)' : 'node plain renames (python3 cannot exchange here)',
    swapperRepairs: swapped.repairs,
    swapperErrors: swapped.errors,
    refusals,
    escapes,
    examples,
  };
}

describe('sandbox under a racing symlink swapper (docs/api.md, "Sandbox")', () => {
  for (const family of Object.keys(FAMILIES)) {
    it(`${family} tools: nothing outside the workspace is touched or shown, no 5xx`, async () => {
      const figures = await race(run as Run, family);
      console.log(`race ${family}: ${JSON.stringify(figures)}`);
      // The race happened: the swapper swapped and calls ran while a symlink was in place.
      expect(figures.swaps).toBeGreaterThan(0);
      expect(figures.raced).toBeGreaterThan(0);
      const found = Object.fromEntries(Object.entries(figures.escapes).filter(([, n]) => n > 0));
      expect(found, JSON.stringify(figures.examples, null, 1)).toEqual({});
    }, FAMILY_MS * 3 + 30_000);
  }
});
