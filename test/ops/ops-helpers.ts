// Helpers of the operations tests: tokens, raw requests, captured log and audit streams.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Envelope } from '../../src/envelope.js';
import { hashToken, type TokenEntry } from '../../src/ops/auth.js';

export interface TestToken {
  /** The bearer token a client sends. */
  secret: string;
  entry: TokenEntry;
  header: { authorization: string };
}

export function makeToken(id: string, opts: Partial<Pick<TokenEntry, 'projects' | 'risks'>> = {}): TestToken {
  const secret = `tg_${id}_${randomBytes(16).toString('hex')}`;
  return {
    secret,
    entry: { id, sha256: hashToken(secret), projects: opts.projects ?? ['*'], risks: opts.risks ?? ['read', 'write', 'destructive'] },
    header: { authorization: `Bearer ${secret}` },
  };
}

export interface Answer {
  status: number;
  body: Envelope;
  headers: Record<string, string | string[] | number | undefined>;
  raw: string;
}

export async function request(app: FastifyInstance, method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await app.inject({ method, url, headers, ...(body !== undefined && { payload: body as object }) });
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    // not JSON (metrics)
  }
  return { status: res.statusCode, body: parsed as Envelope, headers: res.headers, raw: res.body };
}

/** A writable that keeps everything written to it (pino output, audit lines). */
export function captureStream(): { stream: Writable; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, text: () => chunks.join('') };
}
