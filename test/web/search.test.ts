// web_search against local fakes that answer in each real provider's documented shape.
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_ALLOW_LIST, parseAllowList } from '../../src/web/address-policy.js';
import { searchSettingsFromEnv, webSearch, type SearchSettings, type WebSearchOptions } from '../../src/web/search.js';
import { failure, startServer, type CountingServer } from './servers.js';

// DuckDuckGo Instant Answer API (`?q=…&format=json&no_html=1`): an abstract, plus related topics, some grouped.
const DUCKDUCKGO = {
  Abstract: '',
  AbstractSource: 'Wikipedia',
  AbstractText: 'Node.js is a cross-platform JavaScript runtime environment.',
  AbstractURL: 'https://en.wikipedia.org/wiki/Node.js',
  Answer: '',
  Definition: '',
  DefinitionURL: '',
  Heading: 'Node.js',
  Results: [{ FirstURL: 'https://nodejs.org/', Result: '<a href="https://nodejs.org/"><b>Official site</b></a><a href="https://nodejs.org/"></a>', Text: 'Official site' }],
  RelatedTopics: [
    {
      FirstURL: 'https://duckduckgo.com/Deno_(software)',
      Result: '<a href="https://duckduckgo.com/Deno_(software)">Deno (software)</a>A runtime for JavaScript and TypeScript.',
      Text: 'Deno (software) A runtime for JavaScript and TypeScript.',
    },
    {
      Name: 'Software',
      Topics: [
        { FirstURL: 'https://duckduckgo.com/npm', Result: '<a href="https://duckduckgo.com/npm">npm</a>Package manager for Node.js', Text: 'npm Package manager for Node.js' },
        { FirstURL: 'https://duckduckgo.com/Express.js', Text: 'Express.js - A web framework for Node.js' },
      ],
    },
    { FirstURL: 'https://nodejs.org/', Text: 'duplicate of the official site' },
  ],
  Type: 'A',
};

// SearXNG `/search?q=…&format=json`.
const SEARXNG = {
  query: 'node',
  number_of_results: 0,
  results: [
    { url: 'https://nodejs.org/en', title: 'Node.js &mdash; Run JavaScript Everywhere', content: 'Node.js is a free, open-source runtime.', engine: 'duckduckgo', score: 3 },
    { url: 'https://en.wikipedia.org/wiki/Node.js', title: 'Node.js - Wikipedia', content: 'Node.js is a <b>cross-platform</b> runtime.', engine: 'wikipedia' },
    { url: 'javascript:alert(1)', title: 'not a web result', content: '' },
    { url: 'https://github.com/nodejs/node', title: 'nodejs/node', content: 'Node.js JavaScript runtime' },
  ],
  answers: [],
  suggestions: [],
};

// Brave Web Search API `res/v1/web/search?q=…` with X-Subscription-Token.
const BRAVE = {
  type: 'search',
  query: { original: 'node' },
  web: {
    type: 'search',
    results: [
      { title: 'Node.js — Run JavaScript Everywhere', url: 'https://nodejs.org/', description: '<strong>Node.js</strong>&#x00AE; is a free runtime &amp; more.', type: 'search_result' },
      { title: 'Node.js - Wikipedia', url: 'https://en.wikipedia.org/wiki/Node.js', description: 'Node.js is a runtime.', type: 'search_result' },
    ],
  },
};

let server: CountingServer;
const seen: Array<{ path: string; query: URLSearchParams; headers: http.IncomingHttpHeaders }> = [];

beforeAll(async () => {
  server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
    const json = (status: number, body: unknown, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (url.pathname === '/ddg/') return json(200, DUCKDUCKGO, 'application/x-javascript'); // as DuckDuckGo labels it
    if (url.pathname === '/searx/search') return json(200, SEARXNG);
    if (url.pathname === '/brave/res/v1/web/search') {
      if (req.headers['x-subscription-token'] !== 'secret-token') return json(401, { error: 'unauthorized' });
      return json(200, BRAVE);
    }
    if (url.pathname === '/html/search') return json(200, '<html>format not enabled</html>', 'text/html');
    if (url.pathname === '/limited/search') return json(429, { error: 'too many' });
    json(404, {});
  });
});
afterAll(() => server.close());

function options(settings: SearchSettings, allow = parseAllowList('127.0.0.1')): WebSearchOptions {
  return { settings, allow, maxBytes: 1_000_000, timeoutMs: 3000, maxRedirects: 2 };
}

describe('DuckDuckGo', () => {
  it('turns the abstract, results and (nested) related topics into results, without duplicates, and says what they are', async () => {
    const res = await webSearch(' node js ', 10, options({ provider: 'duckduckgo', url: `${server.origin}/ddg/` }));
    const last = seen.at(-1)!;
    expect(last.query.get('q')).toBe('node js');
    expect(last.query.get('format')).toBe('json');
    expect(last.query.get('no_html')).toBe('1');
    expect(res.provider).toBe('duckduckgo');
    expect(res.results).toEqual([
      { title: 'Node.js', url: 'https://en.wikipedia.org/wiki/Node.js', snippet: 'Node.js is a cross-platform JavaScript runtime environment.' },
      { title: 'Official site', url: 'https://nodejs.org/', snippet: 'Official site' },
      { title: 'Deno (software)', url: 'https://duckduckgo.com/Deno_(software)', snippet: 'Deno (software) A runtime for JavaScript and TypeScript.' },
      { title: 'npm', url: 'https://duckduckgo.com/npm', snippet: 'npm Package manager for Node.js' },
      { title: 'Express.js', url: 'https://duckduckgo.com/Express.js', snippet: 'Express.js - A web framework for Node.js' },
    ]);
    expect(res.note).toMatch(/not a full list of web results/);
  });

  it('stops at limit', async () => {
    const res = await webSearch('node', 2, options({ provider: 'duckduckgo', url: `${server.origin}/ddg/` }));
    expect(res.results.map((r) => r.url)).toEqual(['https://en.wikipedia.org/wiki/Node.js', 'https://nodejs.org/']);
  });
});

