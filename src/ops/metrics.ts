// Prometheus metrics (docs/operations.md) in a Registry of their own per app, so tests can build several apps.
// The names are fixed: the Grafana dashboard (helm/toolgate/dashboards) queries them. Labels carry tool
// names, codes and route templates only: never a path, a project id or a raw URL.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CallInfo, CallOutcome } from '../tools/call.js';
import { workerJobs } from '../workers/bounded-pool.js';
import type { WorkspaceObserver } from '../workspace/workspace.js';

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const LOCK_BUCKETS = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Label for calls to a name that is no tool: attacker-chosen names must not become label values. */
export const UNKNOWN_TOOL = '_unknown';

export interface Metrics {
  registry: Registry;
  toolCalls: Counter<'tool' | 'status'>;
  toolErrors: Counter<'tool' | 'code'>;
  toolDuration: Histogram<'tool'>;
  bytesRead: Counter<'tool'>;
  bytesWritten: Counter<'tool'>;
  lockWait: Histogram;
  conflicts: Counter<'tool'>;
  rateLimited: Counter;
  httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  buildInfo: Gauge<'version' | 'node'>;
  /** Human-in-the-loop outcomes (`requested`, `approved`, `rejected`, `expired`…), counted by the approval flow. */
  approvals: Counter<'outcome'>;
  /** Approval requests waiting for a person (read from the store at each scrape, so every replica agrees). */
  approvalsPending: Gauge;
  /** Where the pending gauge reads its value; null: no approvals configured (0). */
  setPendingSource(source: (() => Promise<number>) | null): void;
  /** Attach to every workspace: lock waits. */
  observer: WorkspaceObserver;
  /** Executor after-hook: one tool call. */
  recordCall(call: CallInfo, toolName: string, outcome: CallOutcome): void;
  /** onResponse: one HTTP request, by route template. */
  recordHttp(method: string, route: string, statusCode: number, seconds: number): void;
}

export function createMetrics(version: string): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'toolgate_' });
  let pendingSource: (() => Promise<number>) | null = null;
  const m = instruments([registry], () => pendingSource);
  m.buildInfo.set({ version, node: process.version }, 1);
  const calls = callCounters(m);
  // The request histogram's child per route template, method and status code: all bounded sets.
  const http = new Map<string, Map<string, Map<number, Histogram.Internal<'method' | 'route' | 'status_code'>>>>();
  return {
    registry,
    ...m,
    setPendingSource(source) {
      pendingSource = source;
    },
    observer: { lockWait: (seconds) => m.lockWait.observe(seconds) },
    recordCall(_call, _toolName, outcome) {
      calls(outcome);
    },
    recordHttp(method, route, statusCode, seconds) {
      let byMethod = http.get(route);
      if (!byMethod) http.set(route, (byMethod = new Map()));
      let byStatus = byMethod.get(method);
      if (!byStatus) byMethod.set(method, (byStatus = new Map()));
      let child = byStatus.get(statusCode);
      if (!child) byStatus.set(statusCode, (child = m.httpDuration.labels({ method, route, status_code: String(statusCode) })));
      child.observe(seconds);
    },
  };
}

/** The metrics themselves, without the functions that record into them. */
type Instruments = Omit<Metrics, 'registry' | 'setPendingSource' | 'observer' | 'recordCall' | 'recordHttp'>;

