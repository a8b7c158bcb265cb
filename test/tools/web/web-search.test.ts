// web_search through the real app, against local fakes that answer in each provider's documented shape; the
// provider, its URL and key come from the TOOLGATE_WEB_SEARCH_* settings, as in production.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTINGS } from '../../../src/config.js';
import { makeApp, type TestApp } from '../../helpers.js';
import { startServer, type CountingServer } from '../../web/servers.js';

const DUCKDUCKGO = {
  Heading: 'Node.js',
  AbstractText: 'Node.js is a cross-platform JavaScript runtime environment.',
  AbstractURL: 'https://en.wikipedia.org/wiki/Node.js',
  Results: [{ FirstURL: 'https://nodejs.org/', Text: 'Official site' }],
  RelatedTopics: [
    { FirstURL: 'https://duckduckgo.com/Deno_(software)', Text: 'Deno (software) A runtime for JavaScript and TypeScript.' },
    { Name: 'Software', Topics: [{ FirstURL: 'https://duckduckgo.com/npm', Text: 'npm Package manager for Node.js' }] },
  ],
  Type: 'A',
};
const SEARXNG = {
  query: 'node',
  results: [
    { url: 'https://nodejs.org/en', title: 'Node.js &mdash; Run JavaScript Everywhere', content: 'Node.js is a free, open-source runtime.' },
    { url: 'https://github.com/nodejs/node', title: 'nodejs/node', content: 'Node.js <b>JavaScript</b> runtime' },
  ],
};
const BRAVE = {
  type: 'search',
  web: {
    results: [
      { title: 'Node.js — Run JavaScript Everywhere', url: 'https://nodejs.org/', description: '<strong>Node.js</strong> is a free runtime &amp; more.' },
      { title: 'Node.js - Wikipedia', url: 'https://en.wikipedia.org/wiki/Node.js', description: 'Node.js is a runtime.' },
    ],
  },
};

let provider: CountingServer;
const seen: Array<{ url: string; token: string | undefined }> = [];
const apps: TestApp[] = [];

function json(res: http.ServerResponse, body: unknown, type = 'application/json'): void {
  res.writeHead(200, { 'content-type': type });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  provider = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ url: req.url ?? '', token: req.headers['x-subscription-token'] as string | undefined });
    if (url.pathname === '/ddg/') return json(res, DUCKDUCKGO, 'application/x-javascript');
    if (url.pathname === '/searx/search') return json(res, SEARXNG);
    if (url.pathname === '/brave/res/v1/web/search') {
      if (req.headers['x-subscription-token'] !== 'test-token') {
        res.writeHead(401);
        return res.end();
      }
      return json(res, BRAVE);
    }
    res.writeHead(404);
    res.end();
  });
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await provider.close();
});

async function appWith(env: Record<string, string>): Promise<TestApp> {
  const app = await makeApp({ TOOLGATE_WEB_ALLOW: '127.0.0.1', ...env });
  apps.push(app);
  return app;
}

