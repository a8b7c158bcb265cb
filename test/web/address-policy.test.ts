import { describe, expect, it } from 'vitest';
import {
  checkConnectTarget,
  classifyAddress,
  isAddressAllowed,
  isHostAllowed,
  parseAllowList,
  parseIpLiteral,
  EMPTY_ALLOW_LIST,
} from '../../src/web/address-policy.js';

describe('parseIpLiteral', () => {
  // Every notation inet_aton or the URL parser reads as 127.0.0.1.
  const loopbackForms = ['127.0.0.1', '2130706433', '0x7f000001', '0x7f.1', '0177.0.0.1', '127.1', '127.0.1', '017700000001', '0x7f.0x0.0x0.0x1', '127.0.0.1.', '0x7F.1'];

  it.each(loopbackForms)('reads %s as 127.0.0.1, as the URL parser does', (form) => {
    expect(parseIpLiteral(form)).toBe('127.0.0.1');
    expect(new URL(`http://${form}/`).hostname).toBe('127.0.0.1');
  });

  it('reads IPv6 with or without brackets, canonical and zone-free', () => {
    expect(parseIpLiteral('[::1]')).toBe('::1');
    expect(parseIpLiteral('::ffff:127.0.0.1')).toBe('::ffff:7f00:1');
    expect(parseIpLiteral('[0:0:0:0:0:ffff:7f00:1]')).toBe('::ffff:7f00:1');
    expect(parseIpLiteral('fe80::1%eth0')).toBe('fe80::1');
  });

  it('leaves host names, out-of-range numbers and bad octals alone', () => {
    for (const host of ['example.com', 'localhost', '1.2.3.4.5', '256.1.1.1', '4294967296', '08.1.1.1', '0x', '1..1', 'a::b::c', '']) {
      expect(parseIpLiteral(host), host).toBe(host === '0x' ? '0.0.0.0' : null);
    }
    expect(parseIpLiteral('0xffffffff')).toBe('255.255.255.255');
  });
});

