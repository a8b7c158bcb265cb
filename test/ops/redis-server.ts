// A throw-away redis-server on a free loopback port for the shared-budget tests. The binary comes from
// Debian's `redis-server` package (`npm test` installs it first: scripts/test-deps.mjs); without it the tests
// fail and say so.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RedisServer {
  url: string;
  port: number;
  /** Stops the server (SIGKILL: Redis "goes away" without a goodbye). */
  kill(): Promise<void>;
}

export function assertRedisInstalled(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'redis-server is not installed, so the shared rate-limit tests cannot run. Install it with ' +
        '`apt-get update && apt-get install -y redis-server` (`npm test` does this as root: scripts/test-deps.mjs).',
    );
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Starts redis-server on a free port (or on `port`, to bring a stopped one back). */
export async function startRedis(port?: number): Promise<RedisServer> {
  assertRedisInstalled();
  port ??= await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], {
    stdio: 'ignore',
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  for (let i = 0; i < 100 && !(await accepts(port)); i++) {
    if (exited) throw new Error('redis-server exited at start');
    await sleep(50);
  }
  if (!(await accepts(port))) throw new Error(`redis-server did not listen on port ${port}`);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async kill() {
      if (exited) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    },
  };
}
