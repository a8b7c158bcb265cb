// What web_fetch makes of a response: formats, limits of size and time, and its errors. The server is allowed
// explicitly (TOOLGATE_WEB_ALLOW=127.0.0.1), as an operator would allow an internal wiki.
import zlib from 'node:zlib';
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowList } from '../../src/web/address-policy.js';
import { webFetch, type WebFetchOptions } from '../../src/web/fetch.js';
import { failure, startServer, type CountingServer } from './servers.js';

const ARTICLE = `<!doctype html>
<html><head><title>Guide to Widgets</title><script>var tracking = "do not show";</script><style>.x{color:red}</style></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<main>
<article>
<h1>Guide to Widgets</h1>
<p>Widgets are small components that do one thing well. This guide explains how to choose, install and
configure widgets for most projects, with examples taken from real deployments and common mistakes.</p>
<h2>Installing</h2>
<p>Read the <a href="/docs/install">installation notes</a> first, then the <a href="../faq.html#top">FAQ</a>
and the <a href="https://other.example/page">upstream page</a>. Never follow <a href="javascript:alert(1)">this link</a>.</p>
<p>More text so that the article is long enough for the readability scoring to pick it as the main content,
because very short pages are left to the fallback. Widgets, widgets and more widgets in every paragraph.</p>
<ul><li>First step</li><li>Second step</li></ul>
<pre><code>npm install widget</code></pre>
<img src="img/diagram.png" alt="Diagram"> <img src="data:image/png;base64,AAAA" alt="inline">
</article>
</main>
<footer>Copyright footer text</footer>
<script>document.write("also hidden")</script>
</body></html>`;

const routes: Record<string, http.RequestListener> = {
  '/guide/page.html': (_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(ARTICLE);
  },
  '/moved': (_req, res) => {
    res.writeHead(301, { location: '/guide/page.html' });
    res.end();
  },
  '/based': (_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<html><head><base href="https://docs.example/v2/"></head><body><p>See <a href="intro">the intro</a>.</p></body></html>');
  },
  '/short': (_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<html><body><nav>menu</nav><main><p>Just <a href="x">one</a> line.</p></main><footer>foot</footer></body></html>');
  },
  '/data.json': (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"a": [1, 2, 3],\n "b": "ü"}');
  },
  '/notes.txt': (_req, res) => {
    res.setHeader('content-type', 'text/plain; charset=iso-8859-1');
    res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1
  },
  '/untyped-text': (_req, res) => res.end('plain words'),
  '/untyped-binary': (_req, res) => res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1])),
  '/image.png': (_req, res) => {
    res.setHeader('content-type', 'image/png');
    res.end(Buffer.alloc(10_000));
  },
  '/file.bin': (_req, res) => {
    res.setHeader('content-type', 'application/octet-stream');
    res.end(Buffer.alloc(10));
  },
  '/big': (_req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end('x'.repeat(5000));
  },
  '/big-chunked': (_req, res) => {
    res.setHeader('content-type', 'text/plain');
    for (let i = 0; i < 10; i++) res.write('y'.repeat(500));
    res.end();
  },
  '/gzip-small': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
    res.end(zlib.gzipSync('compressed hello'));
  },
  '/gzip-bomb': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
    res.end(zlib.gzipSync(Buffer.alloc(5_000_000, 'a'))); // a few KiB on the wire, 5 MB inflated
  },
  '/slow-body': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first bytes, then nothing');
    // never ends: the time limit must stop it
  },
  '/slow-headers': () => {
    // never answers
  },
  '/deep.html': (_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<html><body>${'<div>'.repeat(10_000)}bottom${'</div>'.repeat(10_000)}</body></html>`);
  },
  '/nested-2000.html': (_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<html><body>${'<div>'.repeat(2000)}bottom${'</div>'.repeat(2000)}</body></html>`);
  },
  '/nested-200000.html': (_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<html><body>${'<div>'.repeat(200_000)}bottom${'</div>'.repeat(200_000)}</body></html>`);
  },
  '/wide.html': (_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<html><body>${'<p>line</p>'.repeat(70_000)}</body></html>`);
  },
  '/missing': (_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('no such page');
  },
};

