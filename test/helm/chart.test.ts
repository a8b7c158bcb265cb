// Static checks of the Helm chart (helm itself is not available here): values.yaml and every
// ci/*-values.yaml against values.schema.json, every .Values reference in the templates against
// values.yaml, template block balance and includes, the dashboard, and yamllint over the plain YAML.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/policy-file.js';
import { TOOLS } from '../../src/tools/registry.js';
import { dashboardMetricNames } from './dashboard-metrics.js';

const HELM_DIR = fileURLToPath(new URL('../../helm', import.meta.url));
const CHART_DIR = path.join(HELM_DIR, 'toolgate');
const TEMPLATES_DIR = path.join(CHART_DIR, 'templates');
const CI_DIR = path.join(CHART_DIR, 'ci');

type Values = Record<string, unknown>;

const isMap = (v: unknown): v is Values => v !== null && typeof v === 'object' && !Array.isArray(v);

function readYaml(file: string): Values {
  const doc: unknown = parseYaml(readFileSync(file, 'utf8'));
  if (doc === null || doc === undefined) return {};
  if (!isMap(doc)) throw new Error(`${file}: top level is not a map`);
  return doc;
}

/** Helm's coalescing of user values over chart defaults: maps merge, everything else replaces, null deletes. */
function coalesce(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key];
    else if (isMap(value) && isMap(out[key])) out[key] = coalesce(out[key], value);
    else out[key] = value;
  }
  return out;
}

