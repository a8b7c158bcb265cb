// The real server process: graceful shutdown on SIGTERM finishes a write in flight and exits 0; start-up
// refuses bad configuration and a non-loopback address without tokens, with messages that say why.
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers.js';
import { run, startServer, type ServerProcess } from './process.js';

let server: ServerProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  server = undefined;
  if (dir) await fs.rm(dir, { recursive: true, force: true });
  dir = undefined;
});

function connectable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('graceful shutdown', () => {
  it('SIGTERM during a 4 MiB write_file: the write completes, new connections are refused, exit 0', async () => {
    dir = await makeTempDir();
    const root = path.join(dir, 'ws');
    // TOOLGATE_LOG_REQUESTS: its "incoming request" line says the write is in flight, however slow the machine.
    server = await startServer({ TOOLGATE_ROOT: root, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_INSTANCE_ID: 'shutdown-test', TOOLGATE_LOG_REQUESTS: 'true' });

    const line = 'the quick brown fox jumps over the lazy dog 0123456789\n';
    const content = line.repeat(Math.ceil((4 * 1024 * 1024) / line.length));
    const body = Buffer.from(JSON.stringify({ path: 'big/data.txt', content }));
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${server!.url}/v1/tools/write_file`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      // Half of the body now; SIGTERM arrives once the server has the request in flight; then the rest.
      req.write(body.subarray(0, body.length / 2));
      void server!
        .waitForOutput(/incoming request/)
        .then(async () => {
          server!.child.kill('SIGTERM');
          await server!.waitForOutput(/shutting down/);
          expect(await connectable(server!.port)).toBe(false);
          req.end(body.subarray(body.length / 2));
        })
        .catch(reject);
    });

    const res = await response;
    expect(res.status).toBe(200);
    const envelope = JSON.parse(res.body) as { status: string; data: { applied: boolean; version: { sha256: string } } };
    // `partial`: the diff preview of 4 MiB is cut; the write itself is whole
    expect(['success', 'partial']).toContain(envelope.status);
    expect(envelope.data.applied).toBe(true);
    const { code, signal } = await server.exited;
    expect(server.output()).toMatch(/shut down cleanly/);
    expect({ code, signal }).toEqual({ code: 0, signal: null });

    const written = await fs.readFile(path.join(root, 'big/data.txt'));
    expect(written.length).toBe(Buffer.byteLength(content));
    expect(createHash('sha256').update(written).digest('hex')).toBe(createHash('sha256').update(content).digest('hex'));
    expect(envelope.data.version.sha256).toBe(createHash('sha256').update(content).digest('hex'));
    // the audit line of the call was flushed before exit
    const audit = await fs.readdir(path.join(root, '.toolgate', 'audit'));
    const lines = (await fs.readFile(path.join(root, '.toolgate', 'audit', audit[0] as string), 'utf8')).trim().split('\n');
    expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ tool: 'write_file', path: 'big/data.txt', error_code: null, bytes_written: Buffer.byteLength(content) });
  });

  it('SIGTERM when idle exits 0 at once', async () => {
    dir = await makeTempDir();
    server = await startServer({ TOOLGATE_ROOT: path.join(dir, 'ws'), TOOLGATE_AUDIT_STDOUT: 'false' });
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});

describe('start-up checks', () => {
  it('refuses a non-loopback address without tokens (exit 2, clear message)', async () => {
    dir = await makeTempDir();
    const res = await run('src/main.ts', [], { TOOLGATE_ROOT: path.join(dir, 'ws'), TOOLGATE_HOST: '0.0.0.0', TOOLGATE_PORT: '0' });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toMatch(/TOOLGATE_HOST=0\.0\.0\.0 is not a loopback address, and no bearer tokens are configured: refusing to listen/);
  });

  it('a bad variable or flag stops the start with exit 2 and names it', async () => {
    const bad = await run('src/main.ts', [], { TOOLGATE_PORT: 'eighty' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/TOOLGATE_PORT="eighty": must be a whole number/);
    const flag = await run('src/main.ts', ['--require-version', 'sometimes']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--require-version \(TOOLGATE_REQUIRE_VERSION\)="sometimes": accepted values: overwrite, always, never/);
    const unknown = await run('src/main.ts', ['--prot', '80']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--prot/);
  });

  it('flags configure the server like the variables', async () => {
    dir = await makeTempDir();
    const root = path.join(dir, 'from-flag');
    server = await startServer({ TOOLGATE_ROOT: path.join(dir, 'from-env'), TOOLGATE_AUDIT_STDOUT: 'false' }, ['--root', root, '--port', '0', '--no-metrics']);
    const res = await fetch(`${server.url}/v1/tools/write_file`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: 'a.txt', content: 'x' }) });
    expect(res.status).toBe(200);
    expect(await fs.readFile(path.join(root, 'a.txt'), 'utf8')).toBe('x');
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });
});
