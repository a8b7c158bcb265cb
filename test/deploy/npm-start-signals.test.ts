// `npm start` stops on SIGTERM and SIGINT as `node dist/main.js` does (issue 36 point 5): a process manager or
// a terminal stops the README's command by signalling npm, which passes the signal to the shell running the
// start script; the service must not go on serving behind it with the port taken. Run with the real npm, the
// repository's own package.json scripts (prestart, start) and build, in a copy where the build is fresh.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
let copy = '';
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  copy = await makeTempDir('toolgate-npm-start-');
  await fs.mkdir(path.join(copy, 'scripts'));
  await fs.copyFile(path.join(REPO, 'package.json'), path.join(copy, 'package.json'));
  await fs.copyFile(path.join(REPO, 'scripts/build-if-stale.mjs'), path.join(copy, 'scripts/build-if-stale.mjs'));
  const dist = path.join(copy, 'dist');
  await fs.mkdir(dist);
  for (const name of await fs.readdir(path.join(REPO, 'dist'))) {
    if (['main.js', 'serve.js', 'edit-worker.js', 'console'].includes(name) || (name.startsWith('serve.') && name.endsWith('.js'))) {
      await fs.cp(path.join(REPO, 'dist', name), path.join(dist, name), { recursive: true });
    }
  }
  await fs.symlink(path.join(REPO, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  // The build is fresh here (prestart then starts at once): its inputs are older than the stamp.
  const hourAgo = new Date(Date.now() - 3600_000);
  await fs.utimes(path.join(copy, 'package.json'), hourAgo, hourAgo);
  await fs.writeFile(path.join(copy, 'dist/.build-stamp'), '');
});

afterAll(async () => {
  if (copy) await fs.rm(copy, { recursive: true, force: true });
});

// A test that failed leaves its processes: they go (the service only while its pid is still the service's).
afterEach(() => {
  for (const stop of cleanups.splice(0)) stop();
});

/** `npm start` in the copy on a free port; resolves once the service listens, with its port and its own pid. */
async function npmStart(): Promise<{ npm: ChildProcess; port: number; servicePid: number; output: () => string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TOOLGATE_') && !k.startsWith('npm_') && k !== 'NODE_OPTIONS') env[k] = v;
  const root = path.join(copy, `ws-${Date.now()}`);
  const npm = spawn('npm', ['start'], {
    cwd: copy,
    env: { ...env, npm_config_update_notifier: 'false', TOOLGATE_ROOT: root, TOOLGATE_HOST: '127.0.0.1', TOOLGATE_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  npm.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  npm.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  cleanups.push(() => {
    if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
  });
  const deadline = Date.now() + 60_000;
  let m: RegExpExecArray | null;
  while (!(m = /"pid":(\d+)[^\n]*Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out))) {
    if (npm.exitCode !== null) throw new Error(`npm start exited (${npm.exitCode}) before listening:\n${out}`);
    if (Date.now() > deadline) throw new Error(`npm start did not listen in 60 s:\n${out}`);
    await sleep(25);
  }
  const servicePid = Number(m[1]);
  cleanups.push(() => {
    if (alive(servicePid) && readFileSync(`/proc/${servicePid}/cmdline`, 'utf8').includes('dist/main.js')) process.kill(servicePid, 'SIGKILL');
  });
  return { npm, port: Number(m[2]), servicePid, output: () => out };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('npm start and signals', () => {
  // SIGKILL: npm passes nothing on; the service sees its parent go away (src/main.ts) and stops as on SIGTERM.
  it.each(['SIGTERM', 'SIGINT', 'SIGKILL'] as const)('%s to the npm process stops the service: the port is free', async (signal) => {
    const started = await npmStart();
    expect(await accepts(started.port)).toBe(true);
    expect(started.servicePid).not.toBe(started.npm.pid);

    started.npm.kill(signal);
    // Both gone in time, or the assertion below says which one stayed (a guard for a busy machine, not a measure).
    const deadline = Date.now() + 30_000;
    while ((alive(started.servicePid) || started.npm.exitCode === null && started.npm.signalCode === null) && Date.now() < deadline) await sleep(50);
    expect(alive(started.servicePid), `node dist/main.js (pid ${started.servicePid}) still runs after npm got ${signal}:\n${started.output()}`).toBe(false);
    expect(await accepts(started.port)).toBe(false);
    // It shut down as on SIGTERM: calls in flight finished, then exit 0.
    expect(started.output()).toContain('shut down cleanly');
  });
});
