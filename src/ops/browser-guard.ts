// Which Host and Origin a request may carry (docs/operations.md, "Browsers"): a web page must not reach the
// service through a rebound DNS name (its Host is then the attacker's name) nor send it cross-site requests (its
// Origin is the attacker's page). Plain values in, a refusal out; src/transports/http-gate.ts applies it to every door.
import net from 'node:net';
import { ToolError } from '../envelope.js';
import { E } from '../errors.js';
import { isLoopbackHost } from './auth.js';

/** A Host header or list entry split into its lower-case name (IPv6 without brackets) and its port, if any. */
function splitHost(value: string): { name: string; port: string | null } | null {
  const v = value.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/.exec(v);
  if (bracketed) return net.isIPv6(bracketed[1] ?? '') ? { name: bracketed[1] ?? '', port: bracketed[2] ?? null } : null;
  // An unbracketed IPv6 address has two colons at least: a name is never run through isIPv6, whose first use
  // compiles a large expression (milliseconds of every start, which reads the allowed hosts here).
  if (v.indexOf(':') !== v.lastIndexOf(':') && net.isIPv6(v)) return { name: v, port: null };
  const m = /^([^:]+)(?::(\d{1,5}))?$/.exec(v);
  if (!m) return null;
  return { name: (m[1] ?? '').replace(/\.$/, ''), port: m[2] ?? null };
}

/** Distinct Host values whose reading is kept. */
const HOST_CACHE = 256;

export interface BrowserGuardOptions {
  /** TOOLGATE_ALLOWED_HOSTS, parsed. */
  allowedHosts: readonly string[];
  /** TOOLGATE_ALLOWED_ORIGINS, parsed. */
  allowedOrigins: readonly string[];
  /** TOOLGATE_HOST: a specific address the service listens on is a name it answers to (not 0.0.0.0 or ::). */
  listenHost: string;
}

export interface BrowserGuard {
  /** The refusal of a request with this Host and Origin, or null when it may pass. */
  check(host: string | undefined, origin: string | undefined): ToolError | null;
}

export function createBrowserGuard(opts: BrowserGuardOptions): BrowserGuard {
  const exact = new Set(opts.allowedHosts.filter((h) => !h.startsWith('*.')));
  const suffixes = opts.allowedHosts.filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
  const listen = splitHost(opts.listenHost)?.name;
  if (listen && listen !== '0.0.0.0' && listen !== '::') exact.add(listen);
  const origins = new Set(opts.allowedOrigins);

  const hostAllowed = (name: string) => isLoopbackHost(name) || exact.has(name) || suffixes.some((s) => name.endsWith(s) && name.length > s.length);

  // A client sends the same Host on every request: its reading is kept per distinct value (splitHost and the
  // allowed names cost a small call more than its own check), up to HOST_CACHE values (docs/development.md, "Work done once").
  const hosts = new Map<string, { parsed: ReturnType<typeof splitHost>; allowed: boolean }>();
  const readHost = (host: string) => {
    let known = hosts.get(host);
    if (!known) {
      const parsed = splitHost(host);
      known = { parsed, allowed: parsed !== null && hostAllowed(parsed.name) };
      // Bounded: a flood of made-up values starts the cache over, and long ones are read each time.
      if (host.length <= 255) {
        if (hosts.size >= HOST_CACHE) hosts.clear();
        hosts.set(host, known);
      }
    }
    return known;
  };

  function check(host: string | undefined, origin: string | undefined): ToolError | null {
    const known = host === undefined ? null : readHost(host);
    const parsed = known?.parsed ?? null;
    if (!parsed || !known?.allowed) {
      const shown = host === undefined ? '(none)' : `'${host.slice(0, 100)}'`;
      return E.hostNotServed(shown, host);
    }
    if (origin === undefined) return null;
    if (sameOrigin(origin, parsed) || origins.has(origin.toLowerCase())) return null;
    return E.originRefused(origin);
  }
  return { check };
}

/** Whether a browser's Origin names the host the request was sent to (the console, /docs): same name and port. */
function sameOrigin(origin: string, host: { name: string; port: string | null }): boolean {
  // `null` (a sandboxed frame, a file) and anything else unreadable is not this service's page.
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  // A fully qualified name's final dot names the same host, as splitHost reads the Host (`localhost.` is `localhost`).
  const name = url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  // URL drops a scheme's default port; a Host without a port was sent to that default port too.
  if (name !== host.name) return false;
  return url.port === (host.port ?? '') || (url.port === '' && host.port === (url.protocol === 'https:' ? '443' : '80'));
}
