// Which network addresses web_fetch may reach: IP literal parsing, range classification and the operator's
// allow list (TOOLGATE_WEB_ALLOW). No I/O here; src/web/fetch.ts applies it to every connection.
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export type AddressRange =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'site-local'
  | 'cgnat'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

export interface AddressClass {
  /** The address in canonical form (dotted IPv4, compressed IPv6). */
  address: string;
  range: AddressRange;
  /** The IPv4 address carried inside an IPv6 one (mapped, compatible, NAT64, 6to4), when there is one. */
  embedded?: string;
}

/** Ports reachable without an allow-list entry: the web's usual ones. Allow-listed hosts and addresses may use any. */
export const DEFAULT_WEB_PORTS: readonly number[] = [80, 443, 8080, 8443];

// Cloud instance-metadata endpoints. All sit inside ranges refused anyway; naming them makes the refusal explicit.
const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean…
  '169.254.170.2', // AWS ECS task metadata
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud (classic)
  'fd00:ec2::254', // AWS over IPv6
]);

const RANGE_DESCRIPTION: Record<AddressRange, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private-network address',
  'link-local': 'a link-local address',
  'unique-local': 'a unique-local (private IPv6) address',
  'site-local': 'a site-local (private IPv6) address',
  cgnat: 'a carrier-grade NAT (shared) address',
  metadata: 'a cloud metadata address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved or special-purpose address',
};

export function describeRange(range: AddressRange): string {
  return RANGE_DESCRIPTION[range];
}

const IPV4_RANGE: Record<string, AddressRange> = {
  unicast: 'public',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'cgnat',
  private: 'private',
};

/**
 * Parses one inet_aton-style IPv4 part: decimal, `0x` hex or leading-zero octal. Returns null for anything
 * else, so that a host name that merely starts with digits is not taken for an address.
 */
function parseIpv4Part(part: string): number | null {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return parseInt(part.slice(1), 8);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return Number(part);
  return null;
}

/** IPv4 in every notation inet_aton and the WHATWG URL parser accept: `2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`. */
function parseIpv4Loose(text: string): string | null {
  // One trailing dot is accepted by both (`127.0.0.1.`).
  const body = text.endsWith('.') ? text.slice(0, -1) : text;
  const parts = body.split('.');
  if (parts.length < 1 || parts.length > 4 || parts.some((p) => p === '')) return null;
  const numbers = parts.map(parseIpv4Part);
  if (numbers.some((n) => n === null || !Number.isSafeInteger(n))) return null;
  const values = numbers as number[];
  const last = values.pop() as number;
  if (values.some((v) => v > 255)) return null;
  // The last part fills every byte the earlier parts left: `127.1` is 127.0.0.1, `2130706433` all four.
  const lastBytes = 4 - values.length;
  if (last >= 256 ** lastBytes) return null;
  const bytes = [...values];
  for (let i = lastBytes - 1; i >= 0; i--) bytes.push(Math.floor(last / 256 ** i) % 256);
  return bytes.join('.');
}

/**
 * The canonical address when `host` is an IP literal in any notation (IPv6 with or without brackets, IPv4 as
 * above), else null. A URL's host is normally canonical already (the WHATWG parser rewrites these forms), but a
 * host that reached a resolver unparsed could still be read as an address by getaddrinfo, so both sides check.
 */
export function parseIpLiteral(host: string): string | null {
  let text = host.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (text.includes(':')) {
    const zoneless = text.split('%')[0] ?? '';
    if (!net.isIPv6(zoneless)) return null;
    // Canonicalized by the URL serializer (all hex), not by ipaddr.js, which reads the IPv4-compatible
    // `::127.0.0.1` as the mapped `::ffff:127.0.0.1`: a different address from the one Node connects to.
    return new URL(`http://[${zoneless}]/`).hostname.slice(1, -1);
  }
  return parseIpv4Loose(text);
}

function classifyIpv4(addr: ipaddr.IPv4): AddressRange {
  const text = addr.toString();
  if (METADATA_ADDRESSES.has(text)) return 'metadata';
  return IPV4_RANGE[addr.range()] ?? 'reserved';
}

function ipv4FromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * Classifies an address; IPv6 forms that carry an IPv4 address are judged by that address, since a dual-stack
 * socket or a NAT64 gateway delivers them to it (`::ffff:127.0.0.1` is loopback).
 */
