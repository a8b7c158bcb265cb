// Fetching a URL for a model without letting it reach the service's own network (SSRF): every connection's
// address is checked where it is known (IP literal, DNS answer, connected socket), redirects are followed by
// hand and re-checked, and size and time are bounded. web_fetch and web_search both go through safeRequest.
import dns from 'node:dns';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { Agent, buildConnector } from 'undici';
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { checkConnectTarget, DEFAULT_WEB_PORTS, type AllowList, type Denial } from './address-policy.js';
import { parseWebUrl } from './web-url.js';

export { parseWebUrl };

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
/** Resolves a host name to its addresses; injectable so tests can answer what DNS would (rebinding included). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface SafeRequestOptions {
  /** Largest body accepted (after content decoding); more is FILE_TOO_LARGE. */
  maxBytes: number;
  /** Time for the whole call: every connection, redirect and the body. */
  timeoutMs: number;
  /** Redirects followed (each one re-checked); one more is an error. */
  maxRedirects: number;
  allow: AllowList;
  lookup?: Resolver;
  /** Ports reachable without an allow-list entry (DEFAULT_WEB_PORTS). */
  ports?: readonly number[];
  headers?: Record<string, string>;
  /** Called with the media type before the body is read; throws to refuse it without downloading. */
  acceptContentType?: (mediaType: string, url: string) => void;
}