const defaults = readYaml(path.join(CHART_DIR, 'values.yaml'));
const schema = JSON.parse(readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8')) as Values;
const ciFiles = readdirSync(CI_DIR)
  .filter((f) => /-values\.ya?ml$/.test(f))
  .sort();
const templateFiles = readdirSync(TEMPLATES_DIR)
  .filter((f) => /\.(ya?ml|tpl|txt)$/.test(f))
  .sort();

const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
const validate = ajv.compile(schema);
const describeErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('\n');

describe('values.schema.json', () => {
  it('is a draft-07 schema that rejects unknown top-level keys', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.additionalProperties).toBe(false);
  });

  it('accepts values.yaml', () => {
    expect(validate(defaults), describeErrors(validate.errors)).toBe(true);
  });

  it('has at least the three example value files', () => {
    expect(ciFiles).toEqual(
      expect.arrayContaining([
        'default-values.yaml',
        'rwx-replicas-with-redis-values.yaml',
        'networkpolicy-servicemonitor-values.yaml',
      ]),
    );
  });

  it.each(ciFiles)('accepts ci/%s merged over values.yaml', (file) => {
    const merged = coalesce(defaults, readYaml(path.join(CI_DIR, file)));
    expect(validate(merged), describeErrors(validate.errors)).toBe(true);
  });

  const bad: [string, Values][] = [
    ['an unknown top-level key', { replicas: 2 }],
    ['an unknown nested key', { persistence: { enabled: true, accessMode: 'ReadWriteOnce', sise: '1Gi' } }],
    ['a malformed token hash', { auth: { tokens: [{ id: 'a', sha256: 'not-a-hash' }], existingSecret: '' } }],
    ['an unknown risk class', { auth: { tokens: [{ id: 'a', sha256: 'a'.repeat(64), risks: ['admin'] }], existingSecret: '' } }],
    ['an unknown access mode', { persistence: { enabled: true, accessMode: 'ReadOnlyMany' } }],
    ['a string rate limit', { config: { rateLimit: '100' } }],
    ['both minAvailable and maxUnavailable', { podDisruptionBudget: { enabled: true, minAvailable: 1, maxUnavailable: 1 } }],
    ['a non-redis URL', { redis: { url: 'http://redis:6379' } }],
    ['an unknown strategy', { strategy: { type: 'BlueGreen' } }],
  ];
  it.each(bad)('rejects %s', (_name, over) => {
    expect(validate(coalesce(defaults, over))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Templates

interface Action {
  line: number;
  text: string;
}

/** The `{{ ... }}` actions of a template, with comments dropped. */
function actions(source: string): Action[] {
  const out: Action[] = [];
  const re = /\{\{-?\s*([\s\S]*?)\s*-?\}\}/g;
  for (const m of source.matchAll(re)) {
    const text = m[1] ?? '';
    if (text.startsWith('/*')) continue;
    out.push({ line: source.slice(0, m.index).split('\n').length, text });
  }
  return out;
}

const stripStrings = (text: string) => text.replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""');
const VALUES_REF = /\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g;
/** A field chain on the dot (`.a.b`), not on a variable (`$x.a`) nor a builtin (`.Release.Name`). */
const RELATIVE_REF = /(?<![\w$)\]])\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)/g;
const BUILTINS = new Set(['Values', 'Release', 'Chart', 'Files', 'Capabilities', 'Template', 'Subcharts']);

interface Ref {
  file: string;
  line: number;
  path: string[];
}

/**
 * Walks a template's blocks, collecting every values path it reads: `.Values.a.b` anywhere, and
 * `.c` inside `{{ with .Values.a.b }}` (or a nested relative `with`) as a.b.c. Inside `range` and
 * `define` the dot is unknown and relative references are skipped. Throws on unbalanced blocks.
 */
function valuesRefs(file: string, source: string): Ref[] {
  const refs: Ref[] = [];
  // Scope of the dot: 'root', a values path, or null (unknown).
  const stack: (string[] | 'root' | null)[] = [];
  const scope = () => (stack.length === 0 ? 'root' : stack[stack.length - 1]!);
  for (const { line, text: raw } of actions(source)) {
    const text = stripStrings(raw);
    for (const m of text.matchAll(VALUES_REF)) refs.push({ file, line, path: m[1]!.slice(1).split('.') });
    const keyword = /^(if|with|range|define|block|else|end)\b/.exec(text)?.[1];
    const current = scope();
    const relative = (expr: string): string[][] => {
      if (!Array.isArray(current)) return [];
      const paths: string[][] = [];
      for (const m of expr.matchAll(RELATIVE_REF)) {
        const parts = m[1]!.split('.');
        if (!BUILTINS.has(parts[0]!)) paths.push([...current, ...parts]);
      }
      return paths;
    };
    if (keyword === 'end') {
      if (stack.length === 0) throw new Error(`${file}:${line}: {{ end }} without an open block`);
      stack.pop();
      continue;
    }
    for (const p of relative(keyword === 'define' ? '' : text)) refs.push({ file, line, path: p });
    if (keyword === 'if') stack.push(current);
    else if (keyword === 'range' || keyword === 'define' || keyword === 'block') stack.push(null);
    else if (keyword === 'with') {
      const arg = text.slice('with'.length).trim();
      const abs = /^\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)$/.exec(arg);
      const rel = /^\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$/.exec(arg);
      if (abs) stack.push(abs[1]!.slice(1).split('.'));
      else if (rel && Array.isArray(current)) stack.push([...current, ...rel[1]!.split('.')]);
      else stack.push(null);
    }
  }
  if (stack.length !== 0) throw new Error(`${file}: ${stack.length} block(s) not closed with {{ end }}`);
  return refs;
}

function hasPath(values: Values, p: string[]): boolean {
  let node: unknown = values;
  for (const key of p) {
    if (!isMap(node) || !Object.prototype.hasOwnProperty.call(node, key)) return false;
    node = node[key];
  }
  return true;
}

const templates = templateFiles.map((f) => ({ file: f, source: readFileSync(path.join(TEMPLATES_DIR, f), 'utf8') }));

