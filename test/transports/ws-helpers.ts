// A real WebSocket client for the /v1/ws tests: listen on a loopback port, connect (header or subprotocol
// auth), and read the messages in the order they arrive.
import { afterEach } from 'vitest';
import WebSocket from 'ws';
import type { Envelope } from '../../src/envelope.js';
import type { TestApp } from '../helpers.js';

export interface Message {
  type: string;
  call_id?: string;
  result?: Envelope;
  error?: { code: string; message: string };
  timeout_seconds?: number;
  approval?: { id: string; tool: string; path: string | null; summary: string; diff_preview: string; diff_truncated: boolean; risk: string; risk_level: string; expires_at: string };
}

const sockets: WebSocket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.terminate();
});

export async function wsUrl(app: TestApp, query = ''): Promise<string> {
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no port');
  return `ws://127.0.0.1:${addr.port}/v1/ws${query}`;
}

export type Client = Awaited<ReturnType<typeof connect>>;

/** Opens a connection and collects its messages; `next(n)` waits for n more. */
export async function connect(url: string, opts: { headers?: Record<string, string>; protocols?: string[] } = {}) {
  const socket = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers ?? {} });
  sockets.push(socket);
  const received: Message[] = [];
  let waiters: (() => void)[] = [];
  socket.on('message', (data: Buffer) => {
    received.push(JSON.parse(data.toString()) as Message);
    for (const w of waiters) w();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    socket.once('error', reject);
  });
  let seen = 0;
  return {
    socket,
    send: (m: unknown) => socket.send(typeof m === 'string' ? m : JSON.stringify(m)),
    async next(n = 1): Promise<Message[]> {
      while (received.length < seen + n) await new Promise<void>((r) => (waiters = [...waiters, r]));
      waiters = [];
      const out = received.slice(seen, seen + n);
      seen += n;
      return out;
    },
    /** The next single message. */
    async one(): Promise<Message> {
      return (await this.next(1))[0] as Message;
    },
  };
}