export function classifyAddress(ip: string): AddressClass {
  const canonical = parseIpLiteral(ip);
  if (canonical === null) throw new Error(`not an IP address: ${ip}`);
  const parsed = ipaddr.parse(canonical);
  if (parsed.kind() === 'ipv4') return { address: canonical, range: classifyIpv4(parsed as ipaddr.IPv4) };

  const v6 = parsed as ipaddr.IPv6;
  const words = v6.parts;
  const w = (i: number) => words[i] ?? 0;
  const embedded = (v4: ipaddr.IPv4, outerIfPublic: AddressRange = 'public'): AddressClass => {
    const inner = classifyIpv4(v4);
    return { address: canonical, range: inner === 'public' ? outerIfPublic : inner, embedded: v4.toString() };
  };
  if (METADATA_ADDRESSES.has(canonical)) return { address: canonical, range: 'metadata' };

  switch (v6.range() as string) {
    case 'unicast':
      break;
    case 'unspecified':
      return { address: canonical, range: 'unspecified' };
    case 'loopback':
      return { address: canonical, range: 'loopback' };
    case 'linkLocal':
      return { address: canonical, range: 'link-local' };
    case 'uniqueLocal':
      return { address: canonical, range: 'unique-local' };
    case 'deprecatedSiteLocal':
      return { address: canonical, range: 'site-local' };
    case 'multicast':
      return { address: canonical, range: 'multicast' };
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d (SIIT)
      return embedded(ipv4FromWords(w(6), w(7)));
    case 'rfc6052': // NAT64: 64:ff9b::a.b.c.d reaches a.b.c.d; the local-use 64:ff9b:1::/48 is the site's own
      return w(2) === 0 ? embedded(ipv4FromWords(w(6), w(7))) : { address: canonical, range: 'reserved' };
    case '6to4': // 2002:AABB:CCDD::/48 tunnels to AA.BB.CC.DD
      return embedded(ipv4FromWords(w(1), w(2)));
    default: // teredo, discard, documentation, benchmarking, ORCHID…: nothing a fetch should reach
      return { address: canonical, range: 'reserved' };
  }
  // ::/8 holds the deprecated IPv4-compatible form ::a.b.c.d (judged by its IPv4 address, refused even when
  // public since nothing routes it) and otherwise only reserved space.
  if ((w(0) & 0xff00) === 0) {
    if (w(0) === 0 && w(1) === 0 && w(2) === 0 && w(3) === 0 && w(4) === 0 && w(5) === 0) {
      return embedded(ipv4FromWords(w(6), w(7)), 'reserved');
    }
    return { address: canonical, range: 'reserved' };
  }
  return { address: canonical, range: 'public' };
}

/** The operator's exceptions: names (exact or `*.suffix`) and address ranges that may be reached on any port. */
export interface AllowList {
  readonly hosts: ReadonlySet<string>;
  /** `*.corp.example` is stored as `.corp.example`: every name below it, not the name itself. */
  readonly suffixes: readonly string[];
  readonly cidrs: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
  /** The entries as written, for messages and logs. */
  readonly entries: readonly string[];
}

export const EMPTY_ALLOW_LIST: AllowList = { hosts: new Set(), suffixes: [], cidrs: [], entries: [] };

/** An IPv4-mapped IPv6 range is stored as the IPv4 range it maps, so that either spelling matches both. */
function normalizeCidr(addr: ipaddr.IPv4 | ipaddr.IPv6, bits: number): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [addr, bits];
}