describe('templates', () => {
  it('include the expected objects', () => {
    expect(templateFiles).toEqual(
      expect.arrayContaining([
        '_helpers.tpl',
        'NOTES.txt',
        'deployment.yaml',
        'service.yaml',
        'pvc.yaml',
        'secret.yaml',
        'pdb.yaml',
        'networkpolicy.yaml',
        'servicemonitor.yaml',
        'configmap-dashboard.yaml',
      ]),
    );
  });

  it('reference only values that exist in values.yaml', () => {
    const refs = templates.flatMap(({ file, source }) => valuesRefs(file, source));
    expect(refs.length).toBeGreaterThan(50);
    const missing = refs.filter((r) => !hasPath(defaults, r.path)).map((r) => `${r.file}:${r.line} .Values.${r.path.join('.')}`);
    expect(missing).toEqual([]);
    // the scope tracking works: references inside `with .Values.config` resolve to config.*
    expect(refs.some((r) => r.path.join('.') === 'config.rateLimitWindowMs')).toBe(true);
  });

  it('have every values.yaml section used by some template', () => {
    const used = new Set(templates.flatMap(({ file, source }) => valuesRefs(file, source)).map((r) => r.path[0]));
    expect(Object.keys(defaults).filter((k) => !used.has(k))).toEqual([]);
  });

  it('include only named templates that are defined', () => {
    const all = templates.map((t) => t.source).join('\n');
    const defined = new Set([...all.matchAll(/\{\{-?\s*define\s+"([^"]+)"/g)].map((m) => m[1]));
    const included = [...all.matchAll(/\b(?:include|template)\s+"([^"]+)"/g)].map((m) => m[1]);
    expect(included.length).toBeGreaterThan(0);
    expect(included.filter((n) => !defined.has(n))).toEqual([]);
  });

  it('read only chart files that exist', () => {
    const all = templates.map((t) => t.source).join('\n');
    const files = [...all.matchAll(/\.Files\.Get\s+"([^"]+)"/g)].map((m) => m[1]!);
    expect(files).toContain('dashboards/toolgate.json');
    for (const f of files) expect(existsSync(path.join(CHART_DIR, f)), f).toBe(true);
    const included = [...all.matchAll(/print \$\.Template\.BasePath "\/([^"]+)"/g)].map((m) => m[1]!);
    for (const f of included) expect(existsSync(path.join(TEMPLATES_DIR, f)), f).toBe(true);
  });

  it('wire the probes, the tokens file and the hardening into the Deployment', () => {
    const d = templates.find((t) => t.file === 'deployment.yaml')!.source;
    expect(d).toMatch(/path: \/livez/);
    expect(d).toMatch(/path: \/readyz/);
    expect(d).toMatch(/name: TOOLGATE_TOKENS_FILE/);
    expect(d).toMatch(/mountPath: \/tmp/);
    expect(d).toMatch(/readOnly: true/);
    const sc = defaults.securityContext as Values;
    expect(sc).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(defaults.podSecurityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 });
  });

  it('mount the policy and pass the approval settings, and every policy in the values loads', () => {
    const d = templates.find((t) => t.file === 'deployment.yaml')!.source;
    expect(d).toMatch(/name: TOOLGATE_POLICY\n\s+value: \/etc\/toolgate\/policy\/policy\.yaml/);
    expect(d).toMatch(/mountPath: \/etc\/toolgate\/policy/);
    expect(d).toMatch(/name: TOOLGATE_APPROVAL_SECRET/);
    expect(d).toMatch(/name: TOOLGATE_APPROVAL_MAX_WAIT_S/);
    const withPolicy = ciFiles.map((f) => readYaml(path.join(CI_DIR, f))).filter((v) => isMap(v.policy) && typeof v.policy.content === 'string' && v.policy.content !== '');
    expect(withPolicy.length).toBeGreaterThan(0);
    // The same validation the service runs at start-up: a policy the chart ships must not stop the pod.
    for (const v of withPolicy) expect(() => parsePolicy((v.policy as Values).content as string, 'values.yaml', { knownTools: TOOLS.map((t) => t.name) })).not.toThrow();
  });
});

describe('the web tools in the chart', () => {
  const source = (file: string) => templates.find((t) => t.file === file)!.source;

  it('pass every web setting as its TOOLGATE_WEB_* variable, the search key only from a Secret', () => {
    const d = source('deployment.yaml');
    for (const name of ['ALLOW', 'SEARCH_PROVIDER', 'SEARCH_URL', 'MAX_BYTES', 'TIMEOUT_MS', 'SEARCH_KEY']) expect(d).toContain(`name: TOOLGATE_WEB_${name}`);
    expect(d).toMatch(/TOOLGATE_WEB_ALLOW\n\s+value: \{\{ join "," \.webAllow \| quote \}\}/);
    expect(d).toMatch(/TOOLGATE_WEB_SEARCH_KEY\n\s+valueFrom:\n\s+secretKeyRef:/);
    expect(defaults.webSearch).toEqual({ existingSecret: '', existingSecretKey: 'search-key' });
  });

  it('give the NetworkPolicy an egress rule for public addresses, off by default, the internal ranges excepted', () => {
    const np = source('networkpolicy.yaml');
    expect(np).toMatch(/with \.Values\.networkPolicy\.webEgress \}\}\n\s+\{\{- if \.enabled \}\}\n\s+- to:\n\s+- ipBlock:\n\s+cidr: \{\{ \.cidr \}\}/);
    const web = (defaults.networkPolicy as Values).webEgress as Values;
    expect(web.enabled).toBe(false);
    expect(web.cidr).toBe('0.0.0.0/0');
    expect(web.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '127.0.0.0/8']));
    expect(web.ports).toEqual([80, 443]);
  });

  it('are exercised by a ci values file, which the schema accepts', () => {
    const ci = coalesce(defaults, readYaml(path.join(CI_DIR, 'networkpolicy-servicemonitor-values.yaml')));
    expect(validate(ci), describeErrors(validate.errors)).toBe(true);
    expect(((ci.networkPolicy as Values).webEgress as Values).enabled).toBe(true);
    expect((ci.config as Values).webAllow).toEqual(['wiki.corp.example', '10.20.0.0/16']);
  });

  it('refuse web values the service would refuse', () => {
    for (const over of [{ config: { webSearchProvider: 'bing' } }, { config: { webAllow: 'a,b' } }, { config: { webAllow: ['a, b'] } }, { config: { webSearchUrl: 'ftp://x' } }, { networkPolicy: { webEgress: { enabled: true, ports: [] } } }]) {
      expect(validate(coalesce(defaults, over)), JSON.stringify(over)).toBe(false);
    }
  });
});

