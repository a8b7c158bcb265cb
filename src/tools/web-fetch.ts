import { z } from 'zod';
import { DEFAULT_WEB_SETTINGS } from '../web/settings.js';
import { defineTool } from './define.js';

const Input = z.strictObject({
  url: z.string().min(1).describe('The http:// or https:// URL to fetch.'),
  max_bytes: z.number().int().min(1).optional().describe('Largest response body to accept (default and ceiling: TOOLGATE_WEB_MAX_BYTES); a larger one is FILE_TOO_LARGE.'),
});

const Output = z.object({
  url: z.string().describe('The URL asked for, as parsed.'),
  final_url: z.string().describe('The URL the content came from, after redirects.'),
  status: z.number().int().describe('HTTP status of the final response.'),
  content_type: z.string().describe('Media type without parameters.'),
  format: z.enum(['markdown', 'json', 'text']).describe('markdown for HTML pages (main content, links absolute); json and text as received.'),
  title: z.string().nullable(),
  content: z.string(),
  bytes: z.number().int().describe('Body bytes received (after content decoding).'),
  redirects: z.array(z.string()).describe('Each redirect target followed, in order.'),
  truncated: z.boolean().describe('content was cut at TOOLGATE_MAX_OUTPUT_BYTES.'),
});

/** `text` cut to at most `max` UTF-8 bytes without splitting a character. */
function cutUtf8(text: string, max: number): string | null {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= max) return null;
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--; // back off continuation bytes
  return buf.subarray(0, end).toString('utf8');
}

export const webFetch = defineTool({
  name: 'web_fetch',
  aliases: ['web-fetch'],
  description:
    'Fetch a web page or document over http(s): HTML is returned as readable Markdown (main content, links absolute), JSON and text as they are; other types are refused. Private, loopback, link-local and cloud-metadata addresses are refused unless the operator allows them.',
  summary: 'an http(s) URL: HTML as readable Markdown (links absolute), JSON and text as they are, other types refused; `max_bytes`; internal addresses refused ([Web tools](#web-tools))',
  risk: 'read',
  riskLevel: 'low',
  input: Input,
  example: { url: 'https://example.com/' },
  output: Output,
  async run(ctx, input) {
    const web = ctx.ws.limits.web ?? DEFAULT_WEB_SETTINGS;
    const maxBytes = Math.min(input.max_bytes ?? web.maxBytes, web.maxBytes);
    // Loaded on the first call: undici and the HTML converter weigh more than the rest of the service.
    const { webFetch: fetchGuarded } = await import('../web/fetch.js');
    const res = await fetchGuarded(input.url, { allow: web.allow, maxBytes, timeoutMs: web.timeoutMs, maxRedirects: web.maxRedirects, lookup: web.lookup }, ctx.signal);
    const cut = cutUtf8(res.content, ctx.ws.limits.maxOutputBytes);
    const shown = res.format === 'markdown' ? 'as Markdown' : `as ${res.format}`;
    const moved = res.final_url !== res.url ? ` (redirected to ${res.final_url})` : '';
    return {
      data: { ...res, content: cut ?? res.content, truncated: cut !== null },
      text: `Fetched ${res.url}${moved}: HTTP ${res.status}, ${res.content_type || 'no content type'} ${shown}, ${res.bytes} bytes${cut !== null ? `; content cut at ${ctx.ws.limits.maxOutputBytes} bytes` : ''}.`,
      stats: { bytes_read: res.bytes, redirects: res.redirects.length },
      partial: cut !== null,
      audit: { bytes_read: res.bytes },
    };
  },
});