function normalizeHostName(name: string): string | null {
  // The URL parser lower-cases, punycodes and validates exactly as it does for the URLs being fetched.
  if (/[/?#@:\\\s]/.test(name)) return null;
  try {
    return new URL(`http://${name}/`).hostname.replace(/\.$/, '');
  } catch {
    return null;
  }
}

/**
 * Parses `TOOLGATE_WEB_ALLOW`: comma-separated host names (`wiki.corp`, `*.corp.example`), IP addresses and CIDRs
 * (IPv4 or IPv6). Throws an Error naming the first entry it cannot read, so a typo fails at start-up.
 */
export function parseAllowList(spec: string | readonly string[] | undefined): AllowList {
  const raw = spec === undefined ? [] : typeof spec === 'string' ? spec.split(',') : spec;
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  const cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  const entries: string[] = [];
  for (const item of raw) {
    const entry = item.trim();
    if (entry === '') continue;
    entries.push(entry);
    if (entry.includes('/')) {
      const [addrText = '', bitsText = ''] = entry.split('/');
      const bare = addrText.replace(/^\[(.*)\]$/, '$1');
      if (!/^\d{1,3}$/.test(bitsText) || !ipaddr.isValid(bare)) throw new Error(`TOOLGATE_WEB_ALLOW: cannot read CIDR '${entry}'`);
      let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
      try {
        parsed = ipaddr.parseCIDR(`${bare}/${bitsText}`);
      } catch {
        throw new Error(`TOOLGATE_WEB_ALLOW: cannot read CIDR '${entry}'`);
      }
      cidrs.push(normalizeCidr(parsed[0], parsed[1]));
      continue;
    }
    const literal = parseIpLiteral(entry);
    if (literal !== null) {
      const addr = ipaddr.parse(literal);
      cidrs.push(normalizeCidr(addr, addr.kind() === 'ipv4' ? 32 : 128));
      continue;
    }
    if (entry.startsWith('*.')) {
      const suffix = normalizeHostName(entry.slice(2));
      if (suffix === null) throw new Error(`TOOLGATE_WEB_ALLOW: cannot read host pattern '${entry}'`);
      suffixes.push(`.${suffix}`);
      continue;
    }
    const host = normalizeHostName(entry);
    if (host === null) throw new Error(`TOOLGATE_WEB_ALLOW: cannot read '${entry}' (a host name, IP address or CIDR; no ports or paths)`);
    // A name the URL parser reads as an address (`0x7f.1`) is an address entry.
    const again = parseIpLiteral(host);
    if (again !== null) {
      const addr = ipaddr.parse(again);
      cidrs.push(normalizeCidr(addr, addr.kind() === 'ipv4' ? 32 : 128));
    } else {
      hosts.add(host);
    }
  }
  return { hosts, suffixes, cidrs, entries };
}

/** Whether the URL's host name is on the list by name (`hostname` as the URL parser gives it). */
export function isHostAllowed(allow: AllowList, hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (allow.hosts.has(name)) return true;
  return allow.suffixes.some((suffix) => name.endsWith(suffix));
}

/** Whether an address falls in an allowed range; an IPv4-mapped IPv6 address also matches its IPv4 range. */
export function isAddressAllowed(allow: AllowList, ip: string): boolean {
  const canonical = parseIpLiteral(ip);
  if (canonical === null || allow.cidrs.length === 0) return false;
  const addr = ipaddr.parse(canonical);
  const forms: Array<ipaddr.IPv4 | ipaddr.IPv6> = [addr];
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) forms.push((addr as ipaddr.IPv6).toIPv4Address());
  return allow.cidrs.some(([range, bits]) => forms.some((form) => form.kind() === range.kind() && form.match(range, bits)));
}

export interface ConnectTarget {
  /** The host name of the URL (or the literal), as the connection was asked for. */
  host: string;
  /** The address connected to, or about to be. */
  address: string;
  port: number;
}

export interface Denial {
  reason: 'address' | 'port';
  range?: AddressRange;
  message: string;
}

/**
 * The one decision every connection passes: null when `target` may be reached, else why not. Public addresses
 * on the usual ports pass; an allow-listed host name or address passes on any address and port.
 */
export function checkConnectTarget(allow: AllowList, target: ConnectTarget, ports: readonly number[] = DEFAULT_WEB_PORTS): Denial | null {
  if (net.isIP(target.address.replace(/^\[(.*)\]$/, '$1').split('%')[0] ?? '') === 0) {
    return { reason: 'address', message: `Refused to connect to ${target.host}: '${target.address}' is not an IP address.` };
  }
  if (isHostAllowed(allow, target.host) || isAddressAllowed(allow, target.address)) return null;
  const cls = classifyAddress(target.address);
  const address = cls.embedded ? `${cls.address} (IPv4 ${cls.embedded})` : cls.address;
  const shown = parseIpLiteral(target.host) !== null ? address : `${target.host} (${address})`;
  if (cls.range !== 'public') {
    return {
      reason: 'address',
      range: cls.range,
      message: `Refused to connect to ${shown}: ${describeRange(cls.range)}. web_fetch only reaches public addresses; an operator can allow internal hosts with TOOLGATE_WEB_ALLOW.`,
    };
  }
  if (!ports.includes(target.port)) {
    return {
      reason: 'port',
      message: `Refused to connect to ${shown} on port ${target.port}: only ports ${ports.join(', ')} are allowed for hosts not listed in TOOLGATE_WEB_ALLOW.`,
    };
  }
  return null;
}
