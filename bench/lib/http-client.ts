// One request at a time over a kept-alive connection, timed by the caller: for the latency
// comparisons (big files, search) where a load generator would only add noise.
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

export interface Answer {
  status: number;
  body: string;
  ms: number;
}

export function post(port: number, urlPath: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(120_000, () => req.destroy(new Error(`POST ${urlPath} timed out`)));
    req.end(body);
  });
}

/** Parses a toolgate envelope, throwing with the error code and message when the call failed. */
export function envelopeOf(answer: Answer, what: string): { status: string; data: Record<string, unknown>; text: string; stats: Record<string, number> } {
  let env: { status: string; data: Record<string, unknown>; text: string; stats: Record<string, number>; error?: { code: string; message: string } };
  try {
    env = JSON.parse(answer.body) as typeof env;
  } catch {
    throw new Error(`${what}: HTTP ${answer.status}, not JSON: ${answer.body.slice(0, 200)}`);
  }
  if (answer.status !== 200 || env.status === 'error') throw new Error(`${what}: HTTP ${answer.status} ${env.error?.code ?? ''}: ${env.error?.message ?? env.text}`);
  return env;
}

export function closeClient(): void {
  agent.destroy();
}
