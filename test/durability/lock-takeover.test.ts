// A lock whose holder died is taken over at once (issue 33, point 7; docs/api.md, "Durable writes and
// backups"): a writer killed with SIGKILL anywhere in its file lock (holding it, releasing it, or between the
// lock directory and its owner record) leaves nothing that makes the first write after a restart answer LOCKED
// or wait for the 10 s stale time. The restart is a new process (fixtures/lock-cut.mjs `write`) that waits at
// most 2 s for a lock, so a wait for the stale time answers LOCKED.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
// Plain JavaScript on dist/ (built by vitest's global set-up).
const WRITER = path.join(here, 'fixtures', 'lock-cut.mjs');

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
});

async function workspaceRoot(): Promise<string> {
  const base = await makeTempDir('toolgate-takeover-');
  cleanup.push(() => fs.rm(base, { recursive: true, force: true }));
  const root = path.join(base, 'ws');
  await fs.mkdir(root);
  return root;
}

/**
 * Runs a writer until `ready(out)` holds for its output, then `delayMs` more, and kills it with SIGKILL;
 * resolves once it is gone. A writer that ends on its own first fails the test with its output.
 */
async function runAndKill(args: string[], ready: (out: string) => boolean, delayMs = 0): Promise<void> {
  const child = spawn(process.execPath, [WRITER, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (ready(out)) resolve();
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    void exited.then(() => reject(new Error(`the writer ended before it was killed: ${out.slice(-1500)}`)));
  });
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
}

/** The restart: a new process writes each file once; its answers by file, `success` or the error code. */
async function restartAndWrite(root: string, files: string[]): Promise<Record<string, string>> {
  const child = spawn(process.execPath, [WRITER, root, 'write', files.join(',')], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, out.slice(-1500)).toBe(0);
  const answers: Record<string, string> = {};
  for (const m of out.matchAll(/^@@ANSWER (\S+) (\S+) (\S+)$/gm)) answers[m[1] as string] = m[2] === 'success' ? 'success' : (m[3] as string);
  return answers;
}

/** What is in the state directory's locks/ (each entry with what it holds), for the figures. */
async function locksLeft(root: string): Promise<string[]> {
  const dir = path.join(root, '.toolgate', 'locks');
  const left: string[] = [];
  for (const name of (await fs.readdir(dir).catch(() => [] as string[])).sort()) {
    const inside = await fs.readdir(path.join(dir, name)).catch(() => [] as string[]);
    left.push(`${name.replace(/^([0-9a-f]{8})[0-9a-f]{24}/, '$1…').replace(/=.*/, '=…')} [${inside.length === 0 ? 'no owner record' : 'owner record'}]`);
  }
  return left;
}

describe('a lock whose holder was killed with -9', () => {
  it('killed while releasing, after its lock directory was moved away: the first write succeeds, the leftover is swept', async () => {
    const root = await workspaceRoot();
    await runAndKill([root, 'release', 'killed.txt'], (out) => out.includes('@@CUT'));
    expect(await locksLeft(root)).toEqual([expect.stringMatching(/^[0-9a-f]{8}…\.lock\.gone\d+=… \[owner record\]$/)]);
    expect(await restartAndWrite(root, ['killed.txt'])).toEqual({ 'killed.txt': 'success' });
    expect(await fs.readFile(path.join(root, 'killed.txt'), 'utf8')).toBe('written after the restart\n');
    expect(await locksLeft(root)).toEqual([]);
  });

  it('killed while releasing, before its lock directory was moved away: the first write takes it over', async () => {
    const root = await workspaceRoot();
    await runAndKill([root, 'rename', 'killed.txt'], (out) => out.includes('@@CUT'));
    expect(await locksLeft(root)).toEqual([expect.stringMatching(/^[0-9a-f]{8}…\.lock \[owner record\]$/)]);
    expect(await restartAndWrite(root, ['killed.txt'])).toEqual({ 'killed.txt': 'success' });
    expect(await locksLeft(root)).toEqual([]);
  });

  it('killed between its lock directory and the owner record: the first write after a restart takes it over', async () => {
    const root = await workspaceRoot();
    await runAndKill([root, 'make', 'killed.txt'], (out) => out.includes('@@CUT'));
    expect(await locksLeft(root)).toEqual([expect.stringMatching(/^[0-9a-f]{8}…\.lock \[no owner record\]$/)]);
    expect(await restartAndWrite(root, ['killed.txt'])).toEqual({ 'killed.txt': 'success' });
    expect(await locksLeft(root)).toEqual([]);
  });

  it('a lock directory without an owner record left by an earlier version (its release cut) is taken over after a restart', async () => {
    const root = await workspaceRoot();
    // What a release that removed the owner record before the directory left when killed between the two.
    await runAndKill([root, 'rename', 'killed.txt'], (out) => out.includes('@@CUT'));
    const locks = path.join(root, '.toolgate', 'locks');
    const [lock] = await fs.readdir(locks);
    for (const record of await fs.readdir(path.join(locks, lock as string))) await fs.rmdir(path.join(locks, lock as string, record));
    expect(await locksLeft(root)).toEqual([expect.stringMatching(/\[no owner record\]$/)]);
    expect(await restartAndWrite(root, ['killed.txt'])).toEqual({ 'killed.txt': 'success' });
  });

  it('kill -9 at random moments among writes: after each, the first write of every file succeeds, no LOCKED', async () => {
    const ROUNDS = 6;
    const BUDGET_MS = 60_000;
    const started = Date.now();
    const files = ['a.txt', 'b.txt', 'c.txt'];
    const root = await workspaceRoot();
    const log: string[] = [];
    let locked = 0;
    let left = 0;
    for (let round = 1; round <= ROUNDS && (round <= 3 || Date.now() - started < BUDGET_MS); round++) {
      // Killed after 1 to 6 reported writes and a random moment, which mostly falls inside the next write.
      const after = 1 + Math.floor(Math.random() * 6);
      const delayMs = Math.floor(Math.random() * 15);
      const reported = (out: string) => Math.max(0, ...[...out.matchAll(/@@DONE (\d+)\n/g)].map((m) => Number(m[1])));
      await runAndKill([root, 'loop', files.join(',')], (out) => reported(out) >= after, delayMs);
      const found = await locksLeft(root);
      left += found.length;
      const answers = await restartAndWrite(root, files);
      locked += Object.values(answers).filter((a) => a === 'LOCKED').length;
      log.push(`round ${round}: killed ${delayMs} ms after write ${after}; left in locks/: ${found.join(', ') || 'nothing'}; then ${JSON.stringify(answers)}`);
      expect(answers, log.join('\n')).toEqual(Object.fromEntries(files.map((f) => [f, 'success'])));
    }
    console.log(`lock takeover after kill -9: ${locked} LOCKED answers; ${left} entries left in locks/ by the kills\n${log.join('\n')}`);
    expect(locked).toBe(0);
  }, 150_000);
});
