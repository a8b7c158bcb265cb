import { z } from 'zod';
import { MAX_SEARCH_LIMIT, webSearch as searchWeb } from '../web/search.js';
import { DEFAULT_WEB_SETTINGS } from '../web/settings.js';
import { defineTool } from './define.js';

const Input = z.strictObject({
  query: z.string().min(1).max(400).describe('What to search for.'),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(5).describe(`Most results to return (1 to ${MAX_SEARCH_LIMIT}).`),
});

const Output = z.object({
  provider: z.enum(['duckduckgo', 'searxng', 'brave']),
  query: z.string(),
  results: z.array(z.object({ title: z.string(), url: z.string(), snippet: z.string() })),
  note: z.string().optional().describe("What to know about these results (DuckDuckGo's are instant answers, not a result list)."),
});

export const webSearch = defineTool({
  name: 'web_search',
  aliases: ['web-search'],
  description:
    "Search the web through the operator's provider: results of {title, url, snippet}. With the default provider (DuckDuckGo's Instant Answer API) results are an abstract and related topics, not a full result list.",
  summary: '`query`, `limit` through the configured provider (DuckDuckGo, SearXNG, Brave); results `{title, url, snippet}`',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { query: 'ETag If-Match optimistic locking', limit: 3 },
  output: Output,
  async run(ctx, input) {
    const web = ctx.ws.limits.web ?? DEFAULT_WEB_SETTINGS;
    const res = await searchWeb(input.query, input.limit, {
      settings: web.search,
      allow: web.allow,
      maxBytes: web.maxBytes,
      timeoutMs: web.timeoutMs,
      maxRedirects: web.maxRedirects,
      lookup: web.lookup,
    });
    const n = res.results.length;
    return {
      data: res,
      text: `${n} result${n === 1 ? '' : 's'} for '${res.query}' from ${res.provider}.${res.note ? ` ${res.note}` : ''}`,
      stats: { matches: n },
    };
  },
});
