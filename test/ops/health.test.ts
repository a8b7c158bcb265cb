// Probes (docs/operations.md): /livez, /readyz (volume writable, not shutting down), /healthz details.
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers.js';
import { request } from './ops-helpers.js';

let t: TestApp;
afterEach(async () => {
  await t.close();
});

describe('probes', () => {
  it('/livez answers while the process runs', async () => {
    t = await makeApp();
    expect(await request(t.app, 'GET', '/livez')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('/readyz is ready, then 503 once shutting down', async () => {
    t = await makeApp();
    expect(await request(t.app, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
    t.app.toolgate.shuttingDown = true;
    expect(await request(t.app, 'GET', '/readyz')).toMatchObject({ status: 503, body: { status: 'shutting_down' } });
  });

  it('/readyz is 503 when the volume is not writable', async () => {
    t = await makeApp();
    // the state directory vanished (volume unmounted or broken): the probe file cannot be written
    await fs.rm(t.file('.toolgate'), { recursive: true });
    expect(await request(t.app, 'GET', '/readyz')).toMatchObject({ status: 503, body: { status: 'volume_not_writable' } });
    const health = await request(t.app, 'GET', '/healthz');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'unhealthy', workspace: { writable: false } });
  });

  it('/healthz gives version, uptime, mode and workspace state, and no host path', async () => {
    t = await makeApp();
    const res = await request(t.app, 'GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      version: '0.1.0',
      node: process.version,
      shutting_down: false,
      mode: 'single-workspace',
      workspace: { writable: true },
      auth: 'off',
      rate_limit: { store: 'off', redis: null },
    });
    expect(typeof (res.body as unknown as { uptime_s: number }).uptime_s).toBe('number');
    expect(res.raw).not.toContain(t.root);
  });

  it('the probe leaves no file behind', async () => {
    t = await makeApp();
    await request(t.app, 'GET', '/readyz');
    expect((await fs.readdir(t.file('.toolgate'))).filter((f) => f.includes('probe'))).toEqual([]);
    expect(await fs.readdir(t.root)).toEqual(['.toolgate']);
  });
});
