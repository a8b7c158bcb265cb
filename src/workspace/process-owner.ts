// Who holds a file lock or a temp directory: host, pid namespace, pid and a token of this process. A process
// on the same host can then tell that the holder is gone (kill -9) at once instead of waiting for an age rule.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, readlinkSync, writeSync } from 'node:fs';
import os from 'node:os';

/** The host plus its pid namespace: containers that share a host name may still not see each other's pids. */
const HOST = `${os.hostname().replace(/[^A-Za-z0-9._-]/g, '_')}.${pidNamespace()}`;
/** Tells this process from an earlier one with the same pid (pid 1 in every container start). */
const TOKEN = randomBytes(6).toString('hex');
/** This process's owner record. */
export const OWNER_RECORD = `${HOST}:${process.pid}:${TOKEN}`;

function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
}

/** When this process started, in ms since the epoch. */
const STARTED_MS = performance.timeOrigin;

/**
 * Whether something whose time is `mtimeMs` was made before this process started, so not by this process: a
 * lock without an owner record that old was left by a maker killed before its record (which a live maker
 * writes at once), not one being made now (src/workspace/locks.ts).
 */
export function madeBeforeThisProcess(mtimeMs: number): boolean {
  return mtimeMs < STARTED_MS;
}

/** 'alive' or 'dead' for a holder on this host; 'unknown' for one elsewhere (only an age rule can judge it) or a malformed record. */
export type OwnerState = 'alive' | 'dead' | 'unknown';

export function ownerState(record: string): OwnerState {
  const m = /^(.+):(\d+):([0-9a-f]+)$/.exec(record);
  if (!m || m[1] !== HOST) return 'unknown';
  const pid = Number(m[2]);
  if (pid === process.pid) return m[3] === TOKEN ? 'alive' : 'dead';
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (err) {
    // EPERM: the pid exists, owned by another user.
    return (err as NodeJS.ErrnoException).code === 'ESRCH' ? 'dead' : 'alive';
  }
}

/**
 * Records this process as the owner in the new file `file` (a regular file: the service never makes symlinks).
 * A reader that catches it half-written sees a malformed record, judged 'unknown': it waits, it never takes over.
 */
export function writeOwnerRecord(file: string): void {
  const fd = openSync(file, 'wx', 0o600);
  try {
    writeSync(fd, OWNER_RECORD);
  } finally {
    closeSync(fd);
  }
}

/**
 * The state of the owner recorded in `file`: null when there is no record; 'dead' for an empty one (its process
 * was killed between creating the file and its one write of a few bytes).
 */
export function ownerStateOf(file: string): OwnerState | null {
  const record = readOwnerRecord(file);
  return record === null ? null : record === '' ? 'dead' : ownerState(record);
}

/** The record in `file`, or null when there is none. */
export function readOwnerRecord(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
