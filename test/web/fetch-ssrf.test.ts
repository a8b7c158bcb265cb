// The SSRF suite: every way of naming an internal address must be refused before a request reaches it. The
// counting server below stands for the service's internal network; at the end nothing may have reached it.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError } from '../../src/envelope.js';
import { EMPTY_ALLOW_LIST, parseAllowList, type AllowList } from '../../src/web/address-policy.js';
import { checkConnectedSocket, webFetch, type Resolver } from '../../src/web/fetch.js';
import { startServer, type CountingServer } from './servers.js';

let target: CountingServer; // 127.0.0.1:P, never allowed in this file except where a test says so
let target6: CountingServer | null = null; // [::1]:P when the host has IPv6 loopback
let hop: CountingServer; // 127.0.0.2:Q, allowed: stands for a public server that redirects
let hopTwin: CountingServer; // 127.0.0.1:Q, where a rebinding answer for the hop's name would land
let attempts = 0;

const OPTS = { maxBytes: 100_000, timeoutMs: 3000, maxRedirects: 5 };
const HOP_ALLOW = parseAllowList('127.0.0.2');

async function refused(url: string, opts: { allow?: AllowList; lookup?: Resolver } = {}): Promise<ToolError> {
  attempts++;
  const err = await webFetch(url, { ...OPTS, allow: opts.allow ?? EMPTY_ALLOW_LIST, lookup: opts.lookup }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `${url} was fetched`).toBeInstanceOf(ToolError);
  return err as ToolError;
}

const answer =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }) as const);

beforeAll(async () => {
  target = await startServer((_req, res) => res.end('internal secret'));
  try {
    target6 = await startServer((_req, res) => res.end('internal secret'), '::1', target.port);
  } catch {
    target6 = null; // no IPv6 loopback here: the [::1] cases are still refused, just not counted twice
  }
  hop = await startServer((req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
    if (to) {
      // Connection: close makes the next hop open (and check) a new connection.
      res.writeHead(302, { location: to, connection: 'close' });
      res.end();
      return;
    }
    res.setHeader('content-type', 'text/plain');
    res.end('hop');
  }, '127.0.0.2');
  hopTwin = await startServer((_req, res) => res.end('internal secret'), '127.0.0.1', hop.port);
});

afterAll(async () => {
  // The figure the suite exists for: nothing reached the internal servers.
  expect(target.requests + (target6?.requests ?? 0) + hopTwin.requests).toBe(0);
  expect(target.connections + (target6?.connections ?? 0) + hopTwin.connections).toBe(0);
  expect(attempts).toBeGreaterThan(50);
  await Promise.all([target.close(), target6?.close(), hop.close(), hopTwin.close()]);
});

