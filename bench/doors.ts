// The same small read_file through each door (REST, MCP Streamable HTTP with the SDK client, WebSocket) at
// c=1 and c=32: what a door costs on top of the pipeline. The server runs in its own process (the clients'
// own work would otherwise count against the server); the doors take turns in slices within each round and
// the median of the rounds is reported.
// `npx tsx bench/doors.ts`: N calls per door and round in DOORS_SLICES slices, ROUNDS rounds. DOORS_SERVER_DIR
// runs the server of another checkout (e.g. an export of main beside this branch) with these same clients;
// DOORS_CPU_PROF=dir writes the server's CPU profile there (summarize it with bench/profile-summary.ts);
// DOORS_ONLY=MCP and DOORS_C=32 narrow a run to what is being profiled; DOORS_DIST=1 runs the production
// build (dist/main.js, `npm run build` first) instead of src/main.ts through tsx.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import WebSocket from 'ws';
import { procCpuMs } from './lib/proc-cpu.js';

const N = Number(process.env.N ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PORT = Number(process.env.PORT ?? 18931);
const root = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-doors-'));
await fs.writeFile(path.join(root, 'a.txt'), 'hello\n'.repeat(100));
const serverDir = path.resolve(process.env.DOORS_SERVER_DIR ?? path.join(import.meta.dirname, '..'));
const profDir = process.env.DOORS_CPU_PROF;
const profArgs = profDir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(profDir)] : [];
const entry = process.env.DOORS_DIST === '1' ? [path.join(serverDir, 'dist/main.js')] : ['--import', 'tsx', path.join(serverDir, 'src/main.ts')];
const server = spawn(process.execPath, [...profArgs, ...entry], {
  env: { ...process.env, TOOLGATE_ROOT: root, TOOLGATE_PORT: String(PORT), TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_AUDIT: 'false', TOOLGATE_LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
// The server must not outlive a bench that fails or is interrupted.
process.once('exit', () => server.kill('SIGTERM'));
const port = PORT;
for (let i = 0; ; i++) {
  const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
  if (ok) break;
  if (i > 300) throw new Error('server did not start');
  await new Promise((r) => setTimeout(r, 100));
}
const args = { path: 'a.txt' };

async function rest(): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/tools/read_file`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
  if (res.status !== 200) throw new Error(`REST ${res.status}`);
  await res.arrayBuffer();
}

const mcp = new Client({ name: 'bench', version: '1' });
await mcp.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
async function mcpRead(): Promise<void> {
  const r = await mcp.callTool({ name: 'read_file', arguments: args });
  if (r.isError) throw new Error('MCP error');
}

const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/ws`);
await new Promise((r) => ws.once('open', r));
const waiting = new Map<string, () => void>();
ws.on('message', (d: Buffer) => waiting.get((JSON.parse(d.toString()) as { call_id: string }).call_id)?.());
let seq = 0;
function wsRead(): Promise<void> {
  const id = String(seq++);
  return new Promise((resolve) => {
    waiting.set(id, () => {
      waiting.delete(id);
      resolve();
    });
    ws.send(JSON.stringify({ type: 'tool_call', call_id: id, tool_name: 'read_file', arguments: args }));
  });
}

const only = process.env.DOORS_ONLY?.split(',');
const doors = Object.fromEntries(Object.entries({ REST: rest, MCP: mcpRead, WS: wsRead }).filter(([name]) => !only || only.includes(name)));
const SLICES = Number(process.env.DOORS_SLICES ?? 10);

/** CPU time (user + system, ms) the server process has used so far, from /proc (Linux), or NaN. */
async function serverCpuMs(): Promise<number> {
  const cpu = await procCpuMs(`/proc/${server.pid}/stat`);
  return cpu.user + cpu.system;
}

interface Sample {
  ms: number;
  serverMs: number;
  clientUs: number;
  calls: number;
}

/** `calls` calls of `fn` at this concurrency: wall time, the server's CPU time and this client's. */
async function slice(fn: () => Promise<void>, concurrency: number, calls: number): Promise<Sample> {
  let left = calls;
  const cpu0 = await serverCpuMs();
  const client0 = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await fn();
    }),
  );
  const ms = performance.now() - started;
  const client = process.cpuUsage(client0);
  return { ms, serverMs: (await serverCpuMs()) - cpu0, clientUs: client.user + client.system, calls };
}

/**
 * One round: every door's N calls, after a warm-up, cut into SLICES slices taken in turn (REST, MCP, WS,
 * REST, …), so that what else the machine runs meanwhile weighs on every door alike. Per door: calls per
 * second, and the server's and this client's CPU time per call (µs).
 */
async function round(concurrency: number): Promise<Record<string, { rate: number; cpuUs: number; clientUs: number }>> {
  const totals = new Map<string, Sample>();
  for (const [name, fn] of Object.entries(doors)) {
    for (let i = 0; i < 200; i++) await fn();
    totals.set(name, { ms: 0, serverMs: 0, clientUs: 0, calls: 0 });
  }
  for (let s = 0; s < SLICES; s++) {
    for (const [name, fn] of Object.entries(doors)) {
      const part = await slice(fn, concurrency, Math.ceil(N / SLICES));
      const total = totals.get(name) as Sample;
      total.ms += part.ms;
      total.serverMs += part.serverMs;
      total.clientUs += part.clientUs;
      total.calls += part.calls;
    }
  }
  return Object.fromEntries(
    [...totals].map(([name, t]) => [name, { rate: t.calls / (t.ms / 1000), cpuUs: (t.serverMs * 1000) / t.calls, clientUs: t.clientUs / t.calls }]),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
// Calls per second depend on what else the machine runs; the server's CPU time per call much less (the
// clients' own work is not in it), so both are printed.
for (const c of process.env.DOORS_C ? [Number(process.env.DOORS_C)] : [1, 32]) {
  const runs: Record<string, { rate: number; cpuUs: number; clientUs: number }[]> = { REST: [], MCP: [], WS: [] };
  for (let r = 0; r < ROUNDS; r++) for (const [name, result] of Object.entries(await round(c))) runs[name]?.push(result);
  const rest = median((runs.REST ?? []).map((x) => x.rate)) || NaN;
  for (const name of Object.keys(doors)) {
    const rates = (runs[name] ?? []).map((x) => x.rate);
    const v = median(rates);
    const cpu = median((runs[name] ?? []).map((x) => x.cpuUs));
    const clientCpu = median((runs[name] ?? []).map((x) => x.clientUs));
    // Each round's ratio to REST in the same round shows the spread the median hides.
    const perRound = rates.map((x, i) => (x / (runs.REST?.[i]?.rate ?? NaN)).toFixed(2)).join(' ');
    console.log(
      `${name.padEnd(5)} c=${String(c).padEnd(3)} ${String(Math.round(v)).padStart(6)} calls/s  ${(v / rest).toFixed(2)}x REST  (rounds ${perRound})  CPU per call: server ${Math.round(cpu)} µs, client ${Math.round(clientCpu)} µs`,
    );
  }
}
ws.close();
await mcp.close();
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
await fs.rm(root, { recursive: true, force: true });