describe('classifyAddress', () => {
  const table: Array<[string, string, string?]> = [
    ['8.8.8.8', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.0.1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2606:4700::1111', 'public'],
    ['::ffff:127.0.0.1', 'loopback', '127.0.0.1'],
    ['::ffff:10.0.0.1', 'private', '10.0.0.1'],
    ['::ffff:169.254.169.254', 'metadata', '169.254.169.254'],
    ['::ffff:8.8.8.8', 'public', '8.8.8.8'],
    ['::ffff:0:127.0.0.1', 'loopback', '127.0.0.1'],
    ['::127.0.0.1', 'loopback', '127.0.0.1'],
    ['::8.8.8.8', 'reserved', '8.8.8.8'],
    ['64:ff9b::127.0.0.1', 'loopback', '127.0.0.1'],
    ['64:ff9b::8.8.8.8', 'public', '8.8.8.8'],
    ['64:ff9b:1::1', 'reserved'],
    ['2002:7f00:1::1', 'loopback', '127.0.0.1'],
    ['2002:a9fe:a9fe::', 'metadata', '169.254.169.254'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo
    ['::1:2:3:4', 'reserved'],
  ];
  it.each(table)('%s is %s', (ip, range, embedded) => {
    const cls = classifyAddress(ip);
    expect(cls.range).toBe(range);
    expect(cls.embedded).toBe(embedded);
  });

  it('refuses to classify a host name', () => {
    expect(() => classifyAddress('example.com')).toThrow(/not an IP/);
  });
});

describe('parseAllowList', () => {
  it('reads hosts, wildcard hosts, IPs and CIDRs (IPv4, IPv6, mapped) with spaces and empty items', () => {
    const allow = parseAllowList(' wiki.corp , *.internal.example,10.0.0.0/8,, 127.0.0.1, ::1, fd00::/8, ::ffff:192.168.0.0/112, WIKI2.Corp. ');
    expect([...allow.hosts].sort()).toEqual(['wiki.corp', 'wiki2.corp']);
    expect(allow.suffixes).toEqual(['.internal.example']);
    expect(isHostAllowed(allow, 'WIKI.corp')).toBe(true);
    expect(isHostAllowed(allow, 'a.b.internal.example')).toBe(true);
    expect(isHostAllowed(allow, 'internal.example')).toBe(false);
    expect(isHostAllowed(allow, 'evilwiki.corp')).toBe(false);
    expect(isAddressAllowed(allow, '10.200.1.1')).toBe(true);
    expect(isAddressAllowed(allow, '11.0.0.1')).toBe(false);
    expect(isAddressAllowed(allow, '127.0.0.1')).toBe(true);
    expect(isAddressAllowed(allow, '127.0.0.2')).toBe(false);
    // A mapped address matches the IPv4 range, and a mapped range the IPv4 address.
    expect(isAddressAllowed(allow, '::ffff:127.0.0.1')).toBe(true);
    expect(isAddressAllowed(allow, '192.168.3.4')).toBe(true);
    expect(isAddressAllowed(allow, '::1')).toBe(true);
    expect(isAddressAllowed(allow, 'fd12::1')).toBe(true);
    expect(isAddressAllowed(allow, 'fe80::1')).toBe(false);
  });

  it('reads an address in another notation as that address', () => {
    const allow = parseAllowList('2130706433');
    expect(allow.hosts.size).toBe(0);
    expect(isAddressAllowed(allow, '127.0.0.1')).toBe(true);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/x', 'wiki.corp:8080', 'http://wiki.corp', 'a b', '::1/129', 'wiki.corp/path'])('rejects %s, naming it', (entry) => {
    expect(() => parseAllowList(entry)).toThrow(entry);
  });

  it('is empty for nothing', () => {
    expect(parseAllowList(undefined).entries).toEqual([]);
    expect(parseAllowList('').cidrs).toEqual([]);
  });
});

describe('checkConnectTarget', () => {
  it('passes public addresses on the usual ports only', () => {
    expect(checkConnectTarget(EMPTY_ALLOW_LIST, { host: 'example.com', address: '93.184.216.34', port: 443 })).toBeNull();
    expect(checkConnectTarget(EMPTY_ALLOW_LIST, { host: 'example.com', address: '93.184.216.34', port: 8080 })).toBeNull();
    const port = checkConnectTarget(EMPTY_ALLOW_LIST, { host: 'example.com', address: '93.184.216.34', port: 22 });
    expect(port?.reason).toBe('port');
    expect(port?.message).toMatch(/port 22.*80, 443, 8080, 8443/);
  });

  it('names the host, the address and the range, and says how an operator allows it', () => {
    const denial = checkConnectTarget(EMPTY_ALLOW_LIST, { host: 'evil.example', address: '::ffff:10.0.0.1', port: 80 });
    expect(denial).toMatchObject({ reason: 'address', range: 'private' });
    expect(denial?.message).toContain('evil.example (::ffff:a00:1 (IPv4 10.0.0.1))');
    expect(denial?.message).toContain('TOOLGATE_WEB_ALLOW');
  });

  it('lets an allow-listed host or address through on any address and port', () => {
    const allow = parseAllowList('wiki.corp,127.0.0.0/8');
    expect(checkConnectTarget(allow, { host: 'wiki.corp', address: '10.0.0.5', port: 8081 })).toBeNull();
    expect(checkConnectTarget(allow, { host: 'other', address: '127.0.0.9', port: 1 })).toBeNull();
    expect(checkConnectTarget(allow, { host: 'other', address: '10.0.0.5', port: 80 })?.range).toBe('private');
  });

  it('refuses what is not an address at all', () => {
    expect(checkConnectTarget(EMPTY_ALLOW_LIST, { host: 'x', address: 'example.com', port: 80 })?.reason).toBe('address');
  });
});
