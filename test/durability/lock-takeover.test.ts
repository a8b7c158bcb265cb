// A lock whose holder died is taken over at once (issue 33, point 7; docs/api.md, "Durable writes and
// backups"): a writer killed with SIGKILL anywhere in its file lock (holding it, releasing it, or between the
// lock file's create and the write of its owner record) leaves nothing that makes the first write after a
// restart answer LOCKED or wait for the 10 s stale time. So do the locks older versions made (a directory with
// its record inside) and the leftovers of their releases. The restart is a new process (fixtures/lock-cut.mjs
// `write`) that waits at most 2 s for a lock, so a wait for the stale time answers LOCKED.
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

/** What is in the state directory's locks/ (each entry with its kind and whether it holds a record), for the figures. */
async function locksLeft(root: string): Promise<string[]> {
  const dir = path.join(root, '.toolgate', 'locks');
  const left: string[] = [];
  for (const name of (await fs.readdir(dir).catch(() => [] as string[])).sort()) {
    const entry = path.join(dir, name);
    const st = await fs.stat(entry);
    // A lock file's record ends with a newline; an older version's lock directory holds it as an entry.
    const recorded = st.isDirectory() ? (await fs.readdir(entry)).length > 0 : (await fs.readFile(entry, 'utf8')).endsWith('\n');
    left.push(`${name.replace(/^([0-9a-f]{8})[0-9a-f]{24}/, '$1…').replace(/=.*/, '=…')} ${st.isDirectory() ? 'dir' : 'file'} [${recorded ? 'owner record' : 'no owner record'}]`);
  }
  return left;
}

/** Kills a writer just before its release's unlink, leaving its lock; the lock's path and the killed writer's record. */
async function killedHolding(root: string, file: string): Promise<{ lock: string; record: string }> {
  await runAndKill([root, 'unlink', file], (out) => out.includes('@@CUT'));
  const locks = path.join(root, '.toolgate', 'locks');
  const [name] = await fs.readdir(locks);
  const lock = path.join(locks, name as string);
  return { lock, record: (await fs.readFile(lock, 'utf8')).trimEnd() };
}

describe('a lock whose holder was killed with -9', () => {
  it('killed while releasing, before the unlink of its lock: the first write takes it over', async () => {
    const root = await workspaceRoot();
    await killedHolding(root, 'killed.txt');
    expect(await locksLeft(root)).toEqual([expect.stringMatching(/^[0-9a-f]{8}…\.lock file \[owner record\]$/)]);
    expect(await restartAndWrite(root, ['killed.txt'])).toEqual({ 'killed.txt': 'success' });
    expect(await fs.readFile(path.join(root, 'killed.txt'), 'utf8')).toBe('written after the restart\n');
    expect(await locksLeft(root)).toEqual([]);
  });

  it('killed between the lock file and its owner record: the empty lock is taken over by the first write after a restart', async () => {
    const root = await workspaceRoot();
    await runAndKill([root, 'make', 'killed.txt'], (out) => out.includes('@@CUT'));
    expect(await locksLeft(root)).toEqual([expect.stringMatching(/^[0-9a-f]{8}…\.lock file \[no owner record\]$/)]);
    const [name] = await fs.readdir(path.join(root, '.toolgate', 'locks'));
    expect(await fs.readFile(path.join(root, '.toolgate', 'locks', name as string), 'utf8')).toBe('');
    expect(await restartAndWrite(root, ['killed.txt'])).toEqual({ 'killed.txt': 'success' });
    expect(await locksLeft(root)).toEqual([]);
  });

  // Locks as older versions made them (a directory, its holder's record an entry `owner=<record>` inside), which
  // a replica of such a version may leave on the same volume during a rolling upgrade.
  it('an older version\'s lock directory of a killed holder is taken over; one without a record after a restart too', async () => {
    const root = await workspaceRoot();
    const { lock, record } = await killedHolding(root, 'killed.txt');
    await fs.unlink(lock);
    await fs.mkdir(path.join(lock, `owner=${record}`), { recursive: true });
    expect(await locksLeft(root)).toEqual([expect.stringMatching(/^[0-9a-f]{8}…\.lock dir \[owner record\]$/)]);
    expect(await restartAndWrite(root, ['killed.txt'])).toEqual({ 'killed.txt': 'success' });
    expect(await locksLeft(root)).toEqual([]);

    // What an older version's maker killed between the directory and its record left.
    await fs.mkdir(lock);
    expect(await locksLeft(root)).toEqual([expect.stringMatching(/^[0-9a-f]{8}…\.lock dir \[no owner record\]$/)]);
    expect(await restartAndWrite(root, ['killed.txt'])).toEqual({ 'killed.txt': 'success' });
    expect(await locksLeft(root)).toEqual([]);
  });

  it('an older version\'s release cut after it moved its lock away: the first write succeeds, the leftovers are swept', async () => {
    const root = await workspaceRoot();
    const { lock, record } = await killedHolding(root, 'killed.txt');
    await fs.mkdir(path.join(`${lock}.gone3=${record}`, `owner=${record}`), { recursive: true });
    // An older version's stale removal renames before it removes: of a lock file, the rename is all it does.
    await fs.rename(lock, `${lock}.gone4=${record}`);
    expect(await locksLeft(root)).toEqual([
      expect.stringMatching(/^[0-9a-f]{8}…\.lock\.gone3=… dir \[owner record\]$/),
      expect.stringMatching(/^[0-9a-f]{8}…\.lock\.gone4=… file \[owner record\]$/),
    ]);
    expect(await restartAndWrite(root, ['killed.txt'])).toEqual({ 'killed.txt': 'success' });
    expect(await locksLeft(root)).toEqual([]);
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