describe('run_command in the chart', () => {
  const d = () => templates.find((t) => t.file === 'deployment.yaml')!.source;

  it('exec.enabled sets TOOLGATE_EXEC=sandboxed and the security settings the sandbox needs, nothing more', () => {
    const src = d();
    expect(src).toMatch(/if \.Values\.exec\.enabled \}\}\n\s+- name: TOOLGATE_EXEC\n\s+value: "sandboxed"/);
    expect(src).toMatch(/name: TOOLGATE_EXEC_NETWORK\n\s+value: \{\{ \.Values\.exec\.network \| toString \| quote \}\}/);
    for (const key of ['seccompProfile', 'appArmorProfile', 'procMount']) expect(src).toContain(`set $securityContext "${key}" .Values.exec.${key}`);
    expect(src).toMatch(/if \.Values\.exec\.enabled \}\}\n(?:.*\n)?\s+hostUsers: \{\{ \.Values\.exec\.hostUsers \}\}/);
    const exec = defaults.exec as Values;
    expect(exec).toMatchObject({ enabled: false, network: false, seccompProfile: { type: 'Unconfined' }, appArmorProfile: { type: 'Unconfined' }, procMount: 'Unmasked', hostUsers: false });
    // No capability, no privilege escalation, non-root: the sandbox needs none of them.
    expect(defaults.securityContext).toMatchObject({ allowPrivilegeEscalation: false, privileged: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true });
  });

  it('refuses exec values the cluster would refuse', () => {
    for (const over of [{ exec: { procMount: 'Open' } }, { exec: { hostUsers: 'no' } }, { exec: { network: 'yes' } }]) {
      expect(validate(coalesce(defaults, over)), JSON.stringify(over)).toBe(false);
    }
  });
});

describe('the scope tracking of the template scan', () => {
  it('resolves relative references and rejects unbalanced blocks', () => {
    const src = '{{- with .Values.a }}{{ .b | quote }}{{ with .c }}{{ .d }}{{ end }}{{ range .e }}{{ .f }}{{ end }}{{ end }}{{ $.Values.g.h }}';
    expect(valuesRefs('t', src).map((r) => r.path.join('.'))).toEqual(['a', 'a.b', 'a.c', 'a.c.d', 'a.e', 'g.h']);
    expect(() => valuesRefs('t', '{{ if .Values.a }}')).toThrow(/not closed/);
    expect(() => valuesRefs('t', '{{ end }}')).toThrow(/without an open block/);
  });
});

