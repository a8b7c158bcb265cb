// The approval console (docs/approvals.md): three static files served by toolgate itself, so it works in a cluster
// without internet. The page calls /v1/approvals with the approver's token; this route needs none.
import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const ASSETS = {
  'index.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
} as const;

/** src/console next to src/transports (tsc's dist likewise), or dist/console next to the bundled dist/serve.js. */
function assetDir(): string {
  for (const rel of ['../console/', './console/']) {
    const dir = new URL(rel, import.meta.url);
    if (existsSync(new URL('index.html', dir))) return dir.pathname;
  }
  throw new Error('The console files (console/index.html) are missing from the installation.');
}

export async function registerConsole(app: FastifyInstance): Promise<void> {
  const dir = assetDir();
  const files = Object.entries(ASSETS).map(([name, type]) => ({ name, type, body: readFileSync(dir + name) }));
  // The page runs no third-party code and is never framed; it talks only to this origin.
  const headers = {
    'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-cache',
  };
  for (const f of files) {
    const url = f.name === 'index.html' ? '/console' : `/console/${f.name}`;
    app.get(url, { schema: { hide: true } }, (_req, reply) => reply.headers(headers).type(f.type).send(f.body));
  }
  app.get('/console/', { schema: { hide: true } }, (_req, reply) => reply.redirect('/console'));
}
