// Metrics (docs/operations.md): prom-client text at /metrics with the exact names the Grafana dashboard queries,
// per-app registries, route templates (never raw URLs), and no path or project id in any label.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Counter, Histogram, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { bareContext, errorEnvelope, resultEnvelope, ToolError } from '../../src/envelope.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { TOOLS } from '../../src/tools/registry.js';
import { dashboardMetricNames } from '../helm/dashboard-metrics.js';
import { makeApp, makeTempDir, type TestApp } from '../helpers.js';
import { request } from './ops-helpers.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Scrape {
  types: Map<string, string>;
  samples: Sample[];
}

/** Parses the Prometheus text format (what prom-client prints). */
function parseMetrics(text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(m, `unparsable metrics line: ${line}`).not.toBeNull();
    const labels: Record<string, string> = {};
    for (const l of (m?.[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    samples.push({ name: m?.[1] as string, labels, value: Number(m?.[3]) });
  }
  return { types, samples };
}

function value(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  return s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).reduce((a, x) => a + x.value, 0);
}

async function scrape(t: TestApp): Promise<{ scrape: Scrape; raw: string; contentType: string }> {
  const res = await request(t.app, 'GET', '/metrics');
  expect(res.status).toBe(200);
  return { scrape: parseMetrics(res.raw), raw: res.raw, contentType: String(res.headers['content-type']) };
}

const REQUIRED: Record<string, string> = {
  toolgate_tool_calls_total: 'counter',
  toolgate_tool_errors_total: 'counter',
  toolgate_tool_duration_seconds: 'histogram',
  toolgate_bytes_read_total: 'counter',
  toolgate_bytes_written_total: 'counter',
  toolgate_lock_wait_seconds: 'histogram',
  toolgate_conflicts_total: 'counter',
  toolgate_rate_limited_total: 'counter',
  toolgate_http_request_duration_seconds: 'histogram',
  toolgate_build_info: 'gauge',
  toolgate_approvals_total: 'counter',
  toolgate_process_resident_memory_bytes: 'gauge',
};

const apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});
async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const a = await makeApp(env);
  apps.push(a);
  return a;
}

