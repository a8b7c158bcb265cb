// The README's quick start, run as a newcomer runs it: its shell block, with curl, against a listening server
// on a fresh workspace, twice in a row. Every step answers success both times and teaches the version flow.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, makeApp, type TestApp } from '../helpers.js';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await makeApp();
  base = await listenOn(t.app);
});
afterAll(() => t.close());

/** The shell block that follows the two commands of "## Quick start". */
async function quickStartSteps(): Promise<string> {
  const readme = await fs.readFile(README, 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  const steps = blocks[1];
  if (steps === undefined || !steps.includes('localhost:8080')) throw new Error('README: no quick-start steps after the two commands');
  return steps;
}

async function runSteps(script: string): Promise<{ status: string; text: string; data: Record<string, unknown> | null }[]> {
  const host = new URL(base).host;
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script.replaceAll('localhost:8080', host)]);
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { status: string; text: string; data: Record<string, unknown> | null });
}

describe("README's quick start", () => {
  it('runs, and runs again, with every step answering success', async () => {
    const script = await quickStartSteps();
    const first = await runSteps(script);
    expect(first.map((e) => e.status)).toEqual(['success', 'success', 'success']);
    expect(first[0]?.text).toMatch(/^Created 'notes\/hello\.md'/);
    expect(first[1]?.text).toMatch(/^Updated 'notes\/hello\.md'/);
    expect(await fs.readFile(t.file('notes/hello.md'), 'utf8')).toBe('# Hello\n');

    const again = await runSteps(script);
    expect(again.map((e) => e.status)).toEqual(['success', 'success', 'success']);
    expect(again[0]?.text).toMatch(/already holds this content/);
    expect(again[0]?.data?.applied).toBe(false);
    expect(again[1]?.text).toMatch(/^Updated 'notes\/hello\.md'/);
    expect(await fs.readFile(t.file('notes/hello.md'), 'utf8')).toBe('# Hello\n');
  });

  it('a write of the same bytes needs no version, a stale version is still CONFLICT, other bytes still need one', async () => {
    await fs.writeFile(t.file('same.txt'), 'one\n');
    const same = await t.call('write_file', { path: 'same.txt', content: 'one\n' });
    expect(same.status).toBe(200);
    expect(same.body.data).toMatchObject({ applied: false, backup_id: null });
    const stale = await t.call('write_file', { path: 'same.txt', content: 'one\n', expected_sha256: '0'.repeat(64) });
    expect(stale.body.error?.code).toBe('CONFLICT');
    const other = await t.call('write_file', { path: 'same.txt', content: 'two\n' });
    expect(other.body.error?.code).toBe('VERSION_REQUIRED');
    expect(await fs.readFile(t.file('same.txt'), 'utf8')).toBe('one\n');
  });
});
