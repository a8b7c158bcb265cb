// A run's network when TOOLGATE_EXEC_NETWORK is on (docs/run-command.md, "Network"): the run gets its own
// user and network namespaces (unshare), egress rules installed there by nft before anything of the
// command starts, and a user-mode network stack (slirp4netns --disable-host-loopback) as its only way out.
// The command itself runs in bwrap's further nested user namespace without capabilities, so it can neither
// change the rules nor reach the host's loopback; the rules refuse the metadata addresses and every address
// of the service's host, so no listener of the host (the service's port among them) is reachable.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** The PATH of every process started for a run: the sandboxed command (sandbox.ts) and slirp4netns. */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** slirp4netns's fixed addresses: the host as seen from the run (refused), and its DNS forwarder. */
const SLIRP_HOST = '10.0.2.2';
const SLIRP_DNS = '10.0.2.3';
/**
 * Cloud metadata and platform addresses, refused whatever else the network allows (docs/run-command.md,
 * "Network", lists them with their sources): link-local IPv4 (AWS, GCP, Azure, Oracle, OpenStack, DigitalOcean,
 * Hetzner, Tencent's 169.254.0.23, AWS's time and DNS at .123 and .253), Alibaba Cloud's 100.100.100.200,
 * Azure's WireServer 168.63.129.16, Oracle Cloud Classic's 192.0.0.192; AWS's IPv6 endpoints (fd00:ec2::/32),
 * GCP's IPv6 metadata server, and link-local IPv6.
 */
export const METADATA_V4 = ['169.254.0.0/16', '100.100.100.200', '168.63.129.16', '192.0.0.192'];
export const METADATA_V6 = ['fd00:ec2::/32', 'fd20:ce::254', 'fe80::/10'];

/** Files of /etc the run sees with the network on (written once by the probe, bound read-only). */
export const NET_FILES = ['resolv.conf', 'hosts'] as const;

/** The programs a networked run needs besides bwrap; the probe names the ones missing. */
export const NETWORK_TOOLS = ['unshare', 'nft', 'slirp4netns'] as const;

export type NetworkTools = Record<(typeof NETWORK_TOOLS)[number], string>;

/** The absolute path of a program on a PATH, or null. */
export function findOnPath(name: string, searchPath: string): string | null {
  const dir = searchPath.split(':').find((d) => d.startsWith('/') && existsSync(path.join(d, name)));
  return dir ? path.join(dir, name) : null;
}

/** Finds the network programs on the service's PATH: their absolute paths, or the names missing. */
export function findNetworkTools(searchPath: string): NetworkTools | string[] {
  const dirs = searchPath.split(':').filter((d) => d.startsWith('/'));
  const found: Partial<NetworkTools> = {};
  const missing: string[] = [];
  for (const t of NETWORK_TOOLS) {
    const dir = dirs.find((d) => existsSync(path.join(d, t)));
    if (dir) found[t] = path.join(dir, t);
    else missing.push(t);
  }
  return missing.length > 0 ? missing : (found as NetworkTools);
}

/** Writes the run's resolv.conf (slirp4netns's forwarder) and a minimal hosts file into `dir`. */
export function writeNetFiles(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  writeFileSync(path.join(dir, 'resolv.conf'), `nameserver ${SLIRP_DNS}\n`, { mode: 0o644 });
  writeFileSync(path.join(dir, 'hosts'), '127.0.0.1 localhost\n::1 localhost ip6-localhost\n', { mode: 0o644 });
}

/**
 * The nft ruleset of one run: refuse the metadata addresses, slirp4netns's host address and every address
 * the service's host has now (its loopback is refused by slirp4netns itself); everything else goes out.
 */
export function egressRules(): string {
  const v4 = [SLIRP_HOST];
  const v6: string[] = [];
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      if (a.family === 'IPv4') v4.push(a.address);
      else v6.push(a.address.split('%')[0] as string);
    }
  }
  const lines = [
    'table inet toolgate {',
    '  chain output {',
    '    type filter hook output priority 0; policy accept;',
    `    ip daddr { ${METADATA_V4.join(', ')} } reject`,
    `    ip6 daddr { ${METADATA_V6.join(', ')} } reject`,
    `    ip daddr { ${[...new Set(v4)].join(', ')} } reject`,
    ...(v6.length > 0 ? [`    ip6 daddr { ${[...new Set(v6)].join(', ')} } reject`] : []),
    '  }',
    '}',
  ];
  return `${lines.join('\n')}\n`;
}

/** The extra pipes the launcher speaks on: fd 3 (ready, from the holder) and fd 4 (go, to it). */
export const LAUNCHER_STDIO = ['pipe', 'pipe'] as const;

function firstData(stream: Readable | null | undefined, exited: Promise<unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    if (!stream) return resolve(false);
    stream.once('data', () => resolve(true));
    stream.once('end', () => resolve(false));
    stream.once('error', () => resolve(false));
    void exited.then(() => resolve(false));
  });
}

/**
 * Wires the launcher's namespace: waits until the holder installed the rules, starts slirp4netns on its
 * namespaces and lets bwrap start once the interface is up. Returns slirp4netns (the caller kills it when
 * the run ends; it also exits when the service does, through --exit-fd), or throws why the network could
 * not be made (the run is then killed by the caller).
 */
export async function connectNetwork(tools: NetworkTools, launcher: ChildProcess, launcherExited: Promise<unknown>, stderrOf: () => string): Promise<ChildProcess> {
  const pid = launcher.pid;
  if (!pid) throw new Error('the sandbox did not start');
  if (!(await firstData(launcher.stdio[3] as Readable, launcherExited))) {
    throw new Error(`the run's egress rules could not be installed (nft in a new user and network namespace): ${stderrOf().trim().slice(0, 300) || 'no message'}`);
  }
  const slirp = spawn(
    tools.slirp4netns,
    ['--configure', '--mtu=65520', '--disable-host-loopback', '--ready-fd=3', '--exit-fd=4', `--userns-path=/proc/${pid}/ns/user`, '--netns-type=path', `/proc/${pid}/ns/net`, 'tap0'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], env: { PATH: SANDBOX_PATH } },
  );
  let slirpErr = '';
  slirp.stderr?.on('data', (c: Buffer) => {
    if (slirpErr.length < 2000) slirpErr += c.toString();
  });
  slirp.on('error', () => undefined);
  const slirpExited = new Promise((r) => slirp.once('exit', r));
  const ready = await firstData(slirp.stdio[3] as Readable, Promise.race([slirpExited, launcherExited]));
  if (!ready) {
    slirp.kill('SIGKILL');
    throw new Error(`slirp4netns could not wire the run's network: ${slirpErr.trim().split('\n').slice(-2).join(' ').slice(0, 300) || 'no message'}`);
  }
  const go = launcher.stdio[4] as Writable;
  go.on('error', () => undefined);
  go.end('go\n');
  return slirp;
}
