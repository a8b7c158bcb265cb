// Two official MCP SDK clients at one address, without tokens (docs/run-command.md, "Streaming and cancel"):
// their JSON-RPC ids coincide, yet one client's notifications/cancelled stops its own run only, never the
// other's, because calls in flight are keyed by the client's session, not by its address; whether the call is
// answered on a stream (progress asked) or as plain JSON.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers.js';
import { httpClient, mcpUrl } from '../transports/mcp-helpers.js';
import { hostProcesses, until } from './host-processes.js';


describe('run_command cancel over MCP, two clients at one address without tokens', () => {
  let t: TestApp;
  let a: Client;
  let b: Client;
  beforeAll(async () => {
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' });
    const url = await mcpUrl(t.app);
    a = await httpClient(url);
    b = await httpClient(url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await t?.close();
  });

  /**
   * Starts a sleeper; `stop` aborts the call (the SDK sends notifications/cancelled). With progress asked, the call is
   * answered on a stream and has started once its first output is reported; without, it is answered as plain JSON
   * (the door's direct route) and has started once its process is there.
   */
  async function start(client: Client, progress = true) {
    const marker = `twoclients${randomBytes(4).toString('hex')}`;
    await fs.writeFile(path.join(t.root, `${marker}.sh`), 'echo started\nsleep 600\n');
    const abort = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const options = { signal: abort.signal, timeout: 120_000, ...(progress && { onprogress: () => started() }) };
    const call = client.callTool({ name: 'run_command', arguments: { command: `sh ${marker}.sh`, timeout_s: 60 } }, undefined, options);
    const settled = call.then(
      (result) => ({ result, error: null }),
      (error: unknown) => ({ result: null, error }),
    );
    if (progress) await running;
    else expect(await until(() => hostProcesses(marker) > 0)).toBe(true);
    return { marker, stop: () => abort.abort(), settled };
  }

  /** The second client's cancel stops its run only; then the first's stops its own. */
  async function cancelsItsOwnOnly(first: Started, second: Started) {
    second.stop();
    expect((await second.settled).error).not.toBeNull();
    expect(await until(() => hostProcesses(second.marker) === 0)).toBe(true);
    // The other client's run goes on: its process is still there and its call has not answered.
    expect(hostProcesses(first.marker)).toBeGreaterThan(0);
    const raced = await Promise.race([first.settled.then(() => 'answered'), new Promise((r) => setTimeout(() => r('running'), 300))]);
    expect(raced).toBe('running');

    first.stop();
    expect((await first.settled).error).not.toBeNull();
    expect(await until(() => hostProcesses(first.marker) === 0)).toBe(true);
  }
  type Started = Awaited<ReturnType<typeof start>>;

  it("one client's cancel stops its own run and leaves the other's running", async () => {
    // The same sequence on both clients: their tools/call ids are equal.
    const first = await start(a);
    const second = await start(b);
    expect(hostProcesses(first.marker)).toBeGreaterThan(0);
    expect(hostProcesses(second.marker)).toBeGreaterThan(0);

    await cancelsItsOwnOnly(first, second);
  });

  it('stops a call answered as plain JSON (no progress asked) the same way, its own only', async () => {
    const first = await start(a, false);
    const second = await start(b, false);

    await cancelsItsOwnOnly(first, second);
  });
});
