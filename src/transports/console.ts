// The approval console (docs/approvals.md): its static files served by toolgate itself, so it works in a cluster
// without internet. The page calls /v1/approvals with the approver's token; these routes need none.
import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

/** The files of src/console and where each is served: the icon where browsers ask for it on any page of the origin. */
const ASSETS = [
  { name: 'index.html', url: '/console', type: 'text/html; charset=utf-8' },
  { name: 'console.js', url: '/console/console.js', type: 'text/javascript; charset=utf-8' },
  { name: 'console.css', url: '/console/console.css', type: 'text/css; charset=utf-8' },
  { name: 'favicon.ico', url: '/favicon.ico', type: 'image/x-icon' },
] as const;

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
  const files = ASSETS.map((f) => ({ ...f, body: readFileSync(dir + f.name) }));
  // The page runs no third-party code and is never framed; it talks only to this origin.
  const headers = {
    'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-cache',
  };
  for (const f of files) {
    app.get(f.url, { schema: { hide: true } }, (_req, reply) => reply.headers(headers).type(f.type).send(f.body));
  }
  app.get('/console/', { schema: { hide: true } }, (_req, reply) => reply.redirect('/console'));
}
