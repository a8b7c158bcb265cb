// A rewind's journal (docs/api.md, "Turns, checkpoints and rewind"): the content a rewind puts back is staged in
// <state>/rewinds/<id>/ first, then the journal — every step, in order — is written and renamed into place.
// That rename is the rewind's commit point: before it nothing in the project has changed, after it the steps
// are made one by one, each marked done in the journal, and a start that finds a journal whose process died
// makes the remaining steps. Each step is one rename, mkdir, unlink or rmdir, and safe to make again after a
// crash half way through it, so every file ends as it was before the rewind or as the rewind leaves it.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fsyncDirectory } from './atomic.js';
import { hasRecord, writeRecord, type CheckpointRecord } from './checkpoints.js';
import { OWNER_RECORD, ownerState, writeOwnerRecord } from './process-owner.js';
import { createMissingParents, entryOf, HandleScope, resolveInWorkspace, TEMP_MARKER } from './sandbox.js';
import type { Workspace } from './workspace.js';

/** One step of a rewind; paths are relative to the project root, as they are after the steps before it. */
export type RewindStep =
  | { op: 'rename_dir'; from: string; to: string }
  | { op: 'move_file'; from: string; to: string }
  | { op: 'mkdir'; path: string }
  | { op: 'write'; path: string; staged: string; mode: number }
  | { op: 'remove'; path: string }
  | { op: 'rmdir'; path: string };

export interface RewindJournal {
  id: string;
  /** The process making the rewind: another process finishes it only once this one is gone. */
  owner: string;
  steps: RewindStep[];
  /** The rewind's own checkpoint record, written when the steps are made. */
  record: CheckpointRecord;
}

function rewindsDir(ws: Workspace): string {
  return path.join(ws.stateDir, 'rewinds');
}
function stagingDir(ws: Workspace, id: string): string {
  return path.join(rewindsDir(ws), id);
}
function journalFile(ws: Workspace, id: string): string {
  return path.join(rewindsDir(ws), `${id}.journal`);
}
const OWNER = '.owner';