// ---------------------------------------------------------------------------------------------
// Dashboard

/** Metric families the service exposes (fixed names) and the prom-client defaults the dashboard may use. */
const SERVICE_METRICS = [
  'toolgate_tool_calls_total',
  'toolgate_tool_errors_total',
  'toolgate_tool_duration_seconds',
  'toolgate_bytes_read_total',
  'toolgate_bytes_written_total',
  'toolgate_lock_wait_seconds',
  'toolgate_conflicts_total',
  'toolgate_rate_limited_total',
  'toolgate_http_request_duration_seconds',
  'toolgate_build_info',
  'toolgate_approvals_total',
  'toolgate_approvals_pending',
  'toolgate_process_resident_memory_bytes',
  'toolgate_nodejs_eventloop_lag_p99_seconds',
];

describe('Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(path.join(CHART_DIR, 'dashboards/toolgate.json'), 'utf8')) as {
    uid: string;
    panels: { id: number; type: string; targets?: { expr: string }[] }[];
  };

  it('queries only metrics the service exposes, and the ones the issue asks for', () => {
    const names = dashboardMetricNames();
    expect(names.filter((n) => !SERVICE_METRICS.includes(n))).toEqual([]);
    expect(names).toEqual(
      expect.arrayContaining([
        'toolgate_tool_calls_total',
        'toolgate_tool_duration_seconds',
        'toolgate_tool_errors_total',
        'toolgate_conflicts_total',
        'toolgate_rate_limited_total',
        'toolgate_bytes_read_total',
        'toolgate_bytes_written_total',
      ]),
    );
  });

  it('maps histogram series back to their family', () => {
    const names = dashboardMetricNames({
      a: 'histogram_quantile(0.9, rate(toolgate_x_seconds_bucket[5m])) / rate(toolgate_y_count[5m])',
      b: ['sum(rate(toolgate_x_seconds_sum[5m]))', 'toolgate_z_bytes_count', 'toolgate_w_total'],
    });
    expect(names).toEqual(['toolgate_w_total', 'toolgate_x_seconds', 'toolgate_y_count', 'toolgate_z_bytes']);
  });

  it('has unique panel ids and a query in every panel, with the latency quantiles', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const exprs = dashboard.panels.filter((p) => p.type !== 'row').map((p) => p.targets?.map((t) => t.expr) ?? []);
    for (const e of exprs) expect(e.length).toBeGreaterThan(0);
    const all = exprs.flat().join('\n');
    expect(all).toContain('histogram_quantile(0.5, sum by (le, tool) (rate(toolgate_tool_duration_seconds_bucket');
    expect(all).toContain('histogram_quantile(0.99, sum by (le, tool) (rate(toolgate_tool_duration_seconds_bucket');
  });

  it('is shipped as a ConfigMap labelled grafana_dashboard: "1"', () => {
    const cm = templates.find((t) => t.file === 'configmap-dashboard.yaml')!.source;
    expect(cm).toContain('grafana_dashboard: "1"');
    expect(cm).toContain('.Files.Get "dashboards/toolgate.json"');
    expect(cm).toContain('.Values.dashboard.enabled');
  });
});

// ---------------------------------------------------------------------------------------------
// yamllint

describe('yamllint', () => {
  it('passes over Chart.yaml, values.yaml and ci/*.yaml', () => {
    const files = ['Chart.yaml', 'values.yaml', ...readdirSync(CI_DIR).filter((f) => /\.ya?ml$/.test(f)).map((f) => `ci/${f}`)];
    const res = spawnSync('yamllint', ['-c', path.join(HELM_DIR, '.yamllint'), '-s', '-f', 'parsable', ...files], {
      cwd: CHART_DIR,
      encoding: 'utf8',
    });
    if (res.error && (res.error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('yamllint is not installed: install the Debian package (apt-get install -y yamllint; `npm test` does this as root: scripts/test-deps.mjs)');
    }
    expect(res.error).toBeUndefined();
    expect(`${res.stdout}${res.stderr}`.trim()).toBe('');
    expect(res.status).toBe(0);
  });
});
