// The web_search tool's engine: one query to the configured provider (DuckDuckGo, SearXNG or Brave) through the
// same guarded fetch as web_fetch, answered as {title, url, snippet} results.
import { E } from '../errors.js';
import type { SafeRequestOptions } from './fetch.js';
import { parseWebUrl } from './web-url.js';

export const SEARCH_PROVIDERS = ['duckduckgo', 'searxng', 'brave'] as const;
export type SearchProvider = (typeof SEARCH_PROVIDERS)[number];

export interface SearchSettings {
  provider: SearchProvider;
  /** The provider's endpoint; for SearXNG the instance's base URL (`/search` is added when missing). */
  url?: string;
  /** Brave's subscription token. */
  key?: string;
}

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface WebSearchResponse {
  provider: SearchProvider;
  query: string;
  results: SearchResult[];
  /** What the model should know about these results (DuckDuckGo's are instant answers, not a result list). */
  note?: string;
}

export type WebSearchOptions = Pick<SafeRequestOptions, 'allow' | 'lookup' | 'ports' | 'timeoutMs' | 'maxBytes' | 'maxRedirects'> & {
  settings: SearchSettings;
};

export const MAX_SEARCH_LIMIT = 20;
const MAX_QUERY_LENGTH = 400;

const DEFAULT_URL: Record<SearchProvider, string | undefined> = {
  duckduckgo: 'https://api.duckduckgo.com/',
  searxng: undefined, // self-hosted: no default instance
  brave: 'https://api.search.brave.com/res/v1/web/search',
};

const DUCKDUCKGO_NOTE =
  "DuckDuckGo's Instant Answer API returns an abstract and related topics, not a full list of web results; for broader queries fetch a likely page with web_fetch, or ask the operator to configure SearXNG or Brave.";

/**
 * Reads TOOLGATE_WEB_SEARCH_PROVIDER, TOOLGATE_WEB_SEARCH_URL and TOOLGATE_WEB_SEARCH_KEY; throws an Error naming
 * the variable at fault, so a bad setting fails at start-up rather than on the first search.
 */
export function searchSettingsFromEnv(env: Record<string, string | undefined> = process.env): SearchSettings {
  const provider = (env.TOOLGATE_WEB_SEARCH_PROVIDER ?? 'duckduckgo').trim().toLowerCase();
  if (!(SEARCH_PROVIDERS as readonly string[]).includes(provider)) {
    throw new Error(`TOOLGATE_WEB_SEARCH_PROVIDER must be one of ${SEARCH_PROVIDERS.join(', ')} (got '${provider}')`);
  }
  const url = env.TOOLGATE_WEB_SEARCH_URL?.trim() || undefined;
  if (url !== undefined) {
    try {
      parseWebUrl(url);
    } catch {
      throw new Error('TOOLGATE_WEB_SEARCH_URL must be an http:// or https:// URL without credentials');
    }
  }
  const key = env.TOOLGATE_WEB_SEARCH_KEY?.trim() || undefined;
  if (provider === 'brave' && key === undefined) throw new Error('TOOLGATE_WEB_SEARCH_KEY is required for the brave provider (its subscription token)');
  if (provider === 'searxng' && url === undefined) throw new Error("TOOLGATE_WEB_SEARCH_URL is required for the searxng provider (the instance's base URL)");
  return { provider: provider as SearchProvider, url, key };
}

// The named entities search snippets actually carry; numeric ones are decoded generally.
const ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', mdash: '—', ndash: '–', hellip: '…',
  laquo: '«', raquo: '»', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', copy: '©', reg: '®', trade: '™', middot: '·',
};

