// The edit engine on large files runs in a worker (src/edit/off-thread.ts). Through HTTP, each answer must be
// the one the engine gives on the calling thread for the same text: the same new file, and for a refusal the
// same code, message and details (NO_MATCH with its closest region, MULTIPLE_MATCHES with every line).
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError } from '../../src/envelope.js';
import { applyEdits, type EditRequest } from '../../src/edit/engine.js';
import { OFF_THREAD_CHARS } from '../../src/edit/off-thread.js';
import { PatchError } from '../../src/edit/patch-error.js';
import { planPatch } from '../../src/edit/patch-plan.js';
import { parsePatch } from '../../src/edit/patch-v4a.js';
import { workerJobs } from '../../src/workers/bounded-pool.js';
import { makeApp, type TestApp } from '../helpers.js';

const FILLER = 'filler line of the large file\n';
/** 300 KiB of filler with `middle` after line 10,000: past OFF_THREAD_CHARS. */
const large = (middle: string, tail = '') => `${FILLER.repeat(10_000)}${middle}${FILLER.repeat(10_000)}${tail}`;

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(async () => {
  await t.close();
});

/** The engine's own error on the calling thread, as the envelope carries it. */
function inThread(fn: () => unknown): { code: string; message: string; details?: Record<string, unknown> } {
  try {
    fn();
  } catch (err) {
    const e = err instanceof PatchError ? err.toToolError() : err;
    if (e instanceof ToolError) return { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
    throw err;
  }
  throw new Error('the engine did not refuse');
}

const editJobs = () => workerJobs.get('edit') ?? 0;

describe('edit engine in a worker on large files', () => {
  it('is used from OFF_THREAD_CHARS on, never for a small file', async () => {
    expect(large('').length).toBeGreaterThan(OFF_THREAD_CHARS);
    await fs.writeFile(t.file('small.txt'), 'alpha\n  beta\n');
    const before = editJobs();
    const small = await t.call('edit_file', { path: 'small.txt', old_text: '    beta\n', new_text: '    gamma\n' });
    expect(small.body.error).toBeUndefined();
    expect(editJobs()).toBe(before);
    const text = large('  target()\n');
    await fs.writeFile(t.file('big.txt'), text);
    const edits: EditRequest[] = [{ old_text: '    target()\n', new_text: '    done()\n' }];
    const r = await t.call('edit_file', { path: 'big.txt', edits });
    expect(r.body.error, JSON.stringify(r.body.error)).toBeUndefined();
    expect(editJobs()).toBe(before + 1);
    const expected = applyEdits(text, edits);
    expect(await fs.readFile(t.file('big.txt'), 'utf8')).toBe(expected.text);
    expect(r.body.data).toMatchObject({ edits: expected.edits, snippet: expected.snippet });
  });

  it('MULTIPLE_MATCHES keeps its message and both line numbers', async () => {
    const text = large('  twice()\n', '  twice()\n');
    await fs.writeFile(t.file('twice.txt'), text);
    const edits = [{ old_text: '    twice()\n', new_text: 'x\n' }];
    const before = editJobs();
    const r = await t.call('edit_file', { path: 'twice.txt', edits });
    expect(editJobs()).toBe(before + 1);
    const want = inThread(() => applyEdits(text, edits));
    expect(want.details).toMatchObject({ lines: [10_001, 20_002] });
    expect(r.body.error).toEqual(want);
    expect(await fs.readFile(t.file('twice.txt'), 'utf8')).toBe(text);
  });

  it('NO_MATCH keeps its message and the closest region', async () => {
    const text = large('function target(alpha, beta) {\n  return alpha + beta;\n}\n');
    await fs.writeFile(t.file('nomatch.txt'), text);
    const edits = [{ old_text: 'function target(alpha, gamma) {\n  return alpha - gamma;\n}\n', new_text: 'x\n' }];
    const r = await t.call('edit_file', { path: 'nomatch.txt', edits });
    const want = inThread(() => applyEdits(text, edits));
    expect(want.code).toBe('NO_MATCH');
    expect(want.details).toMatchObject({ closest: expect.objectContaining({ start_line: 10_001 }) });
    expect(r.body.error).toEqual(want);
  });

  it("the text editor's str_replace gets the engine's answer from the worker", async () => {
    const text = large('  target()\n');
    await fs.writeFile(t.file('editor.txt'), text);
    const before = editJobs();
    const r = await t.call('str_replace_based_edit_tool', { command: 'str_replace', path: 'editor.txt', old_str: '    target()\n', new_str: '    done()\n' });
    expect(r.body.error, JSON.stringify(r.body.error)).toBeUndefined();
    expect(editJobs()).toBe(before + 1);
    expect(await fs.readFile(t.file('editor.txt'), 'utf8')).toBe(applyEdits(text, [{ old_text: '    target()\n', new_text: '    done()\n' }]).text);
  });

  it('apply_patch plans a large file in the worker: the same new file, and the same hunk errors', async () => {
    const text = large('  target()\n', '  twice()\n  twice()\n');
    await fs.writeFile(t.file('patched.txt'), text);
    const patch = (body: string[]) => ['*** Begin Patch', '*** Update File: patched.txt', '@@', ...body, '*** End Patch'].join('\n');
    const missing = patch(['-  not there at all()', '+x']);
    const before = editJobs();
    const refused = await t.call('apply_patch', { patch: missing });
    expect(editJobs()).toBe(before + 1);
    expect(refused.body.error).toEqual(inThread(() => planPatch(parsePatch(missing), () => text)));
    expect(refused.body.error?.code).toBe('NO_MATCH');
    const ok = patch(['-  target()', '+  done()']);
    const applied = await t.call('apply_patch', { patch: ok });
    expect(applied.body.error, JSON.stringify(applied.body.error)).toBeUndefined();
    expect(await fs.readFile(t.file('patched.txt'), 'utf8')).toBe(planPatch(parsePatch(ok), () => text)[0]?.newContent);
  });
});

describe('edit worker under the tool time limit', () => {
  let slow: TestApp;
  beforeAll(async () => {
    slow = await makeApp({ TOOLGATE_TOOL_TIMEOUT_MS: '50' });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it('answers TIMEOUT and changes nothing when the limit passes while the worker matches', async () => {
    const line = 'const value = compute(alpha, beta);\n';
    await fs.writeFile(slow.file('same.js'), line.repeat(150_000));
    const r = await slow.call('edit_file', { path: 'same.js', old_text: `    ${line}`.repeat(2000), new_text: 'gone\n' });
    expect(r.body.error?.code).toBe('TIMEOUT');
    expect(await fs.readFile(slow.file('same.js'), 'utf8')).toBe(line.repeat(150_000));
  });
});