describe('/metrics', () => {
  it('exposes the exact names with their types, and counts real calls', async () => {
    const t = await app();
    const w = await t.call('write_file', { path: 'secret-dir/a.txt', content: 'hello' });
    const sha = (w.body.data as { version: { sha256: string } }).version.sha256;
    await t.call('read_file', { path: 'secret-dir/a.txt' });
    await t.call('read_file', { path: 'secret-dir/missing.txt' });
    await t.call('write_file', { path: 'secret-dir/a.txt', content: 'v2', expected_sha256: '0'.repeat(64) });
    await t.call('write_file', { path: 'secret-dir/a.txt', content: 'v3', expected_sha256: sha });

    const { scrape: s, contentType } = await scrape(t);
    expect(contentType).toMatch(/^text\/plain/);
    for (const [name, type] of Object.entries(REQUIRED)) expect(s.types.get(name), name).toBe(type);

    expect(value(s, 'toolgate_tool_calls_total', { tool: 'write_file', status: 'success' })).toBe(2);
    expect(value(s, 'toolgate_tool_calls_total', { tool: 'write_file', status: 'error' })).toBe(1);
    expect(value(s, 'toolgate_tool_calls_total', { tool: 'read_file', status: 'success' })).toBe(1);
    expect(value(s, 'toolgate_tool_errors_total', { tool: 'read_file', code: 'NOT_FOUND' })).toBe(1);
    expect(value(s, 'toolgate_tool_errors_total', { tool: 'write_file', code: 'CONFLICT' })).toBe(1);
    expect(value(s, 'toolgate_conflicts_total', { tool: 'write_file' })).toBe(1);
    expect(value(s, 'toolgate_bytes_written_total', { tool: 'write_file' })).toBe(7);
    expect(value(s, 'toolgate_bytes_read_total', { tool: 'read_file' })).toBe(5);
    expect(value(s, 'toolgate_tool_duration_seconds_count', { tool: 'write_file' })).toBe(3);
    expect(value(s, 'toolgate_tool_duration_seconds_bucket', { tool: 'read_file', le: '+Inf' })).toBe(2);
    expect(value(s, 'toolgate_lock_wait_seconds_count')).toBeGreaterThanOrEqual(2);
    expect(value(s, 'toolgate_rate_limited_total')).toBe(0);
    expect(value(s, 'toolgate_build_info', { version: '0.1.0', node: process.version })).toBe(1);
  });

  it('every metric the Grafana dashboard queries exists', async () => {
    const t = await app();
    await t.call('write_file', { path: 'a.txt', content: 'x' });
    const { scrape: s } = await scrape(t);
    const missing = dashboardMetricNames().filter((n) => !s.types.has(n));
    expect(missing).toEqual([]);
  });

  it('HTTP durations are labelled by route template, never by raw URL', async () => {
    const projectsRoot = await makeTempDir('toolgate-projects-');
    await fs.mkdir(path.join(projectsRoot, 'customer-acme'));
    const t = await app({ TOOLGATE_PROJECTS_ROOT: projectsRoot });
    await request(t.app, 'POST', '/v1/projects/customer-acme/tools/write_file', { path: 'private/plan.txt', content: 'x' });
    await request(t.app, 'POST', '/v1/tools/read_file', { path: 'private/plan.txt' }, { 'x-project-id': 'customer-acme' });
    await request(t.app, 'POST', '/v1/tools/weird_tool_name_42', {}, { 'x-project-id': 'customer-acme' });
    await request(t.app, 'GET', '/no/such/path/customer-acme');
    await request(t.app, 'GET', '/v1/tools?format=openai');

    const { scrape: s, raw } = await scrape(t);
    const routes = new Set(s.samples.filter((x) => x.name === 'toolgate_http_request_duration_seconds_count').map((x) => x.labels.route));
    expect(routes).toContain('/v1/projects/:projectId/tools/write_file');
    expect(routes).toContain('/v1/tools/read_file');
    expect(routes).toContain('/v1/tools/:tool');
    expect(routes).toContain('/v1/tools');
    expect(routes).toContain('unmatched');
    const sample = s.samples.find((x) => x.name === 'toolgate_http_request_duration_seconds_count' && x.labels.route === '/v1/tools/read_file');
    expect(sample?.labels).toEqual({ method: 'POST', route: '/v1/tools/read_file', status_code: '200' });
    // unknown tool names are one label value, not what the caller typed
    expect(value(s, 'toolgate_tool_calls_total', { tool: '_unknown', status: 'error' })).toBe(1);
    // no path, project id or caller-chosen string anywhere
    for (const secret of ['customer-acme', 'private', 'plan.txt', 'weird_tool_name_42', 'format=openai', '/no/such']) expect(raw, secret).not.toContain(secret);
    await fs.rm(projectsRoot, { recursive: true, force: true });
  });

  it('lock waits of lazily opened project workspaces are observed too', async () => {
    const projectsRoot = await makeTempDir('toolgate-projects-');
    await fs.mkdir(path.join(projectsRoot, 'p'));
    const t = await app({ TOOLGATE_PROJECTS_ROOT: projectsRoot });
    await request(t.app, 'POST', '/v1/projects/p/tools/write_file', { path: 'a.txt', content: 'x' });
    expect(value((await scrape(t)).scrape, 'toolgate_lock_wait_seconds_count')).toBe(1);
    await fs.rm(projectsRoot, { recursive: true, force: true });
  });

  it('each app has its own registry', async () => {
    const one = await app();
    const two = await app();
    await one.call('write_file', { path: 'a.txt', content: 'x' });
    expect(value((await scrape(one)).scrape, 'toolgate_tool_calls_total')).toBe(1);
    expect(value((await scrape(two)).scrape, 'toolgate_tool_calls_total')).toBe(0);
  });

  it('the approvals counter is there for the approval flow', async () => {
    const t = await app();
    t.app.toolgate.metrics?.approvals.inc({ outcome: 'approved' });
    expect(value((await scrape(t)).scrape, 'toolgate_approvals_total', { outcome: 'approved' })).toBe(1);
  });

  it('TOOLGATE_METRICS=false removes the endpoint', async () => {
    const t = await app({ TOOLGATE_METRICS: 'false' });
    expect((await request(t.app, 'GET', '/metrics')).status).toBe(404);
    expect((await t.call('write_file', { path: 'a.txt', content: 'x' })).status).toBe(200);
  });
});

