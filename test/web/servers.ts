// Local HTTP servers for the web tests: each counts the connections and requests that reached it, so a test
// can prove that a refused fetch never got there.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { ToolError } from '../../src/envelope.js';

export interface CountingServer {
  host: string;
  port: number;
  /** http://host:port (IPv6 hosts bracketed) */
  origin: string;
  connections: number;
  requests: number;
  paths: string[];
  close(): Promise<void>;
}

export async function startServer(handler: http.RequestListener, host = '127.0.0.1', port = 0): Promise<CountingServer> {
  const server = http.createServer((req, res) => {
    state.requests++;
    state.paths.push(req.url ?? '');
    handler(req, res);
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  const state: CountingServer = {
    host,
    port: actual,
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${actual}`,
    connections: 0,
    requests: 0,
    paths: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return state;
}

/** The ToolError a web call was refused with (the test fails when it resolved or threw something else). */
export async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}
