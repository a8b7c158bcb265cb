// Approval records as files in `<stateDir>/approvals/` on the shared volume, for replicas without Redis.
//
// One request is up to three sealed files, each written to a temp file, fsynced and renamed into place, so a
// reader sees a whole record or none:
//   <id>.json      the request (pending)
//   <id>.decided   approved / rejected / expired, written by the one process that created <id>.decided.lock
//   <id>.final     used / expired after approval, written by the one that created <id>.final.lock
// The .lock files are created with O_EXCL, which is what makes each step happen once across processes
// (rename alone would let a second writer replace the first). A crash between a lock and its rename leaves
// the request in its earlier state until it expires: nothing runs without a whole, signed approval.
// A use whose call applied nothing is taken back by the process that made it (ApprovalStore.release): <id>.final
// goes, then its lock, so the request reads approved again and the next repeat takes the lock anew.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, openSync, watch, writeSync, type FSWatcher } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir, isApprovalId, type ApprovalBackend, type ApprovalRecord, type RecordSeal } from './approval-record.js';

const TEMP_PREFIX = '.tmp-';
const STALE_TEMP_MS = 10 * 60 * 1000;

type Stage = 'json' | 'decided' | 'final';

export class FileApprovalBackend implements ApprovalBackend {
  readonly kind = 'files' as const;
  readonly pollMs = 250;
  readonly #dir: string;
  readonly #signer: RecordSeal;
  readonly #listeners = new Set<(id: string) => void>();
  #watcher: FSWatcher | null = null;

  private constructor(dir: string, signer: RecordSeal) {
    this.#dir = dir;
    this.#signer = signer;
  }

  static async open(dir: string, signer: RecordSeal): Promise<FileApprovalBackend> {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    return new FileApprovalBackend(dir, signer);
  }

  #file(id: string, stage: Stage | 'decided.lock' | 'final.lock'): string {
    // Every caller passes a checked id; this is the last line before a path is built from it.
    if (!isApprovalId(id)) throw new Error('not an approval id');
    return path.join(this.#dir, `${id}.${stage}`);
  }

  async #writeSealed(target: string, record: ApprovalRecord, lock: string | null): Promise<boolean> {
    const temp = path.join(this.#dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, this.#signer.seal(record));
      fsyncSync(fd);
    } catch (err) {
      closeSync(fd);
      await fs.rm(temp, { force: true });
      throw err;
    }
    closeSync(fd);
    if (lock !== null) {
      try {
        closeSync(openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
      } catch (err) {
        await fs.rm(temp, { force: true });
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw err;
      }
    }
    await fs.rename(temp, target);
    await fsyncDir(this.#dir);
    return true;
  }

  async insert(record: ApprovalRecord): Promise<void> {
    await this.#writeSealed(this.#file(record.id, 'json'), record, null);
  }

  async #readText(id: string, stage: Stage): Promise<string | null> {
    try {
      return await fs.readFile(this.#file(id, stage), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async #readStage(id: string, stage: Stage): Promise<ApprovalRecord | null | 'tampered'> {
    const text = await this.#readText(id, stage);
    if (text === null) return null;
    const record = this.#signer.open(text, id);
    if (!record) return 'tampered';
    // A step file must hold a status that step can produce; a pending record copied over a step is altered.
    const allowed: Record<Stage, readonly string[]> = { json: ['pending'], decided: ['approved', 'rejected', 'expired'], final: ['used', 'expired'] };
    return allowed[stage].includes(record.status) ? record : 'tampered';
  }

  async read(id: string): Promise<ApprovalRecord | null | 'tampered'> {
    // Later steps first: each is renamed into place after the one before it and deleted before it, so a
    // step seen here implies the earlier ones unless a sweep deleted them meanwhile.
    const final = await this.#readStage(id, 'final');
    const decided = await this.#readStage(id, 'decided');
    const base = await this.#readStage(id, 'json');
    if (final === 'tampered' || decided === 'tampered' || base === 'tampered') return 'tampered';
    if (base === null) return null;
    if (final) {
      if (decided === null) return null; // swept meanwhile, or a step removed by hand: unusable either way
      if (decided.status !== 'approved') return 'tampered';
    }
    return final ?? decided ?? base;
  }

  async transition(current: ApprovalRecord, next: ApprovalRecord): Promise<boolean> {
    if (current.status === 'used' && next.status === 'approved') return this.#reopen(current, next);
    const stage = current.status === 'pending' ? 'decided' : current.status === 'approved' ? 'final' : null;
    if (stage === null) return false;
    return this.#writeSealed(this.#file(current.id, stage), next, this.#file(current.id, `${stage}.lock`));
  }

  /**
   * used -> approved: only when the use on disk is `used` and the approval under it is `approved` exactly. A repeat
   * between the two removals meets the lock and is told the approval was used; it never runs twice.
   */
  async #reopen(used: ApprovalRecord, approved: ApprovalRecord): Promise<boolean> {
    const [final, decided] = await Promise.all([this.#readText(used.id, 'final'), this.#readText(used.id, 'decided')]);
    if (final !== this.#signer.seal(used) || decided !== this.#signer.seal(approved)) return false;
    await fs.rm(this.#file(used.id, 'final'));
    await fs.rm(this.#file(used.id, 'final.lock'), { force: true });
    await fsyncDir(this.#dir);
    return true;
  }

  async remove(id: string): Promise<void> {
    // The request file last: while it exists, the others still read as one request.
    for (const stage of ['final', 'final.lock', 'decided', 'decided.lock', 'json'] as const) await fs.rm(this.#file(id, stage), { force: true });
  }

  async ids(): Promise<string[]> {
    const names = await fs.readdir(this.#dir);
    const now = Date.now();
    const ids: string[] = [];
    for (const name of names) {
      if (name.endsWith('.json') && isApprovalId(name.slice(0, -5))) ids.push(name.slice(0, -5));
      else if (name.startsWith(TEMP_PREFIX)) {
        // Temp files of a crashed writer; the age spares one still being written.
        const st = await fs.stat(path.join(this.#dir, name)).catch(() => null);
        if (st && now - st.mtimeMs > STALE_TEMP_MS) await fs.rm(path.join(this.#dir, name), { force: true });
      }
    }
    return ids;
  }

  watch(listener: (id: string) => void): () => void {
    this.#listeners.add(listener);
    if (!this.#watcher) {
      try {
        // One watcher per store for all waiters. Some shared volumes (NFS) never report; polling covers them.
        this.#watcher = watch(this.#dir, { persistent: false }, (_event, name) => {
          if (typeof name !== 'string') return;
          const id = name.split('.')[0]!;
          if (isApprovalId(id)) for (const l of this.#listeners) l(id);
        });
        this.#watcher.on('error', () => this.#stopWatching());
      } catch {
        this.#watcher = null;
      }
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#stopWatching();
    };
  }

  #stopWatching(): void {
    this.#watcher?.close();
    this.#watcher = null;
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    this.#stopWatching();
  }
}