/** Declares every metric in `registers`; the pending-approvals gauge reads `pendingSource()` at each scrape. */
function instruments(registers: Registry[], pendingSource: () => (() => Promise<number>) | null): Instruments {
  const m: Instruments = {
    toolCalls: new Counter({ name: 'toolgate_tool_calls_total', help: 'Tool calls by tool and envelope status.', labelNames: ['tool', 'status'] as const, registers }),
    toolErrors: new Counter({ name: 'toolgate_tool_errors_total', help: 'Tool calls that answered an error, by error code.', labelNames: ['tool', 'code'] as const, registers }),
    toolDuration: new Histogram({ name: 'toolgate_tool_duration_seconds', help: 'Time of one tool call (validation, hooks and the tool itself).', labelNames: ['tool'] as const, buckets: DURATION_BUCKETS, registers }),
    bytesRead: new Counter({ name: 'toolgate_bytes_read_total', help: 'Bytes read from workspace files.', labelNames: ['tool'] as const, registers }),
    bytesWritten: new Counter({ name: 'toolgate_bytes_written_total', help: 'Bytes written to workspace files.', labelNames: ['tool'] as const, registers }),
    lockWait: new Histogram({ name: 'toolgate_lock_wait_seconds', help: 'Time a writer waited for a file lock.', buckets: LOCK_BUCKETS, registers }),
    conflicts: new Counter({ name: 'toolgate_conflicts_total', help: 'Optimistic-lock conflicts (CONFLICT answers).', labelNames: ['tool'] as const, registers }),
    rateLimited: new Counter({ name: 'toolgate_rate_limited_total', help: 'Tool calls refused by the rate limit.', registers }),
    httpDuration: new Histogram({
      name: 'toolgate_http_request_duration_seconds',
      help: 'HTTP request time by method, route template and status code.',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: DURATION_BUCKETS,
      registers,
    }),
    buildInfo: new Gauge({ name: 'toolgate_build_info', help: 'Build information (always 1).', labelNames: ['version', 'node'] as const, registers }),
    approvals: new Counter({ name: 'toolgate_approvals_total', help: 'Human-approval outcomes.', labelNames: ['outcome'] as const, registers }),
    approvalsPending: new Gauge({
      name: 'toolgate_approvals_pending',
      help: 'Approval requests waiting for a decision.',
      registers,
      async collect() {
        // A store that cannot be read counts 0: a scrape must not fail on it.
        const source = pendingSource();
        this.set(source ? await source().catch(() => 0) : 0);
      },
    }),
  };
  // Read from the pools at each scrape: they are per process, the registry per app.
  new Counter({
    name: 'toolgate_worker_jobs_total',
    help: 'Jobs handed to a worker thread, by pool (edit, html, office, regex, search).',
    labelNames: ['pool'] as const,
    registers,
    collect() {
      this.reset();
      for (const [pool, n] of workerJobs) this.inc({ pool }, n);
    },
  });
  return m;
}

/**
 * Counts one tool call: its status, time, bytes and error code. The label children of a tool are made at its first
 * call and kept (tools and statuses are fixed sets), instead of a label object hashed per metric and call
 * (docs/development.md, "Work done once").
 */
function callCounters(m: Instruments): (outcome: CallOutcome) => void {
  interface ToolChildren {
    calls: Map<string, Counter.Internal>;
    duration: Histogram.Internal<'tool'>;
    bytesRead: Counter.Internal;
    bytesWritten: Counter.Internal;
  }
  const byTool = new Map<string, ToolChildren>();
  return (outcome) => {
    const tool = outcome.tool?.name ?? UNKNOWN_TOOL;
    const { envelope, audit } = outcome;
    let children = byTool.get(tool);
    if (!children) {
      children = { calls: new Map(), duration: m.toolDuration.labels({ tool }), bytesRead: m.bytesRead.labels({ tool }), bytesWritten: m.bytesWritten.labels({ tool }) };
      byTool.set(tool, children);
    }
    const status = envelope.status;
    let calls = children.calls.get(status);
    if (!calls) children.calls.set(status, (calls = m.toolCalls.labels({ tool, status })));
    calls.inc();
    children.duration.observe(outcome.durationMs / 1000);
    if (audit.bytes_read) children.bytesRead.inc(audit.bytes_read);
    if (audit.bytes_written) children.bytesWritten.inc(audit.bytes_written);
    const code = envelope.error?.code;
    if (code) {
      m.toolErrors.inc({ tool, code });
      if (code === 'CONFLICT') m.conflicts.inc({ tool });
      if (code === 'RATE_LIMITED') m.rateLimited.inc();
    }
  };
}