/** Provider text sometimes carries markup (Brave's <strong> highlights): plain text for the model. */
function plain(text: unknown): string {
  if (typeof text !== 'string') return '';
  return text
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) => {
      if (name[0] === '#') {
        const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

function webUrl(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

type Json = Record<string, unknown>;
const asObject = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A DuckDuckGo topic's title: the link text of its `Result` HTML, else the text before " - ", else its page name. */
function duckTopicTitle(topic: Json, url: string): string {
  const linked = typeof topic.Result === 'string' ? /<a [^>]*>(.*?)<\/a>/i.exec(topic.Result)?.[1] : undefined;
  if (linked && plain(linked)) return plain(linked);
  const text = plain(topic.Text);
  const dash = text.indexOf(' - ');
  if (dash > 0) return text.slice(0, dash);
  const page = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '').replace(/_/g, ' ');
  return page || text;
}

function parseDuckDuckGo(body: Json): SearchResult[] {
  const out: SearchResult[] = [];
  const abstractUrl = webUrl(body.AbstractURL);
  if (abstractUrl && plain(body.AbstractText)) {
    out.push({ title: plain(body.Heading) || plain(body.AbstractSource) || abstractUrl, url: abstractUrl, snippet: plain(body.AbstractText) });
  }
  const definitionUrl = webUrl(body.DefinitionURL);
  if (definitionUrl && plain(body.Definition)) {
    out.push({ title: plain(body.DefinitionSource) || plain(body.Heading) || definitionUrl, url: definitionUrl, snippet: plain(body.Definition) });
  }
  const topics = (items: unknown[]): void => {
    for (const item of items) {
      const topic = asObject(item);
      // Disambiguation pages group topics: {Name, Topics: [...]}.
      if (Array.isArray(topic.Topics)) {
        topics(topic.Topics);
        continue;
      }
      const url = webUrl(topic.FirstURL);
      if (url) out.push({ title: duckTopicTitle(topic, url), url, snippet: plain(topic.Text) });
    }
  };
  topics(asArray(body.Results));
  topics(asArray(body.RelatedTopics));
  return out;
}

function parseSearxng(body: Json): SearchResult[] {
  return asArray(body.results).flatMap((item) => {
    const r = asObject(item);
    const url = webUrl(r.url);
    return url ? [{ title: plain(r.title) || url, url, snippet: plain(r.content) }] : [];
  });
}

function parseBrave(body: Json): SearchResult[] {
  return asArray(asObject(body.web).results).flatMap((item) => {
    const r = asObject(item);
    const url = webUrl(r.url);
    return url ? [{ title: plain(r.title) || url, url, snippet: plain(r.description) }] : [];
  });
}

function requestFor(settings: SearchSettings, query: string, limit: number): { url: string; headers: Record<string, string> } {
  const base = settings.url ?? DEFAULT_URL[settings.provider];
  if (base === undefined) throw E.searchProviderNoUrl(settings.provider);
  const url = new URL(base);
  const headers: Record<string, string> = { accept: 'application/json' };
  switch (settings.provider) {
    case 'duckduckgo':
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      url.searchParams.set('no_html', '1');
      url.searchParams.set('no_redirect', '1'); // a !bang query would otherwise answer with a redirect target
      break;
    case 'searxng':
      if (!url.pathname.endsWith('/search')) url.pathname = `${url.pathname.replace(/\/$/, '')}/search`;
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      break;
    case 'brave':
      if (!settings.key) throw E.braveNeedsToken();
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(Math.min(limit, MAX_SEARCH_LIMIT)));
      headers['x-subscription-token'] = settings.key;
      break;
  }
  return { url: url.href, headers };
}

/** Searches the web through the configured provider; at most `limit` results, duplicates (same URL) dropped. */
export async function webSearch(query: string, limit: number, opts: WebSearchOptions): Promise<WebSearchResponse> {
  const q = query.trim();
  if (q === '') throw E.searchQueryEmpty();
  if (q.length > MAX_QUERY_LENGTH) throw E.searchQueryTooLong(MAX_QUERY_LENGTH);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw E.searchLimitInvalid(MAX_SEARCH_LIMIT);

  const { provider } = opts.settings;
  const request = requestFor(opts.settings, q, limit);
  // undici (in fetch.ts) is loaded by the first web call, not at start.
  const { safeRequest } = await import('./fetch.js');
  const res = await safeRequest(request.url, { ...opts, headers: request.headers });
  if (res.status < 200 || res.status > 299) {
    const hint = res.status === 401 || res.status === 403 ? ' check TOOLGATE_WEB_SEARCH_KEY' : res.status === 429 ? ' it is rate limiting; try again later' : ' try again later';
    throw E.searchProviderStatus(provider, res.status, hint);
  }
  let body: Json;
  try {
    // DuckDuckGo labels its JSON application/x-javascript: the body is parsed whatever the content type says.
    body = asObject(JSON.parse(res.body.toString('utf8')));
  } catch {
    throw E.searchProviderNotJson(provider);
  }
  const parsed = provider === 'duckduckgo' ? parseDuckDuckGo(body) : provider === 'searxng' ? parseSearxng(body) : parseBrave(body);
  const seen = new Set<string>();
  const results = parsed.filter((r) => !seen.has(r.url) && seen.add(r.url)).slice(0, limit);
  return { provider, query: q, results, ...(provider === 'duckduckgo' ? { note: DUCKDUCKGO_NOTE } : {}) };
}
