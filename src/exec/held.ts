// A command's changes kept for a person to decide (docs/run-command.md, "Changes that ask"): the run's directory,
// its layer and plan, moved out of the instance's runs into `<state>/exec-held/<approval id>` until the approved
// repeat lands them (without running the command again) or a refusal or expiry discards them.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { RunOutcome } from './sandbox.js';
import { makeRunDirName, removeRunDir, runDirAt, type LandResult, type LayerChange, type RunDir, type Step } from './overlay.js';
import type { Workspace } from '../workspace/workspace.js';

const HELD = 'exec-held';
const PLAN = 'held.json';
/** A run held before its request was recorded carries this prefix until the request's id names it. */
const UNBOUND = 't-';
/** An unbound run older than this was left by a call that never recorded its request (a crash): swept. */
const UNBOUND_MAX_AGE_MS = 10 * 60_000;
/** Runs a project holds at once (each keeps a command's layer on the volume until a person decides). */
export const MAX_HELD_RUNS = 32;

/** Thrown by holdRun when the project holds MAX_HELD_RUNS already: the run is not kept. */
export class HeldRunsFull extends Error {
  constructor() {
    super(`${MAX_HELD_RUNS} runs are held already`);
  }
}

/** A held run's name: an approval's id (docs/approvals.md), or a token not yet bound to one. */
const APPROVAL_ID = /^apr_[A-Za-z0-9_-]{22}$/;
const NAME = /^(apr_[A-Za-z0-9_-]{22}|t-[0-9a-f]{18})$/;

export interface HeldRun {
  run: RunDir;
  steps: Step[];
  result: LandResult;
  outcome: RunOutcome;
}

/** The plan as JSON: names as base64 (any bytes), each step's change by its index in the result. */
interface HeldFile {
  v: 1;
  outcome: RunOutcome;
  changes: LayerChange[];
  notLanded: LandResult['notLanded'];
  setIdCleared: string[];
  steps: Array<Record<string, unknown> & { change: number; name?: string }>;
}

function heldBase(ws: Workspace | string): string {
  return path.join(typeof ws === 'string' ? ws : ws.stateDir, HELD);
}

/**
 * Keeps a finished run for a person: its plan written beside the layer, the directory moved out of this
 * instance's runs (a sweep of crashed processes' runs never takes it). Returns the token bindHeld renames.
 */
export async function holdRun(ws: Workspace, run: RunDir, held: Omit<HeldRun, 'run'>): Promise<string> {
  const changes = [...held.result.changes];
  const index = new Map(changes.map((c, i) => [c, i]));
  const steps = held.steps.map((s) => {
    let i = index.get(s.change);
    if (i === undefined) {
      i = changes.push(s.change) - 1;
      index.set(s.change, i);
    }
    const { change: _change, ...rest } = s;
    return 'name' in rest ? { ...rest, change: i, name: rest.name.toString('base64') } : { ...rest, change: i };
  });
  const file: HeldFile = { v: 1, outcome: held.outcome, changes, notLanded: held.result.notLanded, setIdCleared: held.result.setIdCleared, steps };
  // Only the result's own changes are listed; the rest are kept for the steps that name them.
  await fs.writeFile(path.join(run.dir, PLAN), JSON.stringify({ ...file, listed: held.result.changes.length }), { mode: 0o600 });
  await fs.mkdir(heldBase(ws), { recursive: true, mode: 0o700 });
  if ((await fs.readdir(heldBase(ws))).filter((n) => NAME.test(n)).length >= MAX_HELD_RUNS) throw new HeldRunsFull();
  const token = `${UNBOUND}${randomBytes(9).toString('hex')}`;
  await fs.rename(run.dir, path.join(heldBase(ws), token));
  return token;
}

/** Names a held run by the request that decides it. */
export async function bindHeld(ws: Workspace, token: string, id: string): Promise<void> {
  if (!APPROVAL_ID.test(id) || !NAME.test(token)) throw new Error(`not a held run: ${token} -> ${id}`);
  await fs.rename(path.join(heldBase(ws), token), path.join(heldBase(ws), id));
}

/**
 * Takes the run the approved request `id` holds back into this instance's runs (so that a crash while it lands
 * leaves it to the sweep of runs, never to a second landing); null when there is none.
 */
export async function takeHeld(ws: Workspace, id: string): Promise<HeldRun | null> {
  if (!APPROVAL_ID.test(id)) return null;
  const to = path.join(ws.stateDir, 'exec', ws.instanceId, makeRunDirName());
  await fs.mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
  try {
    await fs.rename(path.join(heldBase(ws), id), to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const run = runDirAt(to);
  try {
    const file = JSON.parse(await fs.readFile(path.join(to, PLAN), 'utf8')) as HeldFile & { listed: number };
    const steps = file.steps.map((s) => ({ ...s, change: file.changes[s.change], ...(typeof s.name === 'string' && { name: Buffer.from(s.name, 'base64') }) }) as unknown as Step);
    // The plan lies on the volume: a path in it that could leave the project or the layer is not ours.
    if (!steps.every(plainStep)) throw new HeldRunAltered(id);
    return { run, steps, result: { changes: file.changes.slice(0, file.listed), notLanded: file.notLanded, setIdCleared: file.setIdCleared }, outcome: file.outcome };
  } catch (err) {
    await removeRunDir(to);
    throw err;
  }
}

/** A held run's plan that names a path outside the project or its layer: altered on the volume. */
export class HeldRunAltered extends Error {
  constructor(readonly id: string) {
    super(`the plan of held run ${id} names a path outside the project`);
  }
}

/** Discards what request `id` (or an unbound token) holds: refused, expired, or its request never recorded. */
export async function dropHeld(stateDir: string, id: string): Promise<void> {
  if (!NAME.test(id)) return;
  await removeRunDir(path.join(heldBase(stateDir), id));
}

/**
 * Discards held runs nobody can land any more: those whose request `keep` does not know as pending or approved,
 * and unbound ones older than UNBOUND_MAX_AGE_MS. Returns the ids dropped.
 */
export async function sweepHeld(stateDir: string, keep: (id: string) => Promise<boolean>, now = Date.now()): Promise<string[]> {
  const names = await fs.readdir(heldBase(stateDir)).catch(() => [] as string[]);
  const dropped: string[] = [];
  for (const name of names) {
    if (!NAME.test(name)) continue;
    if (name.startsWith(UNBOUND)) {
      const st = await fs.lstat(path.join(heldBase(stateDir), name)).catch(() => null);
      if (st && now - st.mtimeMs < UNBOUND_MAX_AGE_MS) continue;
    } else if (await keep(name)) continue;
    await dropHeld(stateDir, name);
    dropped.push(name);
  }
  return dropped;
}

/** Relative paths of plain segments only (no '', '.', '..'), names without a slash or NUL. */
function plainStep(step: Step): boolean {
  const plain = (rel: unknown, root: boolean) => typeof rel === 'string' && ((root && rel === '') || rel.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..' && !seg.includes('\0')));
  if (typeof step.change !== 'object' || step.change === null || !plain(step.rel, step.op === 'chmod')) return false;
  if (step.op === 'chmod') return true;
  if (!Buffer.isBuffer(step.name) || step.name.includes(0x2f) || step.name.includes(0) || ['', '.', '..'].includes(step.name.toString('latin1'))) return false;
  return plain(step.dirRel, true) && (step.op !== 'move' || plain(step.upperDirRel, true));
}
