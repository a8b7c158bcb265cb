// Crash safety (docs/api.md): a writer process killed with SIGKILL at random moments leaves every file with
// exactly one of its known contents, no temp file where tools (or users) can see it, and a fresh start
// sweeps the temp files of its instance.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Envelope } from '../../src/envelope.js';
import { findTool } from '../../src/tools/registry.js';
import { TEMP_MARKER } from '../../src/workspace/sandbox.js';
import { makeTempDir } from '../helpers.js';
import { crashFiles, sha256, type CrashFile } from './fixtures/crash-contents.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
// Plain JavaScript on dist/ (built by vitest's global set-up): a writer starts without a TypeScript loader.
const WRITER = path.join(here, 'fixtures', 'crash-writer.mjs');
const ROUNDS = 20;
/** Start-up of a child is most of a round; stop early rather than run long on a slow machine (each round kills among reported writes, so five or more already prove the point). */
const BUDGET_MS = 30_000;

let base: string;
let root: string;
let stateDir: string;
let files: CrashFile[];
let known: Map<string, Map<string, string>>; // file -> sha256 -> 'old' | 'new'

/** Every file below `dir` (relative), not entering `skip`. */
async function walk(dir: string, skip: string | null, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${entry.name}` : entry.name;
    if (r === skip) continue;
    out.push(r);
    if (entry.isDirectory()) out.push(...(await walk(dir, skip, r)));
  }
  return out;
}

interface Writer {
  id: string;
  /** Resolves once the app is up and the writer waits for its go. */
  ready: Promise<void>;
  /**
   * Starts the writes, waits until `afterChanges` of them are done (the writer reports each), then `delayMs`
   * more, and kills the writer with SIGKILL; resolves with the changes completed. Counting reported changes
   * rather than time makes the kills land among writes however slow the machine is.
   */
  runAndKill(afterChanges: number, delayMs: number): Promise<number>;
  /** Kills a writer that never got its go. */
  discard(): Promise<void>;
}

/** Spawns a writer with its own instance id; it boots and then waits, so the next round's start-up overlaps this one. */
function spawnWriter(id: string): Writer {
  const child: ChildProcess = spawn(process.execPath, [WRITER, root, id], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let completed = 0;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  let progressed = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('@@READY')) resolve();
      for (const m of out.matchAll(/@@DONE (\d+)\n/g)) completed = Math.max(completed, Number(m[1]));
      progressed();
    });
    void exited.then(({ code }) => reject(new Error(`writer ${id} exited before it was killed (${code}): ${err.slice(-1500)}`)));
  });
  ready.catch(() => undefined);
  const kill = async () => {
    child.kill('SIGKILL');
    return exited;
  };
  return {
    id,
    ready,
    async runAndKill(afterChanges, delayMs) {
      child.stdin!.end('go\n');
      // A writer that dies first is reported below (its signal is not SIGKILL).
      const reached = new Promise<void>((resolve) => {
        progressed = () => {
          if (completed >= afterChanges) resolve();
        };
        progressed();
      });
      await Promise.race([reached, exited]);
      await new Promise((r) => setTimeout(r, delayMs));
      const { signal } = await kill();
      expect(signal, `writer ${id} died on its own: ${err.slice(-1500)}`).toBe('SIGKILL');
      return completed;
    },
    async discard() {
      await kill();
    },
  };
}

async function expectKnownContents(label: string): Promise<Record<string, string>> {
  const states: Record<string, string> = {};
  for (const f of files) {
    const content = await fs.readFile(path.join(root, f.name));
    const state = known.get(f.name)!.get(sha256(content));
    expect(state, `${label}: ${f.name} holds neither known content (${content.length} bytes)`).toBeDefined();
    states[f.name] = state!;
  }
  return states;
}

async function expectNoVisibleTemp(label: string): Promise<void> {
  const visible = (await walk(root, path.relative(root, stateDir))).filter((r) => r.includes(TEMP_MARKER));
  expect(visible, `${label}: temp files outside the state directory`).toEqual([]);
}

/** A fresh app (the killed writer's instance id) sweeps its temp dir; its tools show no temp file and the files whole. */
async function expectCleanFreshStart(label: string, instance: string): Promise<void> {
  const app: FastifyInstance = await buildApp(loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_INSTANCE_ID: instance, TOOLGATE_RATE_LIMIT: '0', TOOLGATE_AUDIT_STDOUT: 'false' }), { logger: false });
  try {
    const tmp = path.join(stateDir, 'tmp', instance);
    const left = await fs.readdir(tmp).catch(() => [] as string[]);
    expect(left, `${label}: the start-up sweep left temp files`).toEqual([]);
    const call = async (tool: string, body: object) => (await app.inject({ method: 'POST', url: `/v1/tools/${tool}`, payload: body })).json() as Envelope;
    if (findTool('list_directory')) {
      const res = await call('list_directory', { path: '.', depth: 5, include_hidden: true });
      expect(res.status, JSON.stringify(res.error)).toBe('success');
      const paths = (res.data as { entries: { path: string }[] }).entries.map((e) => e.path);
      expect(paths).toContain('a.txt');
      expect(paths.filter((p) => p.includes(TEMP_MARKER) || p.startsWith('.toolgate'))).toEqual([]);
    }
    if (findTool('search_files')) {
      for (const query of [TEMP_MARKER, 'toolgate-tmp']) {
        const res = await call('search_files', { path: '.', query, mode: 'name', respect_gitignore: false });
        expect(res.status, JSON.stringify(res.error)).not.toBe('error');
        expect(JSON.stringify(res.data)).not.toContain(TEMP_MARKER);
      }
    }
    const read = await call('read_file', { path: 'dir/b.txt', start_line: 1, end_line: 1 });
    expect(read.status).toBe('success');
  } finally {
    await app.close();
  }
}

beforeAll(async () => {
  base = await makeTempDir('toolgate-crash-');
  root = path.join(base, 'ws');
  stateDir = path.join(root, '.toolgate');
  files = crashFiles();
  known = new Map(files.map((f) => [f.name, new Map([[sha256(f.old), 'old'], [sha256(f.new), 'new']])]));
  for (const f of files) {
    await fs.mkdir(path.dirname(path.join(root, f.name)), { recursive: true });
    await fs.writeFile(path.join(root, f.name), f.old);
  }
});

afterAll(async () => {
  if (base) await fs.rm(base, { recursive: true, force: true });
});

describe('crash safety', () => {
  it('the known contents differ in size, so no torn write can pass for one of them', () => {
    for (const f of files) expect(Buffer.byteLength(f.old)).not.toBe(Buffer.byteLength(f.new));
  });

  it(`SIGKILL of a writer at random moments (${ROUNDS} rounds) leaves only whole old or new contents`, async () => {
    const started = Date.now();
    const log: string[] = [];
    let totalCompleted = 0;
    let flips = 0;
    let previous = await expectKnownContents('initial');
    let rounds = 0;
    let next: Writer | null = spawnWriter('crash-writer-1');
    try {
      // Rounds are bounded by count and by a budget (start-up of the child dominates; this is not a timing assertion).
      while (next) {
        const writer: Writer = next;
        next = null;
        const t0 = Date.now();
        await writer.ready;
        const waitedMs = Date.now() - t0;
        rounds++;
        if (rounds < ROUNDS && (rounds < 5 || Date.now() - started < BUDGET_MS)) next = spawnWriter(`crash-writer-${rounds + 1}`);
        // Killed after 0 to 3 reported changes (at least one in the first round, so some change surely
        // completes) plus a random moment, which mostly falls inside the next write.
        const afterChanges = rounds === 1 ? 1 + Math.floor(Math.random() * 3) : Math.floor(Math.random() * 4);
        const delayMs = Math.floor(Math.random() * 200);
        const completed = await writer.runAndKill(afterChanges, delayMs);
        totalCompleted += completed;
        const label = `round ${rounds} (killed ${delayMs} ms after change ${afterChanges}, ${completed} changes done)`;
        log.push(label);
        const states = await expectKnownContents(label);
        for (const f of files) if (states[f.name] !== previous[f.name]) flips++;
        previous = states;
        await expectNoVisibleTemp(label);
        const leftover = (await fs.readdir(path.join(stateDir, 'tmp', writer.id)).catch(() => [] as string[])).length;
        log.push(`  start-up wait ${waitedMs} ms; ${leftover} temp file(s) left by the kill`);
        await expectCleanFreshStart(label, writer.id);
      }
    } finally {
      await (next as Writer | null)?.discard();
    }
    // The kills did land among writes: files changed state across rounds.
    expect(totalCompleted, log.join('\n')).toBeGreaterThan(0);
    expect(flips, log.join('\n')).toBeGreaterThan(0);
  }, 240_000);
});
