// Probes (docs/operations.md): /livez (the process answers), /readyz (the volume is writable and the service is
// not shutting down; 503 otherwise), /healthz (details). They need no token, so that kubelet and load
// balancers can call them; they reveal no path.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const PROBE_CACHE_MS = 1000;

export interface HealthOptions {
  version: string;
  instanceId: string;
  /** Directory the probe file is written to (a state directory, or the projects root). */
  probeDir: string;
  rateLimitStore: () => { store: 'memory' | 'redis' | 'off'; redis: string | null };
}

/** Writes and removes a small file; the result is cached for about a second so probes stay cheap. */
export function writableProbe(dir: string, instanceId: string): () => Promise<boolean> {
  let cached: { at: number; ok: Promise<boolean> } | null = null;
  const file = path.join(dir, `.toolgate-probe-${instanceId}`);
  const probe = async () => {
    try {
      await fs.writeFile(file, 'ok');
      await fs.unlink(file);
      return true;
    } catch {
      return false;
    }
  };
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at > PROBE_CACHE_MS) cached = { at: now, ok: probe() };
    return cached.ok;
  };
}

export function registerHealth(app: FastifyInstance, opts: HealthOptions): void {
  const writable = writableProbe(opts.probeDir, opts.instanceId);
  const started = Date.now();
  const hide = { schema: { hide: true } };

  app.get('/livez', hide, async () => ({ status: 'ok' }));

  app.get('/readyz', hide, async (_req, reply) => {
    if (app.toolgate.shuttingDown) return reply.code(503).send({ status: 'shutting_down' });
    if (!(await writable())) return reply.code(503).send({ status: 'volume_not_writable' });
    return { status: 'ready' };
  });

  app.get('/healthz', hide, async (_req, reply) => {
    const ok = await writable();
    const shuttingDown = app.toolgate.shuttingDown;
    const rl = opts.rateLimitStore();
    const body = {
      status: ok && !shuttingDown ? 'ok' : 'unhealthy',
      version: opts.version,
      node: process.version,
      instance: opts.instanceId,
      uptime_s: Math.round((Date.now() - started) / 1000),
      shutting_down: shuttingDown,
      mode: app.toolgate.projects.multi ? 'multi-project' : 'single-workspace',
      workspace: { writable: ok },
      auth: app.toolgate.auth.enabled ? 'tokens' : 'off',
      rate_limit: rl,
    };
    return reply.code(body.status === 'ok' ? 200 : 503).send(body);
  });
}
