// One day's audit file of one state directory (`<state>/audit/<instance>-<YYYY-MM-DD>.jsonl`): lines chained
// (audit-chain.ts) in the order they are recorded, appended in groups, whole or not at all; entries the disk
// could not take are counted and reported by a gap line once writing resumes (docs/operations.md).
import fsNow from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { SMALL_IO_BYTES, syncInFlight } from '../workspace/sync-first-io.js';
import { chainJson, hashOfLine } from './audit-chain.js';

/** An entry waiting for its file: its JSON (without `prev`) and its time, which a gap record reports. */
export interface PendingEntry {
  json: string;
  time: string;
}

/**
 * Entries a state directory's audit files could not take (disk full, I/O error). Kept per state directory,
 * not per file, so entries lost before midnight are still reported by the next day's file.
 */
export class AuditGap {
  lost = 0;
  private from = '';
  private to = '';
  private reason = '';

  count(entries: readonly PendingEntry[], err: unknown): void {
    if (entries.length === 0) return;
    if (this.lost === 0) this.from = (entries[0] as PendingEntry).time;
    this.to = (entries.at(-1) as PendingEntry).time;
    this.lost += entries.length;
    this.reason = (err as NodeJS.ErrnoException).code ?? 'error';
  }

  /** The gap line's entry; `from`/`to` are the times of the first and last lost entries. */
  entryJson(now: Date): string {
    return JSON.stringify({ time: now.toISOString(), event: 'audit_gap', lost: this.lost, from: this.from, to: this.to, error: this.reason });
  }

  clear(): void {
    this.lost = 0;
  }
}

/**
 * One audit file of this process. Lines are chained in the order they are recorded and written in
 * groups: while one append is in flight, the lines that arrive meanwhile wait and go out together in
 * the next one (one write per group instead of an open/write/close per call under load).
 */
export class AuditFile {
  private prev: string | null | undefined;
  private needsNewline = false;
  private pending: PendingEntry[] = [];
  private draining: Promise<void> | null = null;
  /** Where the file must be cut back to before the next write, when cutting a failed write back failed too. */
  private cutBackTo: number | null = null;
  /** The descriptor appendWholeNow writes on, kept between groups; null until the first or after a failure. */
  private fd: number | null = null;

  constructor(
    readonly file: string,
    private readonly gap: AuditGap,
    private readonly onError: (err: unknown) => void,
  ) {}

