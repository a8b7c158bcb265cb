// The URLs the web tools accept. Apart from fetch.ts so that settings and search can vet a URL without
// loading undici, which fetch.ts needs and which is loaded on the first web call only.
import { ToolError } from '../envelope.js';

const MAX_URL_LENGTH = 8192;

/** Parses and vets a URL a caller gave (or a redirect named): http/https, a host, no credentials. */
export function parseWebUrl(input: string, what = 'url'): URL {
  if (input.length > MAX_URL_LENGTH) throw new ToolError('INVALID_PARAM', `The ${what} is longer than ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new ToolError('INVALID_PARAM', `Not a valid absolute URL: '${input.slice(0, 200)}'. Give a full http:// or https:// URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolError('INVALID_PARAM', `Only http:// and https:// URLs can be fetched, not ${url.protocol}//.`);
  }
  if (url.hostname === '') throw new ToolError('INVALID_PARAM', `The ${what} has no host.`);
  // Credentials in a URL would be sent to whatever host a redirect names; nothing here needs them.
  if (url.username !== '' || url.password !== '') throw new ToolError('INVALID_PARAM', 'URLs with a user name or password are not fetched; remove the credentials.');
  url.hash = '';
  return url;
}
