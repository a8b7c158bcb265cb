// Diffing is bounded (docs/api.md): a huge overwrite answers with a cut preview, status partial, and exact
// whole-change line counts. No time is asserted (STYLE: benchmarks measure, tests assert).
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIFF_MAX_BYTES, DIFF_MAX_LINES } from '../../src/edit/diff.js';
import { makeApp, type TestApp } from '../helpers.js';
import { expectEnvelope } from '../security/envelope-checks.js';

const MiB = 1024 * 1024;
const LINE_BYTES = 64;
const LINES = (5 * MiB) / LINE_BYTES; // 81920 lines, exactly 5 MiB

/** LINES lines of exactly LINE_BYTES bytes, each starting with `tag` so no line is shared between versions. */
function fiveMiB(tag: string): string {
  const parts: string[] = [];
  for (let i = 1; i <= LINES; i++) {
    const head = `${tag} line ${String(i).padStart(8, '0')} `;
    parts.push(head + tag.repeat(LINE_BYTES - 1 - head.length) + '\n');
  }
  return parts.join('');
}

interface WriteData {
  applied: boolean;
  diff_preview: string;
  diff_truncated: boolean;
  lines_added: number;
  lines_removed: number;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('diff bound: a 5 MiB overwrite', () => {
  let t: TestApp;
  let oldText: string;
  let newText: string;
  beforeAll(async () => {
    t = await makeApp();
    oldText = fiveMiB('o');
    newText = fiveMiB('n');
    expect(Buffer.byteLength(oldText)).toBe(5 * MiB);
  });
  afterAll(async () => t?.close());

  function expectBoundedPreview(data: WriteData): void {
    expect(data.diff_truncated).toBe(true);
    expect(data.diff_preview.split('\n').length).toBeLessThanOrEqual(DIFF_MAX_LINES);
    expect(Buffer.byteLength(data.diff_preview)).toBeLessThanOrEqual(DIFF_MAX_BYTES);
    expect(data.diff_preview.startsWith('--- ')).toBe(true);
    expect(data.diff_preview.endsWith('... (truncated)')).toBe(true);
  }

  it('with every line changed: diff_truncated, status partial, exact lines_added/lines_removed', async () => {
    await fs.writeFile(t.file('big.txt'), oldText);
    const res = await t.call('write_file', { path: 'big.txt', content: newText, expected_sha256: sha256(oldText), backup: false });
    expectEnvelope(res.body, res.status);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('partial');
    const data = res.body.data as WriteData;
    expect(data.applied).toBe(true);
    expectBoundedPreview(data);
    expect(data.lines_added).toBe(LINES);
    expect(data.lines_removed).toBe(LINES);
    expect(res.body.stats.lines_added).toBe(LINES);
    expect(res.body.stats.lines_removed).toBe(LINES);
    expect(res.body.text).toContain(`+${LINES}/-${LINES}`);
    expect(await fs.readFile(t.file('big.txt'), 'utf8')).toBe(newText);
  });

  it('a dry run of the same change reports the same counts and writes nothing', async () => {
    await fs.writeFile(t.file('dry.txt'), oldText);
    const res = await t.call('write_file', { path: 'dry.txt', content: newText, expected_sha256: sha256(oldText), dry_run: true });
    expectEnvelope(res.body, res.status);
    expect(res.body.status).toBe('partial');
    const data = res.body.data as WriteData;
    expect(data.applied).toBe(false);
    expectBoundedPreview(data);
    expect(data.lines_added).toBe(LINES);
    expect(data.lines_removed).toBe(LINES);
    expect(sha256(await fs.readFile(t.file('dry.txt'), 'utf8'))).toBe(sha256(oldText));
  });

  it('one changed line in the middle of 5 MiB gives a small, whole preview', async () => {
    await fs.writeFile(t.file('one.txt'), oldText);
    const lines = oldText.split('\n');
    const mid = Math.floor(LINES / 2);
    lines[mid] = 'changed in the middle';
    const changed = lines.join('\n');
    const res = await t.call('write_file', { path: 'one.txt', content: changed, expected_sha256: sha256(oldText), backup: false });
    expectEnvelope(res.body, res.status);
    expect(res.body.status).toBe('success');
    const data = res.body.data as WriteData;
    expect(data.diff_truncated).toBe(false);
    expect(data.lines_added).toBe(1);
    expect(data.lines_removed).toBe(1);
    expect(data.diff_preview).toContain(`@@ -${mid - 2},7 +${mid - 2},7 @@`);
    expect(data.diff_preview).toContain('+changed in the middle');
  });

  it('creating a 5 MiB file counts every line as added', async () => {
    const res = await t.call('write_file', { path: 'fresh.txt', content: newText });
    expectEnvelope(res.body, res.status);
    expect(res.body.status).toBe('partial');
    const data = res.body.data as WriteData;
    expectBoundedPreview(data);
    expect(data.lines_added).toBe(LINES);
    expect(data.lines_removed).toBe(0);
  });
});
