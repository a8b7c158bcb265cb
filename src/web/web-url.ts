// The URLs the web tools accept. Apart from fetch.ts so that settings and search can vet a URL without
// loading undici, which fetch.ts needs and which is loaded on the first web call only.
import { E } from '../errors.js';

const MAX_URL_LENGTH = 8192;

/** Parses and vets a URL a caller gave (or a redirect named): http/https, a host, no credentials. */
export function parseWebUrl(input: string, what = 'url'): URL {
  if (input.length > MAX_URL_LENGTH) throw E.urlTooLong(what, MAX_URL_LENGTH);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw E.urlInvalid(input);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw E.urlSchemeRefused(url.protocol);
  }
  if (url.hostname === '') throw E.urlNoHost(what);
  // Credentials in a URL would be sent to whatever host a redirect names; nothing here needs them.
  if (url.username !== '' || url.password !== '') throw E.urlCredentials();
  url.hash = '';
  return url;
}
