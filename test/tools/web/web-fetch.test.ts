// web_fetch through the real app (HTTP inject): the SSRF rules as a caller meets them, and the content formats.
// `internal` stands for the service's own network: no call in this file may reach it (checked at the end).
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../../helpers.js';
import { startServer, type CountingServer } from '../../web/servers.js';

let internal: CountingServer; // 127.0.0.1:P, never allowed
let hop: CountingServer; // 127.0.0.2:Q, allowed in `guarded`: a "public" server that redirects anywhere
let wiki: CountingServer; // 127.0.0.1:W, allowed only in `open`
let guarded: TestApp; // TOOLGATE_WEB_ALLOW=127.0.0.2
let open: TestApp; // TOOLGATE_WEB_ALLOW=127.0.0.1
let refusals = 0;

const PAGE = `<!doctype html><html><head><title>Guide to Widgets</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><article><h1>Guide to Widgets</h1>
<p>Widgets are small. Read the <a href="/docs/install">installation notes</a> before you start, then the <a href="faq.html">FAQ</a>.</p>
<h2>Installing</h2><ul><li>First step</li><li>Second step</li></ul>
<p>Ünïcödé text survives the conversion, and so does a longer paragraph that gives Readability enough to keep.</p>
<script>alert('not content')</script>
</article></main><footer>© footer</footer></body></html>`;

const ROUTES: Record<string, (res: import('node:http').ServerResponse) => void> = {
  '/guide/page.html': (res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  },
  '/data.json': (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"b": 2, "a": [1, "x"]}');
  },
  '/notes.txt': (res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('plain text\n  kept as is\n');
  },
  '/image.png': (res) => {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
  },
  '/big': (res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('a'.repeat(10_000));
  },
  '/gzip-bomb': (res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
    res.end(zlib.gzipSync(Buffer.alloc(2_000_000, 'a')));
  },
};

beforeAll(async () => {
  internal = await startServer((_req, res) => res.end('internal secret'));
  wiki = await startServer((req, res) => {
    const route = ROUTES[new URL(req.url ?? '/', 'http://x').pathname];
    if (route) return route(res);
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('no such page');
  });
  hop = await startServer((req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
    res.writeHead(to ? 302 : 200, to ? { location: to, connection: 'close' } : { 'content-type': 'text/plain' });
    res.end(to ? '' : 'hop');
  }, '127.0.0.2');
  guarded = await makeApp({ TOOLGATE_WEB_ALLOW: '127.0.0.2' });
  open = await makeApp({ TOOLGATE_WEB_ALLOW: '127.0.0.1', TOOLGATE_WEB_MAX_BYTES: '4096' });
});

afterAll(async () => {
  // The figure the suite exists for: of all the refused calls, none reached the internal server.
  expect({ requests: internal.requests, connections: internal.connections }).toEqual({ requests: 0, connections: 0 });
  expect(refusals).toBeGreaterThan(20);
  await Promise.all([guarded.close(), open.close(), internal.close(), wiki.close(), hop.close()]);
});

async function denied(url: string, app: TestApp = guarded) {
  refusals++;
  const res = await app.call('web_fetch', { url });
  expect(res.status, url).toBe(403);
  expect(res.body.error?.code, url).toBe('ACCESS_DENIED');
  return res.body;
}

describe('web_fetch: SSRF rules through the tool', () => {
  it('reaches a loopback server only when TOOLGATE_WEB_ALLOW lists it', async () => {
    const body = await denied(`${wiki.origin}/notes.txt`);
    expect(body.error?.message).toMatch(/loopback/i);
    expect(wiki.requests).toBe(0);
    const ok = await open.call('web_fetch', { url: `${wiki.origin}/notes.txt` });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ content: 'plain text\n  kept as is\n', format: 'text', status: 200 });
    expect(wiki.requests).toBe(1);
  });

  // Loopback in the notations a URL parser or inet_aton accepts, and IPv6 forms that carry it.
  it.each([
    '127.0.0.1',
    '2130706433',
    '0x7f000001',
    '0177.0.0.1',
    '0x7f.1',
    '127.1',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '0.0.0.0',
    '[::]',
    'localhost',
  ])('refuses http://%s:P/ with ACCESS_DENIED', async (host) => {
    await denied(`http://${host}:${internal.port}/`);
  });

  it.each([
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'CGNAT'],
    ['169.254.169.254', 'metadata'],
    ['[fd00:ec2::254]', 'metadata'],
    ['[fe80::1]', 'link-local'],
    ['[fc00::1]', 'unique-local'],
    ['[::ffff:10.0.0.1]', 'private (IPv4-mapped)'],
    ['[::ffff:a9fe:a9fe]', 'metadata (IPv4-mapped)'],
  ])('refuses http://%s/ (%s) with ACCESS_DENIED', async (host) => {
    await denied(`http://${host}/latest/meta-data/`);
  });

  it.each([
    ['loopback', () => `http://127.0.0.1:${internal.port}/`],
    ['loopback in hex', () => `http://0x7f000001:${internal.port}/`],
    ['IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${internal.port}/`],
    ['localhost', () => `http://localhost:${internal.port}/`],
    ['metadata', () => 'http://169.254.169.254/latest/meta-data/'],
  ])('refuses a redirect from an allowed server into %s', async (_what, to) => {
    const before = hop.requests;
    const body = await denied(`${hop.origin}/?to=${encodeURIComponent(to())}`);
    expect(hop.requests).toBe(before + 1); // the allowed hop was asked; the target never was
    expect(body.error?.details).toMatchObject({ reason: expect.any(String) });
  });

  it('refuses a redirect to another scheme', async () => {
    await denied(`${hop.origin}/?to=${encodeURIComponent('file:///etc/passwd')}`);
  });

  it.each(['file:///etc/passwd', 'gopher://127.0.0.1:70/', 'not a url', 'http://user:pw@example.com/'])('answers %s with INVALID_PARAM', async (url) => {
    const res = await guarded.call('web_fetch', { url });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_PARAM');
  });
});

