// run_command with TOOLGATE_EXEC_NETWORK on (docs/run-command.md, "Network"), through the real HTTP door of a
// service listening on every address: the command gets a network of its own (an interface and a default
// route), but the host's loopback listeners, the service's port on any of the host's addresses, the rest
// of the host's addresses and the metadata address are refused, and the command cannot lift the rules.
// Without the programs that enforce this the service refuses to start, naming them.
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { hashToken } from '../../src/ops/auth.js';
import { makeTempDir } from '../helpers.js';

interface RunData {
  exit_code: number | null;
  stdout: string;
  stderr: string;
}

const TOKEN = 'tg_network_runner_0123456789abcdef';

/** The host's first non-loopback IPv4 address (every machine the tests run on has one). */
function hostAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (!a.internal && a.family === 'IPv4') return a.address;
  throw new Error('no non-loopback IPv4 address on this host');
}

/** A shell line that tries one TCP connection and prints `OPEN host:port` or `SHUT host:port: why`. */
const connect = (host: string, port: number) =>
  `python3 -c "import socket
try:
    socket.create_connection(('${host}', ${port}), 3); print('OPEN ${host}:${port}')
except OSError as e:
    print('SHUT ${host}:${port}:', e)"`;

describe('run_command with the network on', () => {
  let dir: string;
  let app: FastifyInstance;
  let url: string;
  let servicePort: number;
  const listeners: net.Server[] = [];
  const hits = { loopback: 0, host: 0 };

  const listen = (host: string, on: keyof typeof hits) =>
    new Promise<number>((resolve) => {
      const srv = net.createServer((s) => {
        hits[on]++;
        s.end('hello\n');
      });
      listeners.push(srv);
      srv.listen(0, host, () => resolve((srv.address() as net.AddressInfo).port));
    });

  async function run(command: string): Promise<RunData> {
    const res = await fetch(`${url}/v1/tools/run_command`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ command, timeout_s: 20 }) });
    const body = (await res.json()) as { status: string; data: RunData };
    expect(body.status, JSON.stringify(body)).toBe('success');
    return body.data;
  }

  beforeAll(async () => {
    dir = await makeTempDir('toolgate-exec-net-');
    const tokens = path.join(path.dirname(dir), `${path.basename(dir)}-tokens.yaml`);
    await fs.writeFile(tokens, `- id: runner\n  sha256: ${hashToken(TOKEN)}\n  projects: ['*']\n  risks: [read, execute]\n`);
    app = await buildApp(loadConfig({ TOOLGATE_ROOT: dir, TOOLGATE_TOKENS_FILE: tokens, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_EXEC: 'sandboxed', TOOLGATE_EXEC_NETWORK: 'true' }));
    // Every address, so that the service's port is open on the host's non-loopback address too.
    await app.listen({ host: '0.0.0.0', port: 0 });
    servicePort = (app.server.address() as net.AddressInfo).port;
    url = `http://127.0.0.1:${servicePort}`;
  });

  afterAll(async () => {
    await app?.close();
    for (const l of listeners) await new Promise((r) => l.close(r));
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('gives the command an interface and a default route of its own, and a resolver', async () => {
    const r = await run('cat /proc/net/route; cat /etc/resolv.conf');
    // A default route (destination 00000000) through the run's tap0: the network is there.
    expect(r.stdout).toMatch(/^tap0\s+00000000\s/m);
    expect(r.stdout).toContain('nameserver 10.0.2.3');
  });

  it("refuses the host's loopback listeners, the service's port on every host address, the host's other addresses and the metadata address", async () => {
    const loopbackPort = await listen('127.0.0.1', 'loopback');
    const host = hostAddress();
    const hostPort = await listen(host, 'host');
    const targets: [string, number][] = [
      ['127.0.0.1', loopbackPort],
      ['127.0.0.1', servicePort],
      // slirp4netns's name for the host: its loopback, refused.
      ['10.0.2.2', loopbackPort],
      ['10.0.2.2', servicePort],
      [host, servicePort],
      [host, hostPort],
      ['169.254.169.254', 80],
    ];
    const r = await run(targets.map(([h, p]) => connect(h, p)).join('\n'));
    for (const [h, p] of targets) expect(r.stdout, r.stdout).toContain(`SHUT ${h}:${p}:`);
    expect(r.stdout).not.toContain('OPEN');
    expect(hits).toEqual({ loopback: 0, host: 0 });
  });

  it('cannot lift the egress rules from inside', async () => {
    const r = await run(`nft flush ruleset; nft list ruleset; ${connect('169.254.169.254', 80)}`);
    expect(r.stderr).toMatch(/Operation not permitted/);
    expect(r.stdout).toContain('SHUT 169.254.169.254:80:');
  });
});

describe('run_command network start-up probe', () => {
  it('refuses to start, naming what is missing, when slirp4netns is not installed', async () => {
    const dir = await makeTempDir();
    // A PATH with bwrap, unshare and nft but without slirp4netns.
    const bin = path.join(path.dirname(dir), `${path.basename(dir)}-bin`);
    await fs.mkdir(bin);
    for (const [name, real] of [['bwrap', '/usr/bin/bwrap'], ['unshare', '/usr/bin/unshare'], ['nft', '/usr/sbin/nft']] as const) await fs.symlink(real, path.join(bin, name));
    const saved = process.env.PATH;
    process.env.PATH = bin;
    try {
      const config = loadConfig({ TOOLGATE_ROOT: dir, TOOLGATE_EXEC: 'sandboxed', TOOLGATE_EXEC_NETWORK: 'true', TOOLGATE_AUDIT_STDOUT: 'false' });
      const err = await buildApp(config).then(
        async (a) => {
          await a.close();
          return null;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/TOOLGATE_EXEC_NETWORK=true needs slirp4netns .*missing/);
    } finally {
      process.env.PATH = saved;
      await fs.rm(dir, { recursive: true, force: true });
      await fs.rm(bin, { recursive: true, force: true });
    }
  });
});