describe('IP literals in every notation', () => {
  const loopback = [
    '127.0.0.1',
    '2130706433',
    '0x7f000001',
    '0x7f.1',
    '0177.0.0.1',
    '0x7f.0x0.0x0.0x1',
    '017700000001',
    '127.1',
    '127.0.1',
    '127.0.0.1.',
    '127.000.000.001',
    '１２７.０.０.１', // fullwidth digits, folded by the URL parser
    '127.0.0.2',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[0:0:0:0:0:ffff:127.0.0.1]',
    '[::ffff:0:127.0.0.1]',
    '[::127.0.0.1]',
    '[64:ff9b::127.0.0.1]',
    '[2002:7f00:1::1]',
  ];
  it.each(loopback)('http://%s:P/ is refused as loopback', async (host) => {
    const err = await refused(`http://${host}:${target.port}/`);
    expect(err.code).toBe('ACCESS_DENIED');
    expect(err.details).toMatchObject({ reason: 'address', range: 'loopback' });
    expect(err.message).toMatch(/loopback.*TOOLGATE_WEB_ALLOW/);
  });

  it.each(['0.0.0.0', '0', '0x0', '[::]', '[::ffff:0.0.0.0]'])('http://%s:P/ (the unspecified address, which Linux connects to itself) is refused', async (host) => {
    const err = await refused(`http://${host}:${target.port}/`);
    expect(err.details).toMatchObject({ reason: 'address', range: 'unspecified' });
  });

  const ranges: Array<[string, string]> = [
    ['10.0.0.1', 'private'],
    ['012.0.0.1', 'private'],
    ['167772161', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['0xc0.0xa8.1.1', 'private'],
    ['[::ffff:192.168.1.1]', 'private'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['2852039166', 'metadata'],
    ['0xa9.0xfe.0xa9.0xfe', 'metadata'],
    ['0251.0376.0251.0376', 'metadata'],
    ['[::ffff:169.254.169.254]', 'metadata'],
    ['[fd00:ec2::254]', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['[fe80::1]', 'link-local'],
    ['[fc00::1]', 'unique-local'],
    ['[fd12:3456:789a::1]', 'unique-local'],
    ['100.64.0.1', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['[ff02::1]', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.10', 'reserved'],
  ];
  it.each(ranges)('http://%s/ is refused as %s', async (host, range) => {
    const err = await refused(`http://${host}/`);
    expect(err.code).toBe('ACCESS_DENIED');
    expect(err.details).toMatchObject({ reason: 'address', range });
  });

  it('refuses https:// the same way, before any handshake', async () => {
    const err = await refused(`https://127.0.0.1:${target.port}/`);
    expect(err.details).toMatchObject({ range: 'loopback' });
  });

  it('refuses a public address on an unusual port, before connecting', async () => {
    const err = await refused('http://93.184.216.34:22/');
    expect(err.details).toMatchObject({ reason: 'port' });
    expect(err.message).toMatch(/port 22/);
  });
});

describe('host names and DNS answers', () => {
  it('refuses localhost through the real resolver', async () => {
    const err = await refused(`http://localhost:${target.port}/`);
    expect(err.code).toBe('ACCESS_DENIED');
    expect(err.message).toContain('localhost');
  });

  it('refuses a public-looking name that resolves to loopback', async () => {
    const err = await refused(`http://www.example.com:${target.port}/`, { lookup: answer('127.0.0.1') });
    expect(err.details).toMatchObject({ reason: 'address', range: 'loopback' });
    expect(err.message).toContain('www.example.com (127.0.0.1)');
  });

  it.each([
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['0.0.0.0', 'unspecified'],
  ])('refuses a name that resolves to %s', async (address, range) => {
    const err = await refused(`http://api.example.com:${target.port}/`, { lookup: answer(address) });
    expect(err.details).toMatchObject({ range });
  });

  it('refuses the whole answer when a public address comes first and loopback second', async () => {
    const err = await refused(`http://mixed.example.com:${target.port}/`, { lookup: answer('93.184.216.34', '127.0.0.1') });
    expect(err.details).toMatchObject({ range: 'loopback' });
  });

  it('refuses an answer that changes between lookups (rebinding): the connection made after the change is checked', async () => {
    let calls = 0;
    const rebinding: Resolver = async () => {
      calls++;
      // First answer: the allowed "public" hop; every later answer: loopback, where the hop's twin listens.
      return [{ address: calls === 1 ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    };
    const start = `http://rebind.example.com:${hop.port}/`;
    const err = await refused(`${start}?to=${encodeURIComponent(`${start}secret`)}`, { allow: HOP_ALLOW, lookup: rebinding });
    expect(err.details).toMatchObject({ range: 'loopback' });
    expect(calls).toBe(2);
    expect(hop.requests).toBeGreaterThan(0);
  });

  it('refuses a resolver answer given in another notation (as getaddrinfo might read it)', async () => {
    const err = await refused(`http://odd.example.com:${target.port}/`, { lookup: answer('::ffff:7f00:1') });
    expect(err.details).toMatchObject({ range: 'loopback' });
  });
});

describe('redirects', () => {
  const into = (to: string) => `${hop.origin}/?to=${encodeURIComponent(to)}`;

  it.each([
    () => `http://127.0.0.1:${target.port}/`,
    () => `http://2130706433:${target.port}/`,
    () => `http://0x7f.1:${target.port}/`,
    () => `http://[::ffff:127.0.0.1]:${target.port}/`,
    () => `http://[::1]:${target.port}/`,
    () => `http://localhost:${target.port}/`,
    () => `http://0.0.0.0:${target.port}/`,
    () => 'http://169.254.169.254/latest/meta-data/',
    () => 'http://10.0.0.1/',
  ])('from an allowed server into a forbidden address (%#) is refused', async (to) => {
    const err = await refused(into(to()), { allow: HOP_ALLOW });
    expect(err.code).toBe('ACCESS_DENIED');
  });

  it('into a forbidden address after several allowed hops is refused', async () => {
    const inner = into(into(`http://127.0.0.1:${target.port}/`));
    const err = await refused(inner, { allow: HOP_ALLOW });
    expect(err.code).toBe('ACCESS_DENIED');
  });

  it('into a name that resolves to loopback is refused', async () => {
    const err = await refused(into(`http://internal.example.com:${hop.port}/`), { allow: HOP_ALLOW, lookup: answer('127.0.0.1') });
    expect(err.details).toMatchObject({ range: 'loopback' });
  });

  it.each(['file:///etc/passwd', 'gopher://127.0.0.1:70/', 'ftp://example.com/'])('to %s is refused', async (to) => {
    const err = await refused(into(to), { allow: HOP_ALLOW });
    expect(err.code).toBe('ACCESS_DENIED');
    expect(err.message).toMatch(/only http:\/\/ and https:\/\/ are followed/);
  });

  it('more than the limit is refused, after exactly limit + 1 requests', async () => {
    const before = hop.requests;
    let url = `${hop.origin}/`;
    for (let i = 0; i < 6; i++) url = into(url);
    const err = await webFetch(url, { ...OPTS, allow: HOP_ALLOW }).catch((e: unknown) => e as ToolError);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).code).toBe('NETWORK_ERROR');
    expect((err as ToolError).message).toMatch(/redirected more than 5 times/);
    expect(hop.requests - before).toBe(6);
  });

  it('up to the limit is followed, and each hop is reported', async () => {
    let url = `${hop.origin}/`;
    for (let i = 0; i < 5; i++) url = into(url);
    const res = await webFetch(url, { ...OPTS, allow: HOP_ALLOW });
    expect(res.content).toBe('hop');
    expect(res.redirects).toHaveLength(5);
    expect(res.final_url).toBe(`${hop.origin}/`);
  });
});

describe('the check on the connected socket', () => {
  it('refuses a socket connected to loopback on its own, whatever was checked before', async () => {
    // A separate server: this check runs after the TCP connection, which the suite's count would include.
    const side = await startServer((_req, res) => res.end('x'));
    const socket = net.connect(side.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    expect(checkConnectedSocket(socket, EMPTY_ALLOW_LIST, 'public.example.com', side.port)).toMatchObject({ reason: 'address', range: 'loopback' });
    expect(checkConnectedSocket(socket, parseAllowList('127.0.0.1'), 'public.example.com', side.port)).toBeNull();
    socket.destroy();
    await side.close();
    expect(side.requests).toBe(0);
  });
});

describe('what the allow list opens', () => {
  it('an allowed address is reached on any port, in any notation', async () => {
    const allow = parseAllowList('127.0.0.0/8');
    const side = await startServer((_req, res) => res.end('wiki'));
    for (const host of ['127.0.0.1', '2130706433', '[::ffff:127.0.0.1]']) {
      const res = await webFetch(`http://${host}:${side.port}/`, { ...OPTS, allow });
      expect(res.content).toBe('wiki');
    }
    expect(side.requests).toBe(3);
    await side.close();
  });

  it('an allowed host name is reached whatever it resolves to; other names with the same answer are not', async () => {
    const side = await startServer((_req, res) => res.end('wiki'));
    const allow = parseAllowList('wiki.corp');
    const res = await webFetch(`http://wiki.corp:${side.port}/`, { ...OPTS, allow, lookup: answer('127.0.0.1') });
    expect(res.content).toBe('wiki');
    await side.close();
    const err = await refused(`http://wiki.corp.evil.example:${target.port}/`, { allow, lookup: answer('127.0.0.1') });
    expect(err.code).toBe('ACCESS_DENIED');
  });
});