export interface SafeResponse {
  /** The URL asked for, as parsed. */
  url: string;
  /** The URL the body came from, after redirects. */
  finalUrl: string;
  redirects: string[];
  status: number;
  /** Lower-case media type without parameters ('' when the server sent none). */
  mediaType: string;
  charset: string | null;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export type WebFetchOptions = Omit<SafeRequestOptions, 'headers' | 'acceptContentType'>;

export interface WebFetchResult {
  url: string;
  final_url: string;
  status: number;
  content_type: string;
  format: 'markdown' | 'json' | 'text';
  title: string | null;
  content: string;
  /** Body bytes received (after content decoding). */
  bytes: number;
  redirects: string[];
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'toolgate-web-fetch/1';

const defaultResolver: Resolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

function denied(denial: Denial, url?: string): ToolError {
  return E.fetchDenied(denial.message, denial.reason, denial.range, url);
}


/**
 * net's `lookup` for one connection: asks the resolver and refuses the whole answer when any address in it is
 * forbidden (a mixed answer is how rebinding hides a private address behind a public one). Honours `all`
 * and `family`: Node 20 connects with autoSelectFamily, which asks for every address.
 */
function guardedLookup(resolver: Resolver, allow: AllowList, host: string, port: number, ports: readonly number[]): net.LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (answers) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const usable = family === 0 ? answers : answers.filter((a) => a.family === family);
        if (usable.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          err.code = 'ENOTFOUND';
          callback(err, '', 0);
          return;
        }
        const denials = usable.flatMap((a) => checkConnectTarget(allow, { host, address: a.address, port }, ports) ?? []);
        // A forbidden address says more than a forbidden port, whichever answer came first.
        const denial = denials.find((d) => d.reason === 'address') ?? denials[0];
        if (denial) {
          callback(denied(denial), '', 0);
          return;
        }
        if (options.all) callback(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * The last check: the address the socket is actually connected to. The literal and DNS checks run before
 * connecting; this one holds even if a path around them is ever found (for https it runs after the TLS
 * handshake, still before any byte of the request).
 */
export function checkConnectedSocket(socket: net.Socket, allow: AllowList, host: string, port: number, ports: readonly number[] = DEFAULT_WEB_PORTS): Denial | null {
  const address = socket.remoteAddress;
  if (!address) return { reason: 'address', message: `Refused to connect to ${host}: the connected address is unknown.` };
  return checkConnectTarget(allow, { host, address, port: socket.remotePort ?? port }, ports);
}

export interface GuardedConnectorOptions {
  allow: AllowList;
  lookup?: Resolver;
  ports?: readonly number[];
  connectTimeoutMs: number;
}

/** An undici connector that checks the target at each of the three points above. */
export function createGuardedConnector(o: GuardedConnectorOptions): buildConnector.connector {
  const resolver = o.lookup ?? defaultResolver;
  const ports = o.ports ?? DEFAULT_WEB_PORTS;
  return (opts, callback) => {
    const host = opts.hostname; // undici strips the brackets of an IPv6 literal
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    // net connects to an IP literal without calling `lookup`, so a literal is judged here, before any packet.
    if (net.isIP(host) !== 0) {
      const denial = checkConnectTarget(o.allow, { host, address: host, port }, ports);
      if (denial) {
        callback(denied(denial), null);
        return;
      }
    }
    // Built per connection so that the lookup knows the port (allowed ports depend on the allow list).
    const connect = buildConnector({ timeout: o.connectTimeoutMs, lookup: guardedLookup(resolver, o.allow, host, port, ports) });
    connect(opts, (err, socket) => {
      if (err || !socket) {
        callback(err ?? new Error('connection failed'), null);
        return;
      }
      const denial = checkConnectedSocket(socket, o.allow, host, port, ports);
      if (denial) {
        socket.destroy();
        callback(denied(denial), null);
        return;
      }
      callback(null, socket);
    });
  };
}

/** Finds the ToolError inside whatever undici or net threw, else translates the failure for the model. */
function toFetchError(err: unknown, url: URL, timedOut: boolean, timeoutMs: number): ToolError {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ToolError) return e;
  }
  const timeout = E.fetchTimeout(url.href, timeoutMs);
  if (timedOut) return timeout;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  const message = err instanceof Error ? err.message : String(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'ETIMEDOUT':
      return timeout;
    // The caller's URL names a host that has no address: the caller's to fix, not a failure of this service.
    case 'ENOTFOUND':
    case 'EAI_NONAME':
      return E.hostNotFound(url.hostname, code);
    // The network between this service and the host failed: 502, as a gateway answers (docs/web.md).
    case 'EAI_AGAIN':
      return E.nameServerSilent(url.hostname, code);
    case 'ECONNREFUSED':
      return E.connectionRefused(url.host, code);
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return E.connectionClosed(url.host, code);
    default:
      if (code.startsWith('ERR_TLS') || /certificate/i.test(message)) {
        return E.tlsCertificate(url.host, message, code);
      }
      if (code.startsWith('ERR_SSL')) return E.tlsHandshake(url.host, code);
      return E.fetchFailed(url.href, message);
  }
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function parseContentType(value: string | undefined): { mediaType: string; charset: string | null } {
  if (!value) return { mediaType: '', charset: null };
  const [type = '', ...params] = value.split(';');
  const charsetParam = params.map((p) => p.trim()).find((p) => /^charset=/i.test(p));
  const charset = charsetParam ? charsetParam.slice(8).replace(/^"(.*)"$/, '$1').trim() : null;
  return { mediaType: type.trim().toLowerCase(), charset: charset || null };
}

function decoderFor(encoding: string | undefined, url: URL): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  const value = (encoding ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return null;
  if (value === 'gzip' || value === 'x-gzip') return zlib.createGunzip();
  if (value === 'deflate') return zlib.createInflate();
  if (value === 'br') return zlib.createBrotliDecompress();
  throw E.contentEncodingUnsupported(url.host, value);
}

/** Drops a body unread; undici's body errors when destroyed, which must not surface as an uncaught error. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

function tooLarge(url: URL, maxBytes: number): ToolError {
  return E.responseTooLarge(url.href, maxBytes);
}

/** Reads the body (decoded) up to `maxBytes`; stops and destroys the stream at the first byte over. */
async function readCapped(body: Readable, encoding: string | undefined, url: URL, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const decoder = decoderFor(encoding, url);
  const source: Readable = decoder ? body.pipe(decoder) : body;
  if (decoder) body.on('error', (e) => decoder.destroy(e));
  const stopOnAbort = () => source.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  signal.addEventListener('abort', stopOnAbort, { once: true });
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of source) {
      const buf = chunk as Buffer;
      total += buf.length;
      if (total > maxBytes) throw tooLarge(url, maxBytes);
      chunks.push(buf);
    }
  } finally {
    signal.removeEventListener('abort', stopOnAbort);
    discard(body);
    if (decoder) discard(decoder);
  }
  return Buffer.concat(chunks, total);
}

/**
 * GET `input` through the guarded connector: redirects followed by hand (each target re-parsed and, on its
 * connection, re-checked), the body capped in bytes and everything in time. Any HTTP status is returned.
 */
