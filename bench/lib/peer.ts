// The peer: @modelcontextprotocol/server-filesystem over stdio, driven by the MCP SDK client. N
// concurrent calls share the one stdio connection (N workers, each calling in a loop), and the
// bench times every call itself.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO_DIR } from './options.js';
import { percentile } from './stats.js';
import type { LoadResult } from './http-load.js';

const PEER_PACKAGE = path.join(REPO_DIR, 'node_modules', '@modelcontextprotocol', 'server-filesystem');
export const PEER_SERVER = path.join(PEER_PACKAGE, 'dist', 'index.js');

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(PEER_PACKAGE, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export interface Peer {
  client: Client;
  pid: number;
  version: string;
  /** One call; throws when the tool answered isError. */
  call(name: string, args: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startPeer(allowedDir: string): Promise<Peer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [PEER_SERVER, allowedDir],
    cwd: REPO_DIR,
    stderr: 'ignore',
  });
  // No listTools: the client would then validate every structured result against the tool's
  // output schema in the bench's process, which shares the 2 cores with the servers.
  const client = new Client({ name: 'toolgate-bench', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error('peer: no pid');
  const call = async (name: string, args: Record<string, unknown>): Promise<string> => {
    const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
    const content = res.content as { type: string; text?: string }[] | undefined;
    const text = content?.map((c) => c.text ?? '').join('') ?? '';
    if (res.isError) throw new Error(`peer ${name}: ${text.slice(0, 300)}`);
    return text;
  };
  return { client, pid, version: packageVersion(), call, close: () => client.close() };
}

export interface PeerCall {
  name: string;
  args: Record<string, unknown>;
  onDone?: (ok: boolean) => void;
}

/** `concurrency` workers call the peer in a loop for `rampS` + `durationS` seconds; see runWindowed. */
export function runPeerLoad(peer: Peer, concurrency: number, durationS: number, rampS: number, next: () => PeerCall): Promise<LoadResult> {
  return runWindowed(concurrency, durationS, rampS, async () => {
    const c = next();
    try {
      await peer.call(c.name, c.args);
    } catch (err) {
      c.onDone?.(false);
      throw err;
    }
    c.onDone?.(true);
  });
}

/**
 * Closed-loop load in the bench's own process: `concurrency` workers run `op` back to back for
 * `rampS` + `durationS` seconds. Like the HTTP load, only operations that complete inside the last
 * `durationS` seconds count (throughput and latency); answers after the end are dropped.
 */
export async function runWindowed(concurrency: number, durationS: number, rampS: number, op: () => Promise<void>): Promise<LoadResult> {
  const latencies: number[] = [];
  let failed = 0;
  let firstFailure: string | null = null;
  const started = performance.now();
  const windowStart = started + rampS * 1000;
  const deadline = windowStart + durationS * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await op();
        const t1 = performance.now();
        if (t1 >= windowStart && t1 <= deadline) latencies.push(t1 - t0);
      } catch (err) {
        failed++;
        firstFailure ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ok = latencies.length;
  return { rps: ok / durationS, p50: percentile(latencies, 50), p99: percentile(latencies, 99), ok, failed, flagged: 0, elapsedS: durationS, firstFailure };
}