  append(entry: PendingEntry): void {
    this.pending.push(entry);
    // After the answers of this turn of the event loop are out, in one group with every line they recorded.
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  /** Resolves when every line appended so far is written (or has failed and been counted as lost). */
  idle(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const group = this.pending;
        this.pending = [];
        try {
          await this.write(group);
        } catch (err) {
          this.gap.count(group, err);
          // Resume the chain from what the file really holds next time.
          this.prev = undefined;
          this.onError(err);
        }
      }
    } finally {
      this.draining = null;
    }
  }

  private async write(group: PendingEntry[]): Promise<void> {
    if (this.prev === undefined) await this.resume();
    const jsons = group.map((e) => e.json);
    const gapped = this.gap.lost > 0;
    if (gapped) jsons.unshift(this.gap.entryJson(new Date()));
    let text = this.needsNewline ? '\n' : '';
    let prev = this.prev ?? null;
    for (const json of jsons) {
      const { line, hash } = chainJson(json, prev);
      text += `${line}\n`;
      prev = hash;
    }
    await this.appendWhole(Buffer.from(text, 'utf8'));
    this.needsNewline = false;
    this.prev = prev;
    if (gapped) this.gap.clear();
  }

  /**
   * Appends all of `bytes` or nothing: a write cut short (a full disk takes what fits, then fails) is
   * truncated back to the file's old end, so the file never ends in a torn line that breaks verify.
   */
  private async appendWhole(bytes: Buffer): Promise<void> {
    // A small group while no fsync runs: four quick calls here instead of four round trips through the thread
    // pool (the audit cost a small read a tenth of its time); during an fsync they could wait for its commit.
    if (bytes.length <= SMALL_IO_BYTES && !syncInFlight()) return this.appendWholeNow(bytes);
    const fh = await fs.open(this.file, 'a', 0o600);
    try {
      if (this.cutBackTo !== null) {
        await fh.truncate(this.cutBackTo);
        this.cutBackTo = null;
      }
      const { size } = await fh.stat();
      try {
        for (let done = 0; done < bytes.length; ) {
          const { bytesWritten } = await fh.write(bytes, done, bytes.length - done);
          if (bytesWritten === 0) throw Object.assign(new Error('audit write made no progress'), { code: 'ENOSPC' });
          done += bytesWritten;
        }
      } catch (err) {
        // Shrinking needs no space, so this normally succeeds; if not, the next write retries it first.
        await fh.truncate(size).catch(() => (this.cutBackTo = size));
        throw err;
      }
    } finally {
      await fh.close();
    }
  }

  /** appendWhole, synchronously, on the descriptor kept open between groups (see openNow). */
  private appendWholeNow(bytes: Buffer): void {
    const { fd, size } = this.openNow();
    try {
      for (let done = 0; done < bytes.length; ) {
        const written = fsNow.writeSync(fd, bytes, done, bytes.length - done);
        if (written === 0) throw Object.assign(new Error('audit write made no progress'), { code: 'ENOSPC' });
        done += written;
      }
    } catch (err) {
      try {
        fsNow.ftruncateSync(fd, size);
      } catch {
        this.cutBackTo = size;
      }
      // Opened anew next time, as a failed write did before the descriptor was kept.
      this.closeNow();
      throw err;
    }
  }

  /**
   * The file's descriptor and current size, opened once and kept: an open and a close per group were a third
   * of a small read's system calls. A file removed from under the service (no links left) is opened anew.
   */
  private openNow(): { fd: number; size: number } {
    if (this.fd !== null) {
      const st = fsNow.fstatSync(this.fd);
      if (st.nlink > 0) return { fd: this.fd, size: this.cutBack(this.fd, st.size) };
      this.closeNow();
    }
    const fd = fsNow.openSync(this.file, 'a', 0o600);
    try {
      this.fd = fd;
      return { fd, size: this.cutBack(fd, fsNow.fstatSync(fd).size) };
    } catch (err) {
      this.closeNow();
      throw err;
    }
  }

  /** Cuts the file back where an earlier failed write could not; the size to write at. */
  private cutBack(fd: number, size: number): number {
    if (this.cutBackTo === null) return size;
    fsNow.ftruncateSync(fd, this.cutBackTo);
    const to = this.cutBackTo;
    this.cutBackTo = null;
    return to;
  }

  /** Closes the kept descriptor (a failed write, a forgotten day, shutdown). */
  closeNow(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      fsNow.closeSync(fd);
    } catch {
      // Already gone: nothing is left to release.
    }
  }

  /** After a restart: continue the chain from the last line already in today's file. */
  private async resume(): Promise<void> {
    await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const last = await readLastLine(this.file);
    this.prev = last === null ? null : hashOfLine(last.line);
    // A line cut short by a crash stays a line of its own (verify reports it) instead of merging with ours.
    this.needsNewline = last !== null && !last.terminated;
  }
}

/** The last non-empty line of a file, read from its end (audit files can be large). */
export async function readLastLine(file: string): Promise<{ line: string; terminated: boolean } | null> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const { size } = await fh.stat();
    if (size === 0) return null;
    const chunk = 64 * 1024;
    let end = size;
    let tail = Buffer.alloc(0);
    for (;;) {
      const start = Math.max(0, end - chunk);
      const buf = Buffer.alloc(end - start);
      await fh.read(buf, 0, buf.length, start);
      tail = Buffer.concat([buf, tail]);
      end = start;
      const text = tail.toString('utf8');
      const terminated = text.endsWith('\n');
      const body = text.replace(/\n+$/, '');
      const nl = body.lastIndexOf('\n');
      if (nl >= 0 || start === 0) return body === '' ? null : { line: body.slice(nl + 1), terminated };
    }
  } finally {
    await fh.close();
  }
}