describe('web_fetch: content', () => {
  it('returns an HTML page as Markdown: main content, links absolute, no script or chrome', async () => {
    const res = await open.call('web-fetch', { url: `${wiki.origin}/guide/page.html` });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    const data = res.body.data as { content: string; format: string; title: string; content_type: string; truncated: boolean };
    expect(data).toMatchObject({ format: 'markdown', content_type: 'text/html', title: 'Guide to Widgets', truncated: false });
    expect(data.content).toContain('Installing');
    expect(data.content).toContain(`[installation notes](${wiki.origin}/docs/install)`);
    expect(data.content).toContain(`[FAQ](${wiki.origin}/guide/faq.html)`);
    expect(data.content).toContain('Ünïcödé');
    expect(data.content).toMatch(/^- First step$/m);
    expect(data.content).not.toContain('alert(');
    expect(data.content).not.toContain('© footer');
    expect(res.body.context).toMatchObject({ risk: 'read', risk_level: 'low', path_resolved: null });
  });

  it('returns JSON as received', async () => {
    const res = await open.call('web_fetch', { url: `${wiki.origin}/data.json` });
    expect(res.body.data).toMatchObject({ format: 'json', content_type: 'application/json', content: '{"b": 2, "a": [1, "x"]}' });
  });

  it('returns an error page with its status, as a success of the tool', async () => {
    const res = await open.call('web_fetch', { url: `${wiki.origin}/missing` });
    expect(res.body.data).toMatchObject({ status: 404, content: 'no such page' });
    expect(res.body.text).toContain('HTTP 404');
  });

  it('refuses an image by its content type, naming it', async () => {
    const res = await open.call('web_fetch', { url: `${wiki.origin}/image.png` });
    expect(res.status).toBe(422);
    expect(res.body.error?.code).toBe('BINARY_FILE');
    expect(res.body.error?.message).toContain('image/png');
  });

  it('refuses a body over max_bytes with FILE_TOO_LARGE', async () => {
    const res = await open.call('web_fetch', { url: `${wiki.origin}/big`, max_bytes: 1000 });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'FILE_TOO_LARGE', details: { max_bytes: 1000 } });
  });

  it('caps max_bytes at TOOLGATE_WEB_MAX_BYTES, also for a compressed body', async () => {
    for (const path of ['/big', '/gzip-bomb']) {
      const res = await open.call('web_fetch', { url: `${wiki.origin}${path}`, max_bytes: 10_000_000 });
      expect(res.body.error, path).toMatchObject({ code: 'FILE_TOO_LARGE', details: { max_bytes: 4096 } });
    }
  });

  it('cuts content at TOOLGATE_MAX_OUTPUT_BYTES and answers partial with truncated', async () => {
    const small = await makeApp({ TOOLGATE_WEB_ALLOW: '127.0.0.1', TOOLGATE_MAX_OUTPUT_BYTES: '100' });
    try {
      const res = await small.call('web_fetch', { url: `${wiki.origin}/big` });
      expect(res.body.status).toBe('partial');
      expect(res.body.data).toMatchObject({ truncated: true, bytes: 10_000, content: 'a'.repeat(100) });
    } finally {
      await small.close();
    }
  });

  it('rejects a max_bytes that is not a positive whole number', async () => {
    for (const max_bytes of [0, -1, 1.5, '1.5', 'x']) {
      const res = await open.call('web_fetch', { url: `${wiki.origin}/notes.txt`, max_bytes });
      expect(res.body.error?.code).toBe('INVALID_PARAM');
    }
  });

  it('takes a max_bytes sent as a numeric string, as models send numbers', async () => {
    const res = await open.call('web_fetch', { url: `${wiki.origin}/notes.txt`, max_bytes: '100' });
    expect(res.body.status).not.toBe('error');
  });
});
