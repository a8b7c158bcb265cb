// The same small read_file through each door (REST, MCP Streamable HTTP with the SDK client, WebSocket) at
// c=1 and c=32 against one in-process server: what a door costs on top of the pipeline. `npx tsx bench/doors.ts`
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const N = Number(process.env.N ?? 2000);
const root = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-doors-'));
await fs.writeFile(path.join(root, 'a.txt'), 'hello\n'.repeat(100));
const app = await buildApp(loadConfig({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0', TOOLGATE_AUDIT: 'false' }));
await app.listen({ host: '127.0.0.1', port: 0 });
const port = (app.server.address() as { port: number }).port;
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

async function measure(name: string, fn: () => Promise<void>, concurrency: number) {
  for (let i = 0; i < 200; i++) await fn(); // warm-up
  let left = N;
  const lat: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const t0 = performance.now();
        await fn();
        lat.push(performance.now() - t0);
      }
    }),
  );
  const secs = (performance.now() - started) / 1000;
  lat.sort((a, b) => a - b);
  const p = (q: number) => (lat[Math.floor(q * (lat.length - 1))] ?? 0).toFixed(3);
  console.log(`${name.padEnd(5)} c=${String(concurrency).padEnd(3)} ${String(Math.round(N / secs)).padStart(6)} calls/s  p50 ${p(0.5)} ms  p99 ${p(0.99)} ms`);
}

for (const c of [1, 32]) {
  await measure('REST', rest, c);
  await measure('MCP', mcpRead, c);
  await measure('WS', wsRead, c);
}
ws.close();
await mcp.close();
await app.close();
await fs.rm(root, { recursive: true, force: true });
