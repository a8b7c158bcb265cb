// Metric names the Grafana dashboard (helm/toolgate/dashboards/toolgate.json) queries, so that a test
// can check them against what a running service exposes at /metrics.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const DASHBOARD_PATH = fileURLToPath(new URL('../../helm/toolgate/dashboards/toolgate.json', import.meta.url));

const METRIC = /\btoolgate_[a-zA-Z0-9_:]*[a-zA-Z0-9:]/g;
const SERIES_SUFFIX = /_(bucket|sum|count)$/;

/** Every string anywhere in a parsed JSON value (PromQL sits in `expr`, variable `query`/`definition`, ...). */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

/**
 * Metric family names (as in `# TYPE` lines of /metrics) that the dashboard queries, sorted and unique.
 * Histogram and summary series are mapped back to their family: `_bucket` always; `_sum` and `_count`
 * when the family is also queried through `_bucket`, or when the family name ends in a unit a
 * histogram/summary carries (`_seconds`, `_bytes`). A counter's `_total` is kept (it is part of the
 * name prom-client prints).
 */
export function dashboardMetricNames(dashboard: unknown = JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8'))): string[] {
  const raw = new Set<string>();
  for (const s of strings(dashboard)) for (const m of s.matchAll(METRIC)) raw.add(m[0]);
  const histograms = new Set([...raw].filter((n) => n.endsWith('_bucket')).map((n) => n.slice(0, -'_bucket'.length)));
  const names = new Set<string>();
  for (const name of raw) {
    const base = name.replace(SERIES_SUFFIX, '');
    const isSeries =
      base !== name && (name.endsWith('_bucket') || histograms.has(base) || /_(seconds|bytes)$/.test(base));
    names.add(isSeries ? base : name);
  }
  return [...names].sort();
}