let server: CountingServer;
let opts: WebFetchOptions;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
    if (route) route(req, res);
    else {
      res.writeHead(404);
      res.end();
    }
  });
  opts = { maxBytes: 100_000, timeoutMs: 60_000, maxRedirects: 5, allow: parseAllowList('127.0.0.1') };
});
afterAll(() => server.close());

describe('HTML as Markdown', () => {
  it('keeps the main content, drops scripts and page chrome, and makes every link absolute', async () => {
    const res = await webFetch(`${server.origin}/guide/page.html`, opts);
    expect(res).toMatchObject({ status: 200, format: 'markdown', content_type: 'text/html', title: 'Guide to Widgets' });
    const md = res.content;
    expect(md).toContain('Installing');
    expect(md).toContain(`[installation notes](${server.origin}/docs/install)`);
    expect(md).toContain(`[FAQ](${server.origin}/faq.html#top)`);
    expect(md).toContain('[upstream page](https://other.example/page)');
    expect(md).toContain(`![Diagram](${server.origin}/guide/img/diagram.png)`);
    expect(md).toMatch(/^- First step$/m);
    expect(md).toContain('```\nnpm install widget\n```');
    expect(md).toContain('this link');
    expect(md).not.toContain('javascript:');
    expect(md).not.toContain('data:image');
    expect(md).not.toMatch(/tracking|also hidden|color:red|Copyright footer/);
  });

  it('resolves links against the URL after redirects', async () => {
    const res = await webFetch(`${server.origin}/moved`, opts);
    expect(res.final_url).toBe(`${server.origin}/guide/page.html`);
    expect(res.redirects).toEqual([`${server.origin}/guide/page.html`]);
    expect(res.content).toContain(`![Diagram](${server.origin}/guide/img/diagram.png)`);
  });

  it('honours <base href>', async () => {
    const res = await webFetch(`${server.origin}/based`, opts);
    expect(res.content).toContain('[the intro](https://docs.example/v2/intro)');
  });

  it('handles a short page (the fallback path) with links still absolute', async () => {
    const res = await webFetch(`${server.origin}/short`, opts);
    expect(res.content).toContain(`Just [one](${server.origin}/x) line.`);
    expect(res.content).not.toMatch(/menu|foot/);
  });

  // The converter runs in a worker (src/web/html-to-markdown.ts): these pages used to hold the event loop
  // for minutes (and 10,000 levels overflowed its stack); they are refused right after the parse.
  it('refuses a page nested 10,000 deep as FILE_TOO_LARGE', async () => {
    const err = await failure(webFetch(`${server.origin}/deep.html`, { ...opts, maxBytes: 1_000_000 }));
    expect(err.code).toBe('FILE_TOO_LARGE');
    expect(err.message).toContain('512 deep');
    expect(err.details).toMatchObject({ max_depth: 512 });
  });

  it('refuses a page nested 2,000 deep (checked on the parsed tree) and 200,000 deep (2.2 MB, before parsing)', async () => {
    for (const route of ['/nested-2000.html', '/nested-200000.html']) {
      const err = await failure(webFetch(`${server.origin}${route}`, { ...opts, maxBytes: 3_000_000, timeoutMs: 60_000 }));
      expect(err.code, route).toBe('FILE_TOO_LARGE');
      expect(err.details, route).toMatchObject({ max_depth: 512 });
    }
  });

  it('refuses a page of 70,000 elements as FILE_TOO_LARGE', async () => {
    const err = await failure(webFetch(`${server.origin}/wide.html`, { ...opts, maxBytes: 1_000_000, timeoutMs: 60_000 }));
    expect(err.code).toBe('FILE_TOO_LARGE');
    expect(err.details).toMatchObject({ max_elements: 60_000 });
  });

  it('stops a conversion at the call time limit with TIMEOUT', async () => {
    // No time left after the fetch: the conversion cannot start, the call answers TIMEOUT rather than run on.
    const { htmlToMarkdown } = await import('../../src/web/html-to-markdown.js');
    const err = await failure(htmlToMarkdown('<html><body><p>x</p></body></html>', `${server.origin}/`, 0));
    expect(err.code).toBe('TIMEOUT');
  });
});