describe('SearXNG', () => {
  it('adds /search to the instance URL and maps results[].title/url/content', async () => {
    const res = await webSearch('node', 10, options({ provider: 'searxng', url: `${server.origin}/searx/` }));
    const last = seen.at(-1)!;
    expect(last.path).toBe('/searx/search');
    expect(last.query.get('format')).toBe('json');
    expect(res.results).toEqual([
      { title: 'Node.js — Run JavaScript Everywhere', url: 'https://nodejs.org/en', snippet: 'Node.js is a free, open-source runtime.' },
      { title: 'Node.js - Wikipedia', url: 'https://en.wikipedia.org/wiki/Node.js', snippet: 'Node.js is a cross-platform runtime.' },
      { title: 'nodejs/node', url: 'https://github.com/nodejs/node', snippet: 'Node.js JavaScript runtime' },
    ]);
    expect(res.note).toBeUndefined();
  });

  it('explains an instance whose JSON output is off', async () => {
    const err = await failure(webSearch('node', 5, options({ provider: 'searxng', url: `${server.origin}/html` })));
    expect(err.code).toBe('EXECUTION_ERROR');
    expect(err.message).toMatch(/did not answer JSON.*search\.formats/);
  });

  it('reports a provider that rate-limits', async () => {
    const err = await failure(webSearch('node', 5, options({ provider: 'searxng', url: `${server.origin}/limited` })));
    expect(err.message).toMatch(/HTTP 429; it is rate limiting/);
  });
});

describe('Brave', () => {
  it('sends the token and count, and maps web.results with the markup stripped', async () => {
    const res = await webSearch('node', 1, options({ provider: 'brave', url: `${server.origin}/brave/res/v1/web/search`, key: 'secret-token' }));
    const last = seen.at(-1)!;
    expect(last.headers['x-subscription-token']).toBe('secret-token');
    expect(last.query.get('count')).toBe('1');
    expect(res.results).toEqual([{ title: 'Node.js — Run JavaScript Everywhere', url: 'https://nodejs.org/', snippet: 'Node.js® is a free runtime & more.' }]);
  });

  it('names the key when the provider refuses it', async () => {
    const err = await failure(webSearch('node', 3, options({ provider: 'brave', url: `${server.origin}/brave/res/v1/web/search`, key: 'wrong' })));
    expect(err.message).toMatch(/HTTP 401; check TOOLGATE_WEB_SEARCH_KEY/);
  });
});

describe('the guarded fetch underneath', () => {
  it('refuses a provider on an address that is not allowed, before any request', async () => {
    const before = server.requests;
    const err = await failure(webSearch('node', 3, options({ provider: 'searxng', url: `${server.origin}/searx/` }, EMPTY_ALLOW_LIST)));
    expect(err.code).toBe('ACCESS_DENIED');
    expect(server.requests).toBe(before);
  });

  it.each([
    ['', 5, /empty/],
    ['x'.repeat(401), 5, /longer than 400/],
    ['node', 0, /limit/],
    ['node', 21, /limit/],
    ['node', 1.5, /limit/],
  ])('refuses query %j with limit %d as INVALID_PARAM', async (query, limit, message) => {
    const err = await failure(webSearch(query, limit, options({ provider: 'duckduckgo', url: `${server.origin}/ddg/` })));
    expect(err.code).toBe('INVALID_PARAM');
    expect(err.message).toMatch(message);
  });
});

describe('searchSettingsFromEnv', () => {
  it('defaults to DuckDuckGo', () => {
    expect(searchSettingsFromEnv({})).toEqual({ provider: 'duckduckgo', url: undefined, key: undefined });
  });

  it('reads provider, URL and key', () => {
    expect(searchSettingsFromEnv({ TOOLGATE_WEB_SEARCH_PROVIDER: 'Brave', TOOLGATE_WEB_SEARCH_KEY: 'k' })).toEqual({ provider: 'brave', url: undefined, key: 'k' });
    expect(searchSettingsFromEnv({ TOOLGATE_WEB_SEARCH_PROVIDER: 'searxng', TOOLGATE_WEB_SEARCH_URL: 'https://searx.corp/' }).url).toBe('https://searx.corp/');
  });

  it.each([
    [{ TOOLGATE_WEB_SEARCH_PROVIDER: 'google' }, /TOOLGATE_WEB_SEARCH_PROVIDER/],
    [{ TOOLGATE_WEB_SEARCH_PROVIDER: 'brave' }, /TOOLGATE_WEB_SEARCH_KEY/],
    [{ TOOLGATE_WEB_SEARCH_PROVIDER: 'searxng' }, /TOOLGATE_WEB_SEARCH_URL/],
    [{ TOOLGATE_WEB_SEARCH_URL: 'ftp://x/' }, /TOOLGATE_WEB_SEARCH_URL/],
  ])('rejects %j, naming the variable', (env, message) => {
    expect(() => searchSettingsFromEnv(env)).toThrow(message);
  });
});
