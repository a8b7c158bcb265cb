// The Grafana dashboard (helm/toolgate/dashboards/toolgate.json) against a live service: the real app on
// a real port, some real tool calls (successes, errors, a CONFLICT, a rate-limit refusal), one scrape of
// /metrics over HTTP, and every metric family the dashboard queries must be there. A family counts when
// /metrics prints its `# TYPE` (or `# HELP`) line, which covers labelled families without samples yet;
// the ones these calls feed must also carry samples, so the panels would not be empty.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardMetricNames } from '../helm/dashboard-metrics.js';
import { makeApp, type TestApp } from '../helpers.js';

const RATE_LIMIT = 12;

let t: TestApp;
let base = '';
let scrape = '';

interface Envelope {
  status: string;
  data: { version?: { sha256: string } } | null;
  error?: { code: string };
}

async function call(tool: string, body: unknown): Promise<{ status: number; body: Envelope }> {
  const res = await fetch(`${base}/v1/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Envelope };
}

/** Family names declared by `# TYPE` / `# HELP` lines, and the names of sample lines. */
function families(text: string): { declared: Map<string, string>; helped: Set<string>; sampled: Set<string> } {
  const declared = new Map<string, string>();
  const helped = new Set<string>();
  const sampled = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) declared.set(type[1] as string, type[2] as string);
    const help = /^# HELP (\S+) /.exec(line);
    if (help) helped.add(help[1] as string);
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})? \S+$/.exec(line);
    if (sample) sampled.add(sample[1] as string);
  }
  return { declared, helped, sampled };
}

beforeAll(async () => {
  t = await makeApp({ TOOLGATE_RATE_LIMIT: String(RATE_LIMIT) });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

  // Real traffic: successes with bytes read and written (and a lock wait), errors, a CONFLICT.
  const created = await call('write_file', { path: 'src/a.txt', content: 'one\ntwo\n' });
  expect(created.status).toBe(200);
  const read = await call('read_file', { path: 'src/a.txt' });
  expect(read.status).toBe(200);
  const v1 = read.body.data?.version?.sha256;
  expect((await call('edit_file', { path: 'src/a.txt', old_text: 'two', new_text: 'three', expected_sha256: v1 })).status).toBe(200);
  const conflict = await call('write_file', { path: 'src/a.txt', content: 'stale\n', expected_sha256: v1 });
  expect(conflict.body.error?.code).toBe('CONFLICT');
  expect((await call('read_file', { path: 'missing.txt' })).body.error?.code).toBe('NOT_FOUND');
  expect((await call('list_directory', { path: '.' })).status).toBe(200);
  // Spend the rest of the budget until the rate limit refuses a call.
  let refused = false;
  for (let i = 0; i < RATE_LIMIT && !refused; i++) refused = (await call('file_info', { path: 'src/a.txt' })).body.error?.code === 'RATE_LIMITED';
  expect(refused).toBe(true);

  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  scrape = await res.text();
});

afterAll(async () => {
  await t?.close();
});

describe('the Grafana dashboard against a live /metrics', () => {
  it('queries metric families, and finds each one on /metrics', () => {
    const wanted = dashboardMetricNames();
    expect(wanted.length).toBeGreaterThan(5);
    const { declared, helped } = families(scrape);
    const missing = wanted.filter((name) => !declared.has(name) && !helped.has(name));
    expect(missing, `queried by the dashboard but not on /metrics:\n${missing.join('\n')}`).toEqual([]);
  });

  it('gets samples for the families the calls above feed (histograms with _bucket series)', () => {
    const { declared, sampled } = families(scrape);
    // Labelled families that only a flow these calls do not use feeds (approvals) may have no sample yet.
    const mayBeEmpty = new Set(['toolgate_approvals_total']);
    const empty: string[] = [];
    for (const name of dashboardMetricNames()) {
      if (mayBeEmpty.has(name)) continue;
      const type = declared.get(name);
      const series = type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : type === 'summary' ? [`${name}_sum`, `${name}_count`] : [name];
      if (!series.every((s) => sampled.has(s))) empty.push(`${name} (${type ?? 'no TYPE'})`);
    }
    expect(empty, `dashboard families without samples after real calls:\n${empty.join('\n')}`).toEqual([]);
  });

  it('counts the calls on the series the panels read', () => {
    expect(scrape).toMatch(/^toolgate_tool_calls_total\{tool="write_file",status="success"\} 1$/m);
    expect(scrape).toMatch(/^toolgate_tool_errors_total\{tool="read_file",code="NOT_FOUND"\} 1$/m);
    expect(scrape).toMatch(/^toolgate_conflicts_total\{tool="write_file"\} 1$/m);
    expect(scrape).toMatch(/^toolgate_rate_limited_total 1$/m);
    expect(scrape).toMatch(/^toolgate_bytes_written_total\{tool="write_file"\} 8$/m);
    expect(scrape).toMatch(/^toolgate_http_request_duration_seconds_count\{method="POST",route="\/v1\/tools\/write_file",status_code="409"\} 1$/m);
    // No workspace path in any label.
    expect(scrape).not.toContain('src/a.txt');
    expect(scrape).not.toContain(t.root);
  });
});