describe('JSON and text as they are', () => {
  it('returns JSON unchanged', async () => {
    const res = await webFetch(`${server.origin}/data.json`, opts);
    expect(res).toMatchObject({ format: 'json', content: '{"a": [1, 2, 3],\n "b": "ü"}', title: null });
  });

  it('decodes text by its declared charset', async () => {
    const res = await webFetch(`${server.origin}/notes.txt`, opts);
    expect(res).toMatchObject({ format: 'text', content: 'café', bytes: 4 });
  });

  it('takes an untyped text body as text, and refuses an untyped binary one', async () => {
    expect((await webFetch(`${server.origin}/untyped-text`, opts)).content).toBe('plain words');
    const err = await failure(webFetch(`${server.origin}/untyped-binary`, opts));
    expect(err.code).toBe('BINARY_FILE');
  });

  it('decodes gzip', async () => {
    expect((await webFetch(`${server.origin}/gzip-small`, opts)).content).toBe('compressed hello');
  });

  it('returns an error page with its status', async () => {
    const res = await webFetch(`${server.origin}/missing`, opts);
    expect(res).toMatchObject({ status: 404, content: 'no such page' });
  });
});

describe('refusals and limits', () => {
  it.each(['/image.png', '/file.bin'])('refuses %s by its content type, naming it', async (path) => {
    const err = await failure(webFetch(`${server.origin}${path}`, opts));
    expect(err.code).toBe('BINARY_FILE');
    expect(err.message).toMatch(/(image\/png|application\/octet-stream).*only HTML \(as Markdown\), JSON and text/);
  });

  it.each(['/big', '/big-chunked', '/gzip-bomb'])('refuses %s over max_bytes', async (path) => {
    const err = await failure(webFetch(`${server.origin}${path}`, { ...opts, maxBytes: 1000 }));
    expect(err.code).toBe('FILE_TOO_LARGE');
    expect(err.message).toContain('max_bytes (1000 bytes)');
  });

  it('accepts a body of exactly max_bytes', async () => {
    expect((await webFetch(`${server.origin}/big`, { ...opts, maxBytes: 5000 })).bytes).toBe(5000);
  });

  it.each(['/slow-body', '/slow-headers'])('stops %s at the time limit', async (path) => {
    const err = await failure(webFetch(`${server.origin}${path}`, { ...opts, timeoutMs: 300 }));
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toContain('300 ms');
  });

  it.each([
    ['ftp://example.com/file', /Only http:\/\/ and https:\/\//],
    ['file:///etc/passwd', /Only http:\/\/ and https:\/\//],
    ['javascript:alert(1)', /Only http:\/\/ and https:\/\//],
    ['not a url', /Not a valid absolute URL/],
    ['/relative/path', /Not a valid absolute URL/],
    ['http://user:secret@example.com/', /credentials/],
    [`http://example.com/${'a'.repeat(9000)}`, /longer than/],
  ])('refuses %s as INVALID_PARAM', async (url, message) => {
    const err = await failure(webFetch(url, opts));
    expect(err.code).toBe('INVALID_PARAM');
    expect(err.message).toMatch(message);
  });

  it('reports a closed port as a network failure', async () => {
    const closed = await startServer((_req, res) => res.end());
    const { origin } = closed;
    await closed.close();
    const err = await failure(webFetch(`${origin}/`, opts));
    expect(err.code).toBe('NETWORK_ERROR');
    expect(err.message).toMatch(/refused the connection \(ECONNREFUSED\)/);
    expect(err.details).toMatchObject({ cause: 'ECONNREFUSED' });
  });
});
