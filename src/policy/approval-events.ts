// What an approval's events leave behind (docs/approvals.md): one audit line and one count each (a refused or
// expired command's held run discarded with it), and the sweep that expires overdue requests.
import { dropHeld, sweepHeld } from '../exec/held.js';
import type { AuditLog } from '../ops/audit.js';
import type { Metrics } from '../ops/metrics.js';
import type { Projects } from '../ops/projects.js';
import type { ApprovalRecord, ApprovalStore } from './approvals.js';

export type ApprovalEvent = 'requested' | 'approved' | 'rejected' | 'used' | 'expired' | 'refused' | 'tampered';

/** Tools whose requests may hold a run (src/exec/held.ts). */
const TOOLS_HOLDING = new Set(['run_command']);

/** How often overdue requests are expired (and settled ones past their retention removed). */
const SWEEP_INTERVAL_MS = 30_000;

export class ApprovalNotes {
  constructor(private readonly deps: { projects: Projects; audit: AuditLog; metrics: Metrics | null }) {}

  /** One audit line and one count per request, decision, use, refusal and expiry. */
  note(event: ApprovalEvent, record: ApprovalRecord | null, extra: Record<string, unknown> = {}): void {
    this.deps.metrics?.approvals.inc({ outcome: event });
    const entry = {
      time: new Date().toISOString(),
      event: `approval_${event}`,
      approval_id: record?.id ?? null,
      actor: record?.caller ?? null,
      project: record?.project ?? null,
      tool: record?.tool ?? null,
      path: record?.path ?? null,
      risk: record?.risk ?? null,
      status: record?.status ?? null,
      ...(record?.decided_by !== undefined && record.decided_at !== null && { decided_by: record.decided_by, decided_at: record.decided_at, reason: record.reason }),
      ...extra,
    };
    const { projects, audit } = this.deps;
    // A refused or expired request of a command discards the run it held (docs/run-command.md, "Changes that ask").
    const discards = record !== null && (event === 'rejected' || event === 'expired') && TOOLS_HOLDING.has(record.tool);
    // In a single workspace the line is queued at once, in the order of the events.
    if (projects.single) {
      audit.recordEvent(entry, projects.single.stateDir);
      if (discards) void dropHeld(projects.single.stateDir, record.id);
    } else {
      void this.projectStateDir(record?.project ?? null).then(async (dir) => {
        audit.recordEvent(entry, dir);
        if (discards && dir !== null) await dropHeld(dir, record.id);
      });
    }
  }

  private async projectStateDir(project: string | null): Promise<string | null> {
    const { projects } = this.deps;
    if (project === null) return null;
    try {
      return (await projects.project(project, null)).stateDir;
    } catch {
      return null;
    }
  }
}

export class ApprovalSweeper {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: ApprovalStore,
    private readonly notes: ApprovalNotes,
    private readonly projects: Projects,
  ) {}

  /** Expires overdue requests every SWEEP_INTERVAL_MS; each expiry is one audit line (from the replica that won it). */
  start(onError: (err: unknown) => void): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep().catch(onError), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async sweep(now?: number): Promise<ApprovalRecord[]> {
    const store = this.store;
    const { expired } = await store.sweepExpired(now);
    for (const r of expired) this.notes.note('expired', r);
    // Held command runs nobody can land any more (their request settled elsewhere, or was never recorded).
    const single = this.projects.single;
    if (single) {
      await sweepHeld(single.stateDir, async (id) => {
        const r = await store.get(id);
        return r !== null && (r.status === 'pending' || r.status === 'approved' || r.status === 'used');
      });
    }
    return expired;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