export async function safeRequest(input: string, opts: SafeRequestOptions): Promise<SafeResponse> {
  const first = parseWebUrl(input);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(E.fetchTimeout(first.href, opts.timeoutMs));
  }, opts.timeoutMs);
  // One agent per call: no connection (and no DNS answer) outlives the call that checked it.
  const agent = new Agent({
    connect: createGuardedConnector({ allow: opts.allow, lookup: opts.lookup, ports: opts.ports, connectTimeoutMs: opts.timeoutMs }),
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    connections: 1,
  });
  const redirects: string[] = [];
  let url = first;
  try {
    for (;;) {
      let res: Awaited<ReturnType<Agent['request']>>;
      try {
        res = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers: { 'user-agent': USER_AGENT, accept: 'text/html, application/json;q=0.9, text/*;q=0.8', 'accept-encoding': 'gzip, deflate, br', ...opts.headers },
          signal: controller.signal,
        });
      } catch (err) {
        throw toFetchError(err, url, timedOut, opts.timeoutMs);
      }
      const headers = res.headers as Record<string, string | string[] | undefined>;
      const location = headerValue(headers, 'location');
      if (REDIRECT_STATUSES.has(res.statusCode) && location !== undefined) {
        discard(res.body);
        if (redirects.length >= opts.maxRedirects) {
          throw E.tooManyRedirects(first.href, opts.maxRedirects, url.href, redirects);
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw E.redirectInvalid(url.href);
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          throw E.redirectSchemeRefused(url.href, next.protocol);
        }
        url = parseWebUrl(next.href, 'redirect target');
        redirects.push(url.href);
        continue;
      }
      const { mediaType, charset } = parseContentType(headerValue(headers, 'content-type'));
      try {
        opts.acceptContentType?.(mediaType, url.href);
        const declared = Number(headerValue(headers, 'content-length'));
        const encoding = headerValue(headers, 'content-encoding');
        // An honest Content-Length over the cap is refused before reading a byte.
        if (Number.isFinite(declared) && declared > opts.maxBytes && !encoding) throw tooLarge(url, opts.maxBytes);
        const body = await readCapped(res.body, encoding, url, opts.maxBytes, controller.signal);
        return { url: first.href, finalUrl: url.href, redirects, status: res.statusCode, mediaType, charset, headers, body };
      } catch (err) {
        discard(res.body);
        throw toFetchError(err, url, timedOut, opts.timeoutMs);
      }
    }
  } finally {
    clearTimeout(timer);
    // destroy, not close: a slow server must not keep the call waiting for its body to end.
    agent.destroy().catch(() => {});
  }
}

export type ContentFormat = 'markdown' | 'json' | 'text';

/** What web_fetch makes of a media type; null for the ones it refuses (images, archives, PDFs…). */
export function formatOf(mediaType: string): ContentFormat | null {
  if (mediaType === 'text/html' || mediaType === 'application/xhtml+xml') return 'markdown';
  if (mediaType === 'application/json' || mediaType === 'text/json' || mediaType.endsWith('+json')) return 'json';
  if (mediaType.startsWith('text/')) return 'text';
  if (mediaType === 'application/xml' || mediaType.endsWith('+xml')) return 'text';
  if (mediaType === 'application/javascript' || mediaType === 'application/x-javascript' || mediaType === 'application/ecmascript') return 'text';
  if (mediaType === '') return 'text'; // checked for binary content once read
  return null;
}

/** Decodes by the declared charset, else a <meta charset> near the top of an HTML page, else UTF-8. */
function decodeText(body: Buffer, charset: string | null, html: boolean): string {
  let label = charset;
  if (!label && html) {
    const head = body.subarray(0, 2048).toString('latin1');
    label = /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1] ?? null;
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** The web_fetch tool's engine: a page as Markdown, JSON and text as they are, other types refused. */
export async function webFetch(input: string, opts: WebFetchOptions, signal?: AbortSignal): Promise<WebFetchResult> {
  const started = performance.now();
  const res = await safeRequest(input, {
    ...opts,
    acceptContentType(mediaType, url) {
      if (formatOf(mediaType) === null) {
        throw E.mediaTypeRefused(url, mediaType);
      }
    },
  });
  const format = formatOf(res.mediaType) ?? 'text';
  if (res.mediaType === '' && res.body.includes(0)) {
    throw E.binaryWithoutType(res.finalUrl);
  }
  const text = decodeText(res.body, res.charset, format === 'markdown');
  // The conversion gets what is left of the call's time limit, so fetching and converting together stay
  // within it (docs/web.md, "Converting HTML"); the converter's packages load in its worker, not here.
  const left = Math.max(0, opts.timeoutMs - (performance.now() - started));
  const page = format === 'markdown' ? await (await import('./html-to-markdown.js')).htmlToMarkdown(text, res.finalUrl, left, signal) : { title: null, markdown: text };
  return {
    url: res.url,
    final_url: res.finalUrl,
    status: res.status,
    content_type: res.mediaType,
    format,
    title: page.title,
    content: page.markdown,
    bytes: res.body.length,
    redirects: res.redirects,
  };
}
