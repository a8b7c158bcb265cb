// The catalogue's errors of web_fetch and web_search (src/errors.ts says how to add one).
import { ToolError } from './tool-error.js';

export const webErrors = {
  unknownTimeZone: (timezone: string) =>
    new ToolError('INVALID_PARAM', `Unknown time zone '${timezone.slice(0, 100)}'; give an IANA name such as 'Europe/Berlin', 'America/New_York' or 'UTC'.`),
  urlTooLong: (what: string, maxUrlLength: number) => new ToolError('INVALID_PARAM', `The ${what} is longer than ${maxUrlLength} characters.`),
  urlInvalid: (input: string) =>
    new ToolError('INVALID_PARAM', `Not a valid absolute URL: '${input.slice(0, 200)}'. Give a full http:// or https:// URL.`),
  urlSchemeRefused: (protocol: string) => new ToolError('INVALID_PARAM', `Only http:// and https:// URLs can be fetched, not ${protocol}//.`),
  urlNoHost: (what: string) => new ToolError('INVALID_PARAM', `The ${what} has no host.`),
  urlCredentials: () => new ToolError('INVALID_PARAM', 'URLs with a user name or password are not fetched; remove the credentials.'),
  pageTooLarge: (message: string, url: string, details: Record<string, unknown> | undefined) =>
    new ToolError('FILE_TOO_LARGE', message, { url, ...details }),
  markdownFailed: (pageUrl: string, message: string) =>
    new ToolError('ENCODING_ERROR', `${pageUrl} could not be converted to Markdown (${message}).`, { url: pageUrl }),
  markdownTimeout: (pageUrl: string, timeoutMs: number) =>
    new ToolError('TIMEOUT', `Converting ${pageUrl} to Markdown did not finish within the web call's ${Math.round(timeoutMs)} ms left and was stopped; fetch a smaller or plain-text version.`, { url: pageUrl }),
  markdownOutOfMemory: (pageUrl: string, htmlWorkerHeapMb: number) =>
    new ToolError('FILE_TOO_LARGE', `Converting ${pageUrl} to Markdown needs more than the converter's ${htmlWorkerHeapMb} MiB memory limit; fetch a smaller or plain-text version.`, { url: pageUrl }),
  fetchDenied: (message: string, reason: string, range: string | undefined, url: string | undefined) =>
    new ToolError('ACCESS_DENIED', message, { reason, ...(range ? { range } : {}), ...(url ? { url } : {}) }),
  fetchTimeout: (href: string, timeoutMs: number) =>
    new ToolError('TIMEOUT', `Fetching ${href} took longer than ${timeoutMs} ms; try again later or a smaller page.`),
  hostNotFound: (hostname: string, code: string) =>
    new ToolError('HOST_NOT_FOUND', `Could not resolve host ${hostname} (${code}: the name has no address); check the URL.`, { host: hostname, cause: code }),
  nameServerSilent: (hostname: string, cause: string) =>
    new ToolError('NETWORK_ERROR', `Could not resolve host ${hostname} (EAI_AGAIN: the name server did not answer); try again later.`, { host: hostname, cause }),
  connectionRefused: (host: string, cause: string) =>
    new ToolError('NETWORK_ERROR', `${host} refused the connection (ECONNREFUSED).`, { host, cause }),
  connectionClosed: (host: string, code: string) =>
    new ToolError('NETWORK_ERROR', `The connection to ${host} was closed before the response was complete (${code}).`, { host, cause: code }),
  tlsCertificate: (host: string, message: string, code: string) =>
    new ToolError('NETWORK_ERROR', `The TLS certificate of ${host} could not be verified (${message}).`, { host, cause: code || 'certificate' }),
  tlsHandshake: (host: string, code: string) =>
    new ToolError('NETWORK_ERROR', `The TLS handshake with ${host} failed (${code}); is it really an https:// server?`, { host, cause: code }),
  fetchFailed: (href: string, message: string) => new ToolError('EXECUTION_ERROR', `Could not fetch ${href}: ${message}`),
  contentEncodingUnsupported: (host: string, value: string) =>
    new ToolError('EXECUTION_ERROR', `${host} sent the body in an unsupported content encoding '${value}'.`),
  responseTooLarge: (href: string, maxBytes: number) =>
    new ToolError('FILE_TOO_LARGE', `The response from ${href} is larger than max_bytes (${maxBytes} bytes); ask for a larger max_bytes or a smaller resource.`, { max_bytes: maxBytes }),
  tooManyRedirects: (href: string, maxRedirects: number, lastHref: string, redirects: string[]) =>
    new ToolError('NETWORK_ERROR', `${href} redirected more than ${maxRedirects} times; fetch the last URL (${lastHref}) directly if you trust it.`, { redirects }),
  redirectInvalid: (href: string) => new ToolError('EXECUTION_ERROR', `${href} redirected to an invalid URL.`),
  redirectSchemeRefused: (href: string, protocol: string) =>
    new ToolError('ACCESS_DENIED', `${href} redirected to a ${protocol}// URL; only http:// and https:// are followed.`),
  mediaTypeRefused: (url: string, mediaType: string) =>
    new ToolError('BINARY_FILE', `${url} is ${mediaType}; web_fetch returns only HTML (as Markdown), JSON and text. Look for an HTML or text version of it.`, { content_type: mediaType }),
  binaryWithoutType: (finalUrl: string) =>
    new ToolError('BINARY_FILE', `${finalUrl} has no content type and looks binary; web_fetch returns only HTML, JSON and text.`),
  searchProviderNoUrl: (provider: string) =>
    new ToolError('EXECUTION_ERROR', `The ${provider} search provider has no URL; the operator must set TOOLGATE_WEB_SEARCH_URL.`),
  braveNeedsToken: () =>
    new ToolError('EXECUTION_ERROR', 'The brave search provider needs a subscription token; the operator must set TOOLGATE_WEB_SEARCH_KEY.'),
  searchQueryEmpty: () => new ToolError('INVALID_PARAM', 'The search query is empty.'),
  searchQueryTooLong: (maxQueryLength: number) =>
    new ToolError('INVALID_PARAM', `The search query is longer than ${maxQueryLength} characters; shorten it.`),
  searchLimitInvalid: (maxSearchLimit: number) => new ToolError('INVALID_PARAM', `limit must be a whole number from 1 to ${maxSearchLimit}.`),
  searchProviderStatus: (provider: string, status: number, hint: string) =>
    new ToolError('EXECUTION_ERROR', `The ${provider} search provider answered HTTP ${status};${hint}.`, { status }),
  searchProviderNotJson: (provider: string) =>
    new ToolError('EXECUTION_ERROR', `The ${provider} search provider did not answer JSON${provider === 'searxng' ? ' (JSON output must be enabled in the instance settings: search.formats)' : ''}.`),
};