/** The directory the rewind's content is staged in, with its owner (a start removes it once the owner is gone). */
export function makeStaging(ws: Workspace, id: string): string {
  const dir = stagingDir(ws, id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeOwnerRecord(path.join(dir, OWNER));
  return dir;
}

/** Stages one file's content under `name`, made durable before the journal names it. */
export async function stageContent(ws: Workspace, id: string, name: string, content: Buffer, mode: number): Promise<void> {
  const file = path.join(stagingDir(ws, id), name);
  await fs.writeFile(file, content, { mode, flag: 'wx' });
  await fs.chmod(file, mode);
  const fd = openSync(file, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes the journal whole and renames it into place: the commit point of the rewind. */
export async function commitJournal(ws: Workspace, journal: RewindJournal): Promise<void> {
  const file = journalFile(ws, journal.id);
  const temp = `${file}.${randomBytes(3).toString('hex')}.part`;
  await fs.writeFile(temp, `${JSON.stringify(journal)}\n`, { mode: 0o600 });
  const fd = openSync(temp, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  await fs.rename(temp, file);
  await fsyncDirectory(rewindsDir(ws));
}

/** Makes the steps from `from` on, marking each done in the journal; then the record, and the journal goes. */
export async function completeJournal(ws: Workspace, journal: RewindJournal, from = 0): Promise<void> {
  const file = journalFile(ws, journal.id);
  const staging = stagingDir(ws, journal.id);
  const touched = new Set<string>();
  const done = openSync(file, constants.O_WRONLY | constants.O_APPEND);
  try {
    for (let i = from; i < journal.steps.length; i++) {
      const step = journal.steps[i] as RewindStep;
      const scope = new HandleScope();
      try {
        await makeStep(ws, staging, step, touched, scope);
      } finally {
        scope.close();
      }
      // A line per step, appended; a process killed before it makes the step again, which finds it made.
      writeSync(done, `${i}\n`);
    }
  } finally {
    closeSync(done);
  }
  for (const dir of touched) await fsyncDirectory(dir).catch(() => undefined);
  if (!(await hasRecord(ws, journal.record.id))) await writeRecord(ws, journal.record);
  await fs.rm(file, { force: true });
  await fs.rm(staging, { recursive: true, force: true });
}

/** One step, made so that making it again (after a crash during it) finds it made and does nothing. */
async function makeStep(ws: Workspace, staging: string, step: RewindStep, touched: Set<string>, scope: HandleScope): Promise<void> {
  const resolve = (rel: string) => resolveInWorkspace(ws, rel, { noFollowLeaf: true }, scope);
  switch (step.op) {
    case 'rename_dir':
    case 'move_file': {
      const from = await resolve(step.from);
      const to = await resolve(step.to);
      if (!from.stat && to.stat) return;
      createMissingParents(to, scope);
      await fs.rename(from.at, to.at);
      touched.add(entryOf(from.dir, '.'));
      touched.add(entryOf(to.dir, '.'));
      return;
    }
    case 'mkdir': {
      const p = await resolve(step.path);
      if (p.stat?.isDirectory()) return;
      createMissingParents(p, scope);
      await fs.mkdir(p.at).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      touched.add(entryOf(p.dir, '.'));
      return;
    }
    case 'write': {
      const staged = path.join(staging, step.staged);
      const present = await fs.lstat(staged).catch(() => null);
      if (!present) return; // renamed into place before the crash
      const p = await resolve(step.path);
      createMissingParents(p, scope);
      try {
        await fs.rename(staged, p.at);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        // The state directory lies on another volume: a hidden copy beside the target, renamed over it.
        const beside = entryOf(p.dir, `.${TEMP_MARKER}${randomBytes(8).toString('hex')}`);
        await fs.copyFile(staged, beside);
        await fs.chmod(beside, step.mode);
        await fs.rename(beside, p.at);
        rmSync(staged, { force: true });
      }
      touched.add(entryOf(p.dir, '.'));
      return;
    }
    case 'remove': {
      const p = await resolve(step.path);
      if (!p.stat) return;
      if (p.stat.isDirectory()) throw Object.assign(new Error(`${step.path} is a directory`), { code: 'EISDIR' });
      await fs.unlink(p.at);
      touched.add(entryOf(p.dir, '.'));
      return;
    }
    case 'rmdir': {
      const p = await resolve(step.path);
      if (!p.stat) return;
      // A directory that holds what nobody recorded (a file made by hand) stays, with that file.
      await fs.rmdir(p.at).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST' && err.code !== 'ENOENT') throw err;
      });
      touched.add(entryOf(p.dir, '.'));
      return;
    }
  }
}

/** Drops a rewind refused before its commit point: its staged content (its backups stay, pruned as any). */
export function discardStaging(ws: Workspace, id: string): void {
  rmSync(stagingDir(ws, id), { recursive: true, force: true });
}

/**
 * At start (and when a project is first opened): every journal whose process is gone is completed, and staging
 * left without a journal (a rewind killed before its commit point, which changed nothing) is removed. Returns
 * the ids of the rewinds completed.
 */
export async function recoverRewinds(ws: Workspace): Promise<string[]> {
  const dir = rewindsDir(ws);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const done: string[] = [];
  for (const n of names) {
    if (n.endsWith('.part')) {
      await fs.rm(path.join(dir, n), { force: true });
      continue;
    }
    if (!n.endsWith('.journal')) continue;
    const text = await fs.readFile(path.join(dir, n), 'utf8').catch(() => null);
    if (text === null) continue;
    const lines = text.split('\n');
    let journal: RewindJournal;
    try {
      journal = JSON.parse(lines[0] as string) as RewindJournal;
    } catch {
      continue;
    }
    const st = await fs.stat(path.join(dir, n)).catch(() => null);
    if (!st || !ownerGone(journal.owner, st.mtimeMs)) continue;
    let next = 0;
    for (const line of lines.slice(1)) if (/^\d+$/.test(line)) next = Math.max(next, Number(line) + 1);
    await completeJournal(ws, journal, next);
    done.push(journal.id);
  }
  for (const n of names) {
    if (n.includes('.') || names.includes(`${n}.journal`)) continue;
    const st = await fs.stat(path.join(dir, n)).catch(() => null);
    const owner = await fs.readFile(path.join(dir, n, OWNER), 'utf8').catch(() => '');
    if (st && ownerGone(owner, st.mtimeMs)) await fs.rm(path.join(dir, n), { recursive: true, force: true });
  }
  return done;
}

/** A rewind on another host is judged by age only: one this old is not in flight (a rewind takes seconds). */
const OTHER_HOST_GRACE_MS = 10 * 60 * 1000;

function ownerGone(owner: string, mtimeMs: number): boolean {
  if (owner === OWNER_RECORD) return false;
  if (owner === '') return true; // killed between making its owner file and writing it
  const state = ownerState(owner);
  return state === 'dead' || (state === 'unknown' && Date.now() - mtimeMs > OTHER_HOST_GRACE_MS);
}
