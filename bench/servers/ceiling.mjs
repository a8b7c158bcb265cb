// Ceiling servers: the least a Fastify route can do for the bench's requests. CEILING_MODE=const
// answers a constant; CEILING_MODE=file answers the 4 KiB file at CEILING_FILE, read with
// fs.readFile on every request, and CEILING_MODE=file-sync the same read with readFileSync (as toolgate
// reads small files). Both accept the same POST + JSON body the bench sends to toolgate,
// and answer /readyz like toolgate, so start-up is measured the same way. No logger (bare).
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import Fastify from 'fastify';

const mode = process.env.CEILING_MODE ?? 'const';
const file = process.env.CEILING_FILE;
if (mode.startsWith('file') && !file) throw new Error('CEILING_FILE is required with CEILING_MODE=file');

const app = Fastify({ logger: false });
const CONSTANT = { status: 'success', data: { ok: true } };

app.post('/v1/tools/:tool', async (_req, reply) => {
  if (mode === 'file') return reply.type('text/plain; charset=utf-8').send(await fs.readFile(file));
  if (mode === 'file-sync') return reply.type('text/plain; charset=utf-8').send(readFileSync(file));
  return CONSTANT;
});
app.get('/readyz', async () => ({ status: 'ready' }));

const shutdown = async () => {
  await app.close();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
