// A network failure the caller's URL caused is not a server error (issue 23): through POST /v1/tools/web_fetch,
// a host that does not resolve is HOST_NOT_FOUND (422) and a port that refuses is NETWORK_ERROR (502), each
// naming the host and the cause, as docs/web.md's table sets out.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/web/fetch.js';
import { makeApp, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** What the system resolver throws for a name without an address (dns.lookup's ENOTFOUND). */
const nowhere: Resolver = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
};
const flaky: Resolver = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}`), { code: 'EAI_AGAIN', hostname });
};

describe('web_fetch network failures through the REST door', () => {
  it('a host that does not resolve answers 422 HOST_NOT_FOUND with the host and the cause', async () => {
    t = await makeApp({}, { resolver: nowhere });
    const res = await t.call('web_fetch', { url: 'https://no-such-host.invalid/page' });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'HOST_NOT_FOUND', details: { host: 'no-such-host.invalid', cause: 'ENOTFOUND' } });
    expect(res.body.error?.message).toContain('no-such-host.invalid');
    expect(res.body.error?.message).toContain('ENOTFOUND');
  });

  it('a name server that does not answer is 502 NETWORK_ERROR', async () => {
    t = await makeApp({}, { resolver: flaky });
    const res = await t.call('web_fetch', { url: 'https://example.com/' });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ code: 'NETWORK_ERROR', details: { host: 'example.com', cause: 'EAI_AGAIN' } });
  });

  it('a port that refuses the connection is 502 NETWORK_ERROR naming host and cause', async () => {
    const server = http.createServer((_req, res) => res.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address();
    if (!addr || typeof addr === 'string') throw new Error('no port');
    await new Promise<void>((r) => server.close(() => r()));
    t = await makeApp({ TOOLGATE_WEB_ALLOW: '127.0.0.1' });
    const res = await t.call('web_fetch', { url: `http://127.0.0.1:${addr.port}/` });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ code: 'NETWORK_ERROR', details: { host: `127.0.0.1:${addr.port}`, cause: 'ECONNREFUSED' } });
  });
});
