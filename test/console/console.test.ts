/// <reference lib="dom" />
// The approval console in a real browser (issue 14 point 5): Debian's chromium driven by puppeteer-core, no
// browser download. The page asks for the approver's token once (kept for the tab), lists pending requests
// live with the diff coloured, approves, rejects with a reason by keyboard, and fits a narrow screen.
// Screenshots go to /tmp/toolgate-console*.png for a person to look at.
import fs from 'node:fs/promises';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent, approvalOf, makePolicyApp, person, type PolicyApp } from '../approvals/approval-helpers.js';
import { launchChromium } from './chromium.js';

const POLICY = 'rules:\n  - name: soul\n    paths: [SOUL.md, notes/**]\n    risks: [write, destructive]\n    action: ask\n';

let t: PolicyApp;
let browser: Browser;
let base = '';

beforeAll(async () => {
  t = await makePolicyApp(POLICY);
  await fs.writeFile(t.file('SOUL.md'), 'I am kind.\nI help.\nI listen.\n');
  await fs.mkdir(t.file('notes'));
  await fs.writeFile(t.file('notes/todo.md'), '- buy milk\n');
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function ask(body: Record<string, unknown>, tool = 'edit_file') {
  const r = await t.as(agent, tool, body);
  expect(r.status).toBe(202);
  return approvalOf(r.body);
}

async function cardCount(page: Page): Promise<number> {
  return page.$$eval('#list > li', (els) => els.length);
}

describe('the approval console', () => {
  it('token once, live list with coloured diff, reject with a reason by keyboard, approve', async () => {
    const soul = await ask({ path: 'SOUL.md', old_text: 'I help.', new_text: 'I help gladly.' });
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 800 });
    await page.goto(`${base}/console`);

    // Asked for the token (the API answered 401), with a labelled field that has focus.
    await page.waitForSelector('#token-form:not([hidden])');
    expect(await page.$eval('label[for=token]', (l) => l.textContent)).toBe('Approver token');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('token');
    await page.keyboard.type(person.secret);
    await page.keyboard.press('Enter');

    await page.waitForSelector(`li[data-id="${soul.id}"]`);
    const card = `li[data-id="${soul.id}"]`;
    expect(await page.$eval(`${card} .tool`, (e) => e.textContent)).toBe('edit_file');
    expect(await page.$eval(`${card} .path`, (e) => e.textContent)).toBe('SOUL.md');
    expect(await page.$eval(`${card} .caller`, (e) => e.textContent)).toBe('agent');
    expect(await page.$eval(`${card} .risk`, (e) => e.textContent)).toBe('write · high');
    expect(await page.$eval(`${card} .age`, (e) => e.textContent)).toMatch(/ago$/);
    expect(await page.$eval(`${card} .diff .add`, (e) => e.textContent)).toBe('+I help gladly.\n');
    expect(await page.$eval(`${card} .diff .del`, (e) => e.textContent)).toBe('-I help.\n');
    const colours = await page.$eval(`${card} .diff`, (pre) => {
      const bg = (sel: string) => getComputedStyle(pre.querySelector(sel) as Element).backgroundColor;
      return { add: bg('.add'), del: bg('.del'), ctx: bg('.ctx') };
    });
    expect(colours.add).not.toBe(colours.del);
    expect(colours.add).not.toBe(colours.ctx);
    // Every input has a label.
    expect(await page.$$eval('input', (inputs) => inputs.filter((i) => !(i as HTMLInputElement).labels?.length).length)).toBe(0);

    // A request made while the page is open appears by itself.
    const notes = await ask({ path: 'notes/todo.md', content: '- call mum\n' }, 'append_to_file');
    await page.waitForSelector(`li[data-id="${notes.id}"]`);
    expect(await cardCount(page)).toBe(2);
    await page.screenshot({ path: '/tmp/toolgate-console.png', fullPage: true });

    // Reject the first by keyboard: focus its reason field, type, Tab to Approve, Tab to Reject, Enter.
    await page.focus(`${card} .reason`);
    await page.keyboard.type('keep the persona as it is');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Reject');
    await page.keyboard.press('Enter');
    await page.waitForSelector(card, { hidden: true });
    const rejected = await t.as(agent, 'edit_file', { path: 'SOUL.md', old_text: 'I help.', new_text: 'I help gladly.', approval_id: soul.id });
    expect(rejected.body.error?.code).toBe('USER_REJECTED');
    expect(rejected.body.error?.message).toBe('The user rejected this change. Reason: keep the persona as it is');

    // Approve the other with a click; the agent's repeat then runs.
    await page.click(`li[data-id="${notes.id}"] .approve`);
    await page.waitForSelector(`li[data-id="${notes.id}"]`, { hidden: true });
    expect(await page.$eval('#empty', (e) => (e as HTMLElement).hidden)).toBe(false);
    const ran = await t.as(agent, 'append_to_file', { path: 'notes/todo.md', content: '- call mum\n', approval_id: notes.id });
    expect(ran.status).toBe(200);
    expect(await fs.readFile(t.file('notes/todo.md'), 'utf8')).toBe('- buy milk\n- call mum\n');

    // The token is kept for the tab: a reload does not ask again.
    await page.reload();
    await page.waitForSelector('#status');
    await page.waitForFunction(() => /pending/.test(document.getElementById('status')?.textContent ?? ''));
    expect(await page.$eval('#token-form', (e) => (e as HTMLElement).hidden)).toBe(true);
    await page.close();
  }, 60_000);

  it('fits a narrow screen', async () => {
    const a = await ask({ path: 'SOUL.md', old_text: 'I listen.', new_text: 'I listen closely, and I remember what matters to the people I talk with.' });
    const page = await browser.newPage();
    await page.setViewport({ width: 360, height: 740, deviceScaleFactor: 2 });
    await page.goto(`${base}/console`);
    await page.waitForSelector('#token-form:not([hidden])');
    await page.type('#token', person.secret);
    await page.click('#token-form button[type=submit]');
    await page.waitForSelector(`li[data-id="${a.id}"]`);
    // No horizontal scrolling of the page (a long diff line scrolls inside its own box).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    const buttons = await page.$$eval(`li[data-id="${a.id}"] button`, (bs) => bs.map((b) => b.getBoundingClientRect().height));
    for (const h of buttons) expect(h).toBeGreaterThanOrEqual(40);
    await page.screenshot({ path: '/tmp/toolgate-console-narrow.png', fullPage: true });
    await page.close();
  }, 60_000);

  it('shows every file of a patch with its operation and the content a delete removes; says what was decided and keeps a history', async () => {
    await fs.writeFile(t.file('notes/plan.md'), 'step one\n');
    await fs.writeFile(t.file('notes/old.md'), 'forget me\nand me\n');
    const patch = '*** Begin Patch\n*** Update File: notes/plan.md\n@@\n-step one\n+step one, done\n*** Delete File: notes/old.md\n*** End Patch\n';
    const a = await ask({ patch }, 'apply_patch');
    const move = await ask({ path: 'notes/plan.md', destination: 'notes/archive/plan.md' }, 'move_file');
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 900 });
    await page.goto(`${base}/console`);
    await page.waitForSelector('#token-form:not([hidden])');
    await page.type('#token', person.secret);
    await page.click('#token-form button[type=submit]');
    const card = `li[data-id="${a.id}"]`;
    await page.waitForSelector(card);

    const changes = await page.$$eval(`${card} .change`, (els) =>
      els.map((el) => ({
        op: el.querySelector('.op')?.textContent,
        path: el.querySelector('.change-path')?.textContent,
        added: [...el.querySelectorAll('.diff .add')].map((s) => s.textContent),
        removed: [...el.querySelectorAll('.diff .del')].map((s) => s.textContent),
      })),
    );
    expect(changes).toEqual([
      { op: 'update', path: 'notes/plan.md', added: ['+step one, done\n'], removed: ['-step one\n'] },
      { op: 'delete', path: 'notes/old.md', added: [], removed: ['-forget me\n', '-and me\n'] },
    ]);
    expect(await page.$eval(`li[data-id="${move.id}"] .change-path`, (e) => e.textContent)).toBe('notes/plan.md → notes/archive/plan.md');
    expect(await page.$eval(`li[data-id="${move.id}"] .op`, (e) => e.textContent)).toBe('move');
    expect(await page.$eval('body', (b) => b.textContent)).not.toContain('no diff: this call does not change file content');
    await page.screenshot({ path: '/tmp/toolgate-console-changes.png', fullPage: true });

    // Approving says so and puts the decision in the history; the card does not just vanish.
    await page.click(`${card} .approve`);
    await page.waitForSelector(card, { hidden: true });
    expect(await page.$eval('#status', (e) => e.textContent)).toMatch(/^Approved: apply_patch: update notes\/plan\.md, delete notes\/old\.md\. The agent may now repeat the call\.$/);
    await page.type(`li[data-id="${move.id}"] .reason`, 'keep it where it is');
    await page.click(`li[data-id="${move.id}"] .reject`);
    await page.waitForSelector(`li[data-id="${move.id}"]`, { hidden: true });
    expect(await page.$eval('#status', (e) => e.textContent)).toMatch(/^Rejected: move_file: move notes\/plan\.md → notes\/archive\/plan\.md\./);
    const entries = async () => page.$$eval('#history > li', (els) => els.map((el) => el.textContent ?? ''));
    let history = await entries();
    expect(history).toHaveLength(2);
    expect(history[0]).toMatch(/^Rejected: move_file: move notes\/plan\.md → notes\/archive\/plan\.md \(reason: keep it where it is\)/);
    expect(history[1]).toMatch(/^Approved: apply_patch: update notes\/plan\.md, delete notes\/old\.md/);

    // A request another approver decides shows up in the history as decided elsewhere.
    const other = await ask({ path: 'notes/plan.md', content: 'step two\n' }, 'append_to_file');
    await page.waitForSelector(`li[data-id="${other.id}"]`);
    await t.decide(person, other.id, 'reject', 'not now');
    await page.waitForSelector(`#history > li[data-decided="${other.id}"]`);
    history = await entries();
    expect(history[0]).toMatch(/^Rejected elsewhere by person: append_to_file: update notes\/plan\.md \(reason: not now\)/);

    // The history is kept for the tab.
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('#history > li').length === 3);
    const ran = await t.as(agent, 'apply_patch', { patch, approval_id: a.id });
    expect(ran.status).toBe(200);
    expect(await fs.readFile(t.file('notes/plan.md'), 'utf8')).toBe('step one, done\n');
    await page.close();
  }, 60_000);
});

