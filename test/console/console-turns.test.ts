/// <reference lib="dom" />
// The console's turns in a real browser (Debian's chromium, puppeteer-core; docs/api.md "Turns, checkpoints and
// rewind"): each agent turn with the files it changed and their diffs, newest first; "rewind to before this
// turn" shows its preview and changes nothing until the person confirms; cancel leaves everything as it is.
// A screenshot goes to /tmp/toolgate-console-turns.png for a person to look at.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, makeApp, type TestApp } from '../helpers.js';
import { launchChromium } from './chromium.js';

let t: TestApp;
let browser: Browser;
let base = '';

beforeAll(async () => {
  t = await makeApp();
  base = await listenOn(t.app);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function inTurn(turn: string, tool: string, body: Record<string, unknown>): Promise<void> {
  const r = await t.call(tool, body, { 'toolgate-turn': turn });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

async function checkpointOf(turn: string): Promise<string> {
  const r = await t.call('list_checkpoints', { limit: 100 });
  const cp = (r.body.data as { checkpoints: Array<{ id: string; turn: string | null }> }).checkpoints.find((c) => c.turn === turn);
  if (!cp) throw new Error(`no checkpoint of turn ${turn}`);
  return cp.id;
}

const text = (page: Page, sel: string) => page.$eval(sel, (e) => e.textContent ?? '');

describe('turns in the console', () => {
  it('shows each turn with its files and diffs; the rewind is previewed, then confirmed; cancel changes nothing', async () => {
    await inTurn('turn-1', 'write_file', { path: 'notes.md', content: 'one\n' });
    await inTurn('turn-2', 'write_file', { path: 'plan.md', content: 'step\n' });
    await inTurn('turn-2', 'edit_file', { path: 'notes.md', old_text: 'one', new_text: 'two' });
    const first = await checkpointOf('turn-1');
    const second = await checkpointOf('turn-2');

    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 900 });
    await page.goto(`${base}/console`);
    await page.waitForFunction(() => document.querySelectorAll('#turns > li').length === 2);
    const card = `#turns > li[data-checkpoint="${second}"]`;
    // Newest first: turn-2, with both files and the edit's diff.
    expect(await page.$eval('#turns > li:first-child', (e) => (e as HTMLElement).dataset.checkpoint)).toBe(second);
    expect(await text(page, `${card} .turn-name`)).toBe('Turn turn-2');
    const files = await page.$$eval(`${card} .turn-files .change-head`, (els) => els.map((e) => e.textContent?.replace(/\s+/g, ' ').trim()));
    expect(files).toEqual(['create plan.md', 'update notes.md']);
    const edit = await page.$$eval(`${card} .turn-files .diff`, (els) => els.map((e) => e.textContent ?? ''));
    expect(edit[1]).toContain('-one');
    expect(edit[1]).toContain('+two');
    expect(edit[0]).toContain('+step');

    // Cancel: the preview goes, nothing changed.
    await page.click(`#turns > li[data-checkpoint="${first}"] .preview-rewind`);
    await page.waitForSelector(`#turns > li[data-checkpoint="${first}"] .rewind-preview:not([hidden])`);
    await page.click(`#turns > li[data-checkpoint="${first}"] .cancel-rewind`);
    await page.waitForSelector(`#turns > li[data-checkpoint="${first}"] .rewind-preview`, { hidden: true });
    expect(await text(page, '#status')).toContain('cancelled; nothing changed');
    expect(await fs.readFile(t.file('notes.md'), 'utf8')).toBe('two\n');

    // The preview of turn-2's rewind shows what goes back, and nothing has changed yet.
    await page.click(`${card} .preview-rewind`);
    await page.waitForSelector(`${card} .rewind-preview:not([hidden])`);
    const planned = await page.$$eval(`${card} .rewind-changes .change-head`, (els) => els.map((e) => e.textContent?.replace(/\s+/g, ' ').trim()).sort());
    expect(planned).toEqual(['delete plan.md', 'update notes.md']);
    const back = await page.$$eval(`${card} .rewind-changes .diff`, (els) => els.map((e) => e.textContent ?? '').join('\n'));
    expect(back).toContain('-two');
    expect(back).toContain('+one');
    expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.className)).toContain('confirm-rewind');
    expect(await fs.readFile(t.file('notes.md'), 'utf8')).toBe('two\n');
    expect(existsSync(t.file('plan.md'))).toBe(true);
    await page.screenshot({ path: '/tmp/toolgate-console-turns.png', fullPage: true });

    // Confirmed: the files are as before turn-2, and the rewind is a turn of its own on top.
    await page.click(`${card} .confirm-rewind`);
    await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('Rewound to before Turn turn-2'));
    expect(await fs.readFile(t.file('notes.md'), 'utf8')).toBe('one\n');
    expect(existsSync(t.file('plan.md'))).toBe(false);
    await page.waitForFunction(() => document.querySelectorAll('#turns > li').length === 3);
    expect(await text(page, '#turns > li:first-child .turn-name')).toMatch(/rewind/);
    await page.close();
  }, 60_000);
});
