// run_command's output streamed as it comes over the WebSocket door (tool_progress) and MCP (progress
// notifications), and the run stopped when the client cancels (docs/run-command.md, "Streaming").
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers.js';
import { httpClient, mcpUrl } from './mcp-helpers.js';
import { connect, wsUrl, type Message } from './ws-helpers.js';
import { hostProcesses, until } from '../exec/host-processes.js';

interface Progress extends Message {
  stream?: string;
  data?: string;
}

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});


/** A script in the project that says it started, then sleeps: its name marks its processes on the host. */
async function sleeper(app: TestApp): Promise<string> {
  const marker = `sleeper${randomBytes(4).toString('hex')}`;
  await fs.writeFile(path.join(app.root, `${marker}.sh`), 'echo started\nsleep 600\n');
  return marker;
}

describe('run_command over WebSocket', () => {
  it('streams the output as tool_progress messages before the tool_result', async () => {
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' });
    const c = await connect(await wsUrl(t));
    c.send({ type: 'tool_call', call_id: 'c1', tool_name: 'run_command', arguments: { command: 'echo one; echo two >&2; echo three' } });
    const seen: Progress[] = [];
    for (;;) {
      const m = (await c.one()) as Progress;
      seen.push(m);
      if (m.type === 'tool_result') break;
    }
    const progress = seen.filter((m) => m.type === 'tool_progress');
    expect(progress.every((m) => m.call_id === 'c1')).toBe(true);
    expect(progress.filter((m) => m.stream === 'stdout').map((m) => m.data).join('')).toBe('one\nthree\n');
    expect(progress.filter((m) => m.stream === 'stderr').map((m) => m.data).join('')).toBe('two\n');
    const result = seen[seen.length - 1]?.result;
    expect((result?.data as { stdout: string }).stdout).toBe('one\nthree\n');
  });

  it('a cancel message kills the run; the tool_result says cancelled', async () => {
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' });
    const marker = await sleeper(t);
    const c = await connect(await wsUrl(t));
    c.send({ type: 'tool_call', call_id: 'long', tool_name: 'run_command', arguments: { command: `sh ${marker}.sh` } });
    const first = (await c.one()) as Progress;
    expect(first).toMatchObject({ type: 'tool_progress', call_id: 'long', data: 'started\n' });
    c.send({ type: 'cancel', call_id: 'long' });
    const result = await c.one();
    expect(result.type).toBe('tool_result');
    expect(result.result?.data).toMatchObject({ stopped_by: 'cancelled', timed_out: false });
    expect(await until(() => hostProcesses(marker) === 0)).toBe(true);
    c.send({ type: 'cancel', call_id: 'long' });
    expect((await c.one()).error?.code).toBe('NOT_FOUND');
  });
});

describe('run_command over MCP', () => {
  it('sends progress notifications to a client that asked, and a cancelled request kills the run', async () => {
    t = await makeApp({ TOOLGATE_EXEC: 'sandboxed' });
    const url = await mcpUrl(t.app);
    const client = await httpClient(url);
    try {
      const messages: string[] = [];
      await client.callTool({ name: 'run_command', arguments: { command: 'echo alpha; echo beta' } }, undefined, { onprogress: (p) => messages.push(p.message ?? '') });
      expect(messages.join('')).toContain('alpha');
      expect(messages.join('')).toContain('beta');

      const marker = await sleeper(t);
      const abort = new AbortController();
      const started: string[] = [];
      const call = client.callTool({ name: 'run_command', arguments: { command: `sh ${marker}.sh` } }, undefined, {
        signal: abort.signal,
        onprogress: (p) => {
          started.push(p.message ?? '');
          abort.abort();
        },
      });
      await expect(call).rejects.toThrow();
      expect(started[0]).toContain('started');
      expect(await until(() => hostProcesses(marker) === 0)).toBe(true);
    } finally {
      await client.close();
    }
  });
});