describe('a command in the console, and its icon', () => {
  let cmd: PolicyApp;
  let cmdBase = '';
  beforeAll(async () => {
    // No tokens (loopback): run_command needs the `execute` risk class, which no test token has.
    cmd = await makePolicyApp('ide.yaml', { TOOLGATE_EXEC: 'sandboxed' }, false);
    await fs.mkdir(cmd.file('src'));
    cmdBase = await cmd.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => cmd?.close());

  it('titles a command by its command line and shows its directory, network, limits, what it did and its changes', async () => {
    const body = { command: 'npm test; echo more > more.txt', cwd: 'src', env: ['CI=1'], timeout_s: 10 };
    const r = await cmd.as(null, 'run_command', body);
    expect(r.status).toBe(202);
    const a = approvalOf(r.body);
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 800 });
    await page.goto(`${cmdBase}/console`);
    const card = `li[data-id="${a.id}"]`;
    await page.waitForSelector(card);

    expect(await page.$eval(`${card} .title`, (e) => e.textContent)).toBe('run_command npm test; echo more > more.txt');
    const fact = (sel: string) => page.$eval(`${card} ${sel}`, (e) => (e.closest('.command-fact') as HTMLElement).hidden ? null : e.textContent);
    expect(await fact('.cwd')).toBe('/workspace/src');
    expect(await fact('.network')).toBe('off');
    const limits = await fact('.limits');
    expect(limits).toMatch(/^time 30 s, CPU 60 s, memory 1024 MiB, 128 processes, files up to 256 MiB, 1024 open files, \/tmp 64 MiB, project growth up to 1024 MiB$/);
    // The first box shows what runs, what it is given and (the network being off, it ran first) what it did;
    // the settings are not repeated there. The change it made follows, held until the person decides.
    const first = `${card} .changes > li:nth-child(1)`;
    expect(await page.$eval(`${first} .op`, (e) => e.textContent)).toBe('run');
    expect(await page.$eval(`${first} .change-path`, (e) => e.textContent)).toBe('/workspace/src');
    const shown = await page.$eval(`${first} .diff`, (e) => e.textContent ?? '');
    expect(shown).toContain('$ npm test; echo more > more.txt\n');
    expect(shown).toContain('env CI=1\n');
    expect(shown).toContain('timeout: 10 s\n');
    expect(shown).toContain('exit: exited 0\n');
    expect(shown).toMatch(/stderr \(\d+ bytes\):\n\| npm error/);
    expect(shown).not.toContain('limits:');
    const second = `${card} .changes > li:nth-child(2)`;
    expect(await page.$eval(`${second} .op`, (e) => e.textContent)).toBe('create');
    expect(await page.$eval(`${second} .change-path`, (e) => e.textContent)).toBe('src/more.txt');
    expect(await page.$eval(`${second} .diff`, (e) => e.textContent ?? '')).toContain('more');
    expect(await fs.stat(cmd.file('src/more.txt')).catch(() => null)).toBeNull();
    expect(await page.$eval(`${card} .approve`, (e) => e.getAttribute('aria-label'))).toBe('Approve run_command npm test; echo more > more.txt');
    await page.screenshot({ path: '/tmp/toolgate-console-command.png', fullPage: true });

    // Every door shows the same: the record holds the settings after the call.
    const stored = (await cmd.get(null, `/v1/approvals/${a.id}`)).json.approval as { diff_preview: string; summary: string };
    expect(stored.diff_preview).toMatch(/\nnetwork: off\nlimits: time 30 s, /);
    expect(stored.summary).toContain('it ran without landing');

    await page.click(`${card} .approve`);
    await page.waitForSelector(card, { hidden: true });
    expect(await page.$eval('#status', (e) => e.textContent)).toBe('Approved: run_command: npm test; echo more > more.txt. The agent may now repeat the call.');
    await page.close();
  }, 60_000);

  it('serves an icon at /favicon.ico that the browser shows', async () => {
    const page = await browser.newPage();
    await page.goto(`${cmdBase}/console`);
    expect(await page.$eval('link[rel=icon]', (l) => l.getAttribute('href'))).toBe('/favicon.ico');
    const res = await page.evaluate(async () => {
      const r = await fetch('/favicon.ico');
      return { status: r.status, type: r.headers.get('content-type') };
    });
    expect(res).toEqual({ status: 200, type: 'image/x-icon' });
    const width = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const img = new Image();
          img.onload = () => resolve(img.naturalWidth);
          img.onerror = () => resolve(0);
          img.src = '/favicon.ico';
        }),
    );
    expect(width).toBeGreaterThanOrEqual(16);
    await page.close();
  }, 60_000);
});