describe('web_search: providers by settings', () => {
  it('duckduckgo: instant answers and related topics, with the note that says so', async () => {
    const t = await appWith({ TOOLGATE_WEB_SEARCH_URL: `${provider.origin}/ddg/` });
    const res = await t.call('web-search', { query: 'node js', limit: 3 });
    expect(res.status).toBe(200);
    const data = res.body.data as { provider: string; results: Array<{ title: string; url: string; snippet: string }>; note?: string };
    expect(data.provider).toBe('duckduckgo');
    expect(data.results).toHaveLength(3);
    expect(data.results[0]).toMatchObject({ url: 'https://en.wikipedia.org/wiki/Node.js', snippet: expect.stringContaining('JavaScript runtime') });
    expect(data.results.map((r) => r.url)).toContain('https://nodejs.org/');
    expect(data.note).toMatch(/not a full list/);
    expect(res.body.context).toMatchObject({ risk: 'read', risk_level: 'low' });
    const asked = new URL(seen.at(-1)!.url, 'http://x').searchParams;
    expect(asked.get('q')).toBe('node js');
    expect(asked.get('format')).toBe('json');
  });

  it('searxng: the instance base URL gains /search, results as {title, url, snippet}', async () => {
    const t = await appWith({ TOOLGATE_WEB_SEARCH_PROVIDER: 'searxng', TOOLGATE_WEB_SEARCH_URL: `${provider.origin}/searx` });
    const res = await t.call('web_search', { query: 'node' });
    expect(res.body.data).toEqual({
      provider: 'searxng',
      query: 'node',
      results: [
        { title: 'Node.js — Run JavaScript Everywhere', url: 'https://nodejs.org/en', snippet: 'Node.js is a free, open-source runtime.' },
        { title: 'nodejs/node', url: 'https://github.com/nodejs/node', snippet: 'Node.js JavaScript runtime' },
      ],
    });
    expect(res.body.text).toBe("2 results for 'node' from searxng.");
  });

  it('brave: the key from TOOLGATE_WEB_SEARCH_KEY as the subscription token, markup stripped', async () => {
    const t = await appWith({ TOOLGATE_WEB_SEARCH_PROVIDER: 'brave', TOOLGATE_WEB_SEARCH_URL: `${provider.origin}/brave/res/v1/web/search`, TOOLGATE_WEB_SEARCH_KEY: 'test-token' });
    const res = await t.call('web_search', { query: 'node', limit: 1 });
    expect(res.body.data).toMatchObject({ provider: 'brave', results: [{ title: 'Node.js — Run JavaScript Everywhere', url: 'https://nodejs.org/', snippet: 'Node.js is a free runtime & more.' }] });
    expect(seen.at(-1)?.token).toBe('test-token');
    expect(new URL(seen.at(-1)!.url, 'http://x').searchParams.get('count')).toBe('1');
  });

  it('a provider that refuses the key is an EXECUTION_ERROR that names the setting', async () => {
    const t = await appWith({ TOOLGATE_WEB_SEARCH_PROVIDER: 'brave', TOOLGATE_WEB_SEARCH_URL: `${provider.origin}/brave/res/v1/web/search`, TOOLGATE_WEB_SEARCH_KEY: 'wrong' });
    const res = await t.call('web_search', { query: 'node' });
    expect(res.body.error?.code).toBe('EXECUTION_ERROR');
    expect(res.body.error?.message).toContain('TOOLGATE_WEB_SEARCH_KEY');
  });

  it('the provider is reached only through the address checks: a loopback provider not allowed is ACCESS_DENIED', async () => {
    const before = provider.requests;
    const t = await makeApp({ TOOLGATE_WEB_SEARCH_PROVIDER: 'searxng', TOOLGATE_WEB_SEARCH_URL: `${provider.origin}/searx` });
    apps.push(t);
    const res = await t.call('web_search', { query: 'node' });
    expect(res.body.error?.code).toBe('ACCESS_DENIED');
    expect(provider.requests).toBe(before);
  });

  it.each([{ query: '' }, { query: '   ' }, { query: 'x', limit: 0 }, { query: 'x', limit: 21 }, { query: 'x'.repeat(401) }])('answers %j with INVALID_PARAM', async (body) => {
    const t = apps[0]!;
    const res = await t.call('web_search', body);
    expect(res.body.error?.code).toBe('INVALID_PARAM');
  });
});

describe('web settings at start', () => {
  it('a TOOLGATE_WEB_ALLOW entry that cannot be read stops the service, named in the message', () => {
    expect(() => loadConfig({ TOOLGATE_WEB_ALLOW: 'wiki.corp, 10.0.0.0/33' })).toThrow(ConfigError);
    expect(() => loadConfig({ TOOLGATE_WEB_ALLOW: 'wiki.corp, 10.0.0.0/33' })).toThrow(/TOOLGATE_WEB_ALLOW=.*cannot read CIDR '10\.0\.0\.0\/33'/);
    expect(() => loadConfig({ TOOLGATE_WEB_ALLOW: 'wiki.corp:8080' })).toThrow(/cannot read 'wiki\.corp:8080'/);
  });

  it('reads hosts, addresses and CIDRs', () => {
    const allow = loadConfig({ TOOLGATE_WEB_ALLOW: 'wiki.corp, *.corp.example, 10.1.0.0/16, ::1' }).webAllow;
    expect(allow?.entries).toEqual(['wiki.corp', '*.corp.example', '10.1.0.0/16', '::1']);
  });

  it.each([
    [{ TOOLGATE_WEB_SEARCH_PROVIDER: 'bing' }, /TOOLGATE_WEB_SEARCH_PROVIDER.*duckduckgo, searxng, brave/],
    [{ TOOLGATE_WEB_SEARCH_PROVIDER: 'brave' }, /TOOLGATE_WEB_SEARCH_KEY is required/],
    [{ TOOLGATE_WEB_SEARCH_PROVIDER: 'searxng' }, /TOOLGATE_WEB_SEARCH_URL is required/],
    [{ TOOLGATE_WEB_SEARCH_URL: 'ftp://search.invalid/' }, /TOOLGATE_WEB_SEARCH_URL must be an http/],
    [{ TOOLGATE_WEB_MAX_BYTES: '10' }, /TOOLGATE_WEB_MAX_BYTES.*at least 1024/],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('marks the search key secret, so config messages hide it', () => {
    expect('secret' in SETTINGS.webSearchKey).toBe(true);
  });
});
