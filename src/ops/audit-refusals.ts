// Refusals of callers that showed no valid token, counted per client address so that a flood of bad tokens
// costs the audit log a bounded number of lines (docs/operations.md): the first ones of a window get a line
// each, the rest one `refusals_counted` line when the window ends.

/** Unauthenticated refusals of one address that get a line each per window; the rest are counted. */
export const REFUSAL_LINES_PER_WINDOW = 10;
/** Addresses whose refusals are counted at once; past it the oldest one's count is written out early. */
const MAX_COUNTED_ADDRESSES = 10_000;
/** Refusals of callers that showed no valid token: the ones a flood of bad tokens is made of. */
const COUNTED_CODES = new Set(['UNAUTHORIZED', 'RATE_LIMITED']);

/** The refusals of one client address in its current window. */
interface RefusalWindow {
  start: number;
  lines: number;
  counted: number;
  codes: Record<string, number>;
  from: string;
  to: string;
  stateDir: string | null;
}

/** A window's count, as the audit log writes it. */
export interface RefusalCountEntry {
  time: string;
  event: 'refusals_counted';
  client_ip: string;
  count: number;
  codes: Record<string, number>;
  from: string;
  to: string;
}

export class RefusalThrottle {
  private readonly windows = new Map<string, RefusalWindow>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly windowMs: number,
    /** Writes a window's count line (to the state directory of the address's last refusal). */
    private readonly writeCount: (entry: RefusalCountEntry, stateDir: string | null, now: Date) => void,
  ) {}

  /** True when the refusal gets its own line; otherwise it is counted in its address's window. */
  admit(clientIp: string, code: string, stateDir: string | null, now: Date): boolean {
    if (!COUNTED_CODES.has(code)) return true;
    let w = this.windows.get(clientIp);
    if (w && now.getTime() - w.start >= this.windowMs) {
      this.writeWindow(clientIp, w, now);
      this.windows.delete(clientIp);
      w = undefined;
    }
    if (!w) {
      if (this.windows.size >= MAX_COUNTED_ADDRESSES) this.sweep(now, true);
      w = { start: now.getTime(), lines: 0, counted: 0, codes: {}, from: '', to: '', stateDir };
      this.windows.set(clientIp, w);
    }
    if (w.lines < REFUSAL_LINES_PER_WINDOW) {
      w.lines++;
      return true;
    }
    if (w.counted === 0) w.from = now.toISOString();
    w.to = now.toISOString();
    w.counted++;
    w.codes[code] = (w.codes[code] ?? 0) + 1;
    w.stateDir = stateDir;
    // Windows that end while their address is quiet are written out by this timer (unref: it never keeps the process up).
    this.timer ??= setInterval(() => this.sweep(new Date(), false), this.windowMs).unref();
    return false;
  }

  /**
   * Writes the counts of ended windows and forgets them; with `makeRoom` also the oldest open one when
   * the map is full, with `all` every count (shutdown). Windows sit in the map oldest first, so the
   * scan stops at the first one still open.
   */
  sweep(now: Date, makeRoom: boolean, all = false): void {
    for (const [ip, w] of this.windows) {
      const ended = now.getTime() - w.start >= this.windowMs;
      if (!ended && !all) break;
      this.writeWindow(ip, w, now);
      if (ended) this.windows.delete(ip);
      else Object.assign(w, { counted: 0, codes: {} });
    }
    if (makeRoom && this.windows.size >= MAX_COUNTED_ADDRESSES) {
      const [ip, w] = this.windows.entries().next().value as [string, RefusalWindow];
      this.writeWindow(ip, w, now);
      this.windows.delete(ip);
    }
    if ((all || this.windows.size === 0) && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private writeWindow(clientIp: string, w: RefusalWindow, now: Date): void {
    if (w.counted === 0) return;
    const entry: RefusalCountEntry = { time: now.toISOString(), event: 'refusals_counted', client_ip: clientIp, count: w.counted, codes: w.codes, from: w.from, to: w.to };
    this.writeCount(entry, w.stateDir, now);
  }
}
