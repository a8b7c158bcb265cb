// Runs the scenario corpus (test/fixtures/apply-patch) through the pure engine over an in-memory tree: the tree
// after the call must equal expected/, and a refused patch must leave it as input/ was.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PatchError } from '../../src/edit/patch-error.js';
import { patchPathKey, planPatch, type PlannedFile } from '../../src/edit/patch-plan.js';
import { parsePatch, type PatchOp } from '../../src/edit/patch-v4a.js';

const ROOT = join(import.meta.dirname, '..', 'fixtures', 'apply-patch');

interface Expect {
  ok: boolean;
  code?: string;
  layer?: 'engine' | 'sandbox';
}

function readTree(dir: string, prefix = ''): Map<string, string> {
  const files = new Map<string, string>();
  if (!existsSync(dir)) return files;
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    const rel = prefix ? `${prefix}/${name}` : name;
    if (statSync(full).isDirectory()) for (const [k, v] of readTree(full, rel)) files.set(k, v);
    else files.set(rel, readFileSync(full, 'utf8'));
  }
  return files;
}

/** What the sandbox will refuse before the engine sees the patch: absolute paths and paths out of the root. */
class SandboxRefusal extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

function checkInside(path: string): void {
  if (path.startsWith('/')) throw new SandboxRefusal('INVALID_PARAM');
  const n = posix.normalize(path);
  if (n === '..' || n.startsWith('../')) throw new SandboxRefusal('ACCESS_DENIED');
}

/** The caller's part: check paths, plan, then commit every planned file (or none). */
function runPatch(tree: Map<string, string>, text: string): void {
  const ops: PatchOp[] = parsePatch(text);
  for (const op of ops) {
    checkInside(op.path);
    if (op.type === 'update' && op.moveTo !== undefined) checkInside(op.moveTo);
  }
  const plan: PlannedFile[] = planPatch(ops, (p) => tree.get(patchPathKey(p)) ?? null);
  for (const f of plan) {
    if (f.kind === 'delete' || f.moveTo !== undefined) tree.delete(patchPathKey(f.path));
    if (f.newContent !== null) tree.set(patchPathKey(f.moveTo ?? f.path), f.newContent);
  }
}

const scenarios = readdirSync(ROOT).filter((n) => statSync(join(ROOT, n)).isDirectory()).sort();

describe('apply_patch scenarios', () => {
  it('has the corpus', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(15);
  });

  it.each(scenarios)('%s', (name) => {
    const dir = join(ROOT, name);
    const want = JSON.parse(readFileSync(join(dir, 'expect.json'), 'utf8')) as Expect;
    const tree = readTree(join(dir, 'input'));
    const expected = readTree(join(dir, 'expected'));
    let code: string | null = null;
    try {
      runPatch(tree, readFileSync(join(dir, 'patch.txt'), 'utf8'));
    } catch (e) {
      if (e instanceof PatchError || e instanceof SandboxRefusal) code = e.code;
      else throw e;
    }
    if (want.ok) expect(code).toBeNull();
    else expect(code).toBe(want.code);
    expect(Object.fromEntries([...tree].sort())).toEqual(Object.fromEntries([...expected].sort()));
    if (!want.ok) expect(expected).toEqual(readTree(join(dir, 'input')));
  });
});