describe('metrics recorded through kept label children', () => {
  it('print what label objects per call would print', async () => {
    const m = createMetrics('test');
    // The same metrics, recorded the way a label object per call records them.
    const registers = [new Registry()];
    const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
    const calls = new Counter({ name: 'toolgate_tool_calls_total', help: 'x', labelNames: ['tool', 'status'], registers });
    const errors = new Counter({ name: 'toolgate_tool_errors_total', help: 'x', labelNames: ['tool', 'code'], registers });
    const duration = new Histogram({ name: 'toolgate_tool_duration_seconds', help: 'x', labelNames: ['tool'], buckets, registers });
    const read = new Counter({ name: 'toolgate_bytes_read_total', help: 'x', labelNames: ['tool'], registers });
    const written = new Counter({ name: 'toolgate_bytes_written_total', help: 'x', labelNames: ['tool'], registers });
    const conflicts = new Counter({ name: 'toolgate_conflicts_total', help: 'x', labelNames: ['tool'], registers });
    const http = new Histogram({ name: 'toolgate_http_request_duration_seconds', help: 'x', labelNames: ['method', 'route', 'status_code'], buckets, registers });
    const ctx = bareContext('r');
    for (let i = 0; i < 300; i++) {
      const tool = i % 7 === 0 ? null : (TOOLS[i % 5] ?? null);
      const name = tool?.name ?? '_unknown';
      const failed = i % 3 === 0;
      const code = i % 2 === 0 ? 'CONFLICT' : 'NOT_FOUND';
      const envelope = failed ? errorEnvelope(ctx, new ToolError(code, 'x')) : resultEnvelope(ctx, { data: null, text: 't', partial: i % 4 === 1 });
      const audit = { bytes_read: i % 5 === 0 ? i : undefined, bytes_written: i % 11 === 0 ? i * 2 : undefined };
      const durationMs = (i * 37) % 4000;
      m.recordCall({} as never, name, { envelope, httpStatus: 200, version: null, tool, audit, durationMs });
      calls.inc({ tool: name, status: envelope.status });
      duration.observe({ tool: name }, durationMs / 1000);
      if (audit.bytes_read) read.inc({ tool: name }, audit.bytes_read);
      if (audit.bytes_written) written.inc({ tool: name }, audit.bytes_written);
      if (failed) {
        errors.inc({ tool: name, code });
        if (code === 'CONFLICT') conflicts.inc({ tool: name });
      }
      const [method, route, status] = [['POST', '/v1/tools/:tool', 200], ['GET', '/healthz', 200], ['POST', 'unmatched', 404], ['GET', '/v1/tools', 401]][i % 4] as [string, string, number];
      m.recordHttp(method, route, status, durationMs / 1000);
      http.observe({ method, route, status_code: String(status) }, durationMs / 1000);
    }
    for (const metric of [calls, errors, duration, read, written, conflicts, http]) {
      const expected = await metric.get();
      const ours = await m.registry.getSingleMetric(expected.name)?.get();
      expect(ours?.values, expected.name).toEqual(expected.values);
    }
    m.registry.clear();
  });
});
