// Hostile inputs against a real server process (src/main.ts): each call must end with a clear envelope while
// the service keeps answering. A prober polls /livez every 50 ms during each call; the test asserts that
// probes were answered while the call ran (the service was not frozen), never how fast, so it holds on a busy
// machine. The figures (slowest /livez answer, the server's own event-loop delay from /metrics, RSS) are
// printed and collected in bench/README.md ("Hostile inputs and the event loop").
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope } from '../../src/envelope.js';
import { makeTempDir } from '../helpers.js';
import { inflatingDocx } from '../office/fixtures.js';
import { startServer as startProcess, type ServerProcess } from '../ops/process.js';
import { startServer as startPages, type CountingServer } from '../web/servers.js';
import { longLines } from '../fixtures/long-lines.js';

const MiB = 1024 * 1024;
const nested = (depth: number) => `<html><body>${'<div>'.repeat(depth)}bottom${'</div>'.repeat(depth)}</body></html>`;
const PAGES: Record<string, string> = {
  '/nested-2000.html': nested(2000),
  '/nested-10000.html': nested(10_000),
  '/flat-120000.html': `<html><body>${'<p>x</p>'.repeat(120_000)}</body></html>`,
  // Under the element limit, so it is converted: the longest legitimate conversion, in the worker.
  '/small.html': '<html><body><main><p>A small page.</p></main></body></html>',
  '/flat-50000.html': `<html><body>${'<p>some words</p>'.repeat(50_000)}</body></html>`,
};
const LINE = 'const value = compute(alpha, beta);\n';

let dir: string;
let root: string;
let server: ServerProcess;
let pages: CountingServer;

interface Probed<T> {
  result: T;
  /** Probes sent and answered (status 200) before the call ended. */
  answered: number;
  unanswered: number;
  /** Slowest /livez answer, ms (not asserted). */
  maxLatencyMs: number;
  /** The server's largest event-loop delay during the call, ms (prom-client's monitorEventLoopDelay). */
  loopDelayMs: number;
}

async function call(tool: string, input: unknown): Promise<{ status: number; body: Envelope }> {
  const res = await fetch(`${server.url}/v1/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) });
  return { status: res.status, body: (await res.json()) as Envelope };
}

/** The largest event-loop delay since the last scrape (each scrape resets the server's histogram). */
async function loopDelayMs(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const m = /^toolgate_nodejs_eventloop_lag_max_seconds\s+(\S+)/m.exec(text);
  return m ? Number(m[1]) * 1000 : NaN;
}

/** Runs `work` while polling /livez every 50 ms. */
async function probed<T>(work: () => Promise<T>): Promise<Probed<T>> {
  await loopDelayMs();
  let running = true;
  let answered = 0;
  let unanswered = 0;
  let maxLatencyMs = 0;
  const prober = (async () => {
    while (running) {
      const sent = performance.now();
      try {
        const res = await fetch(`${server.url}/livez`);
        await res.arrayBuffer();
        if (running && res.status === 200) answered++;
      } catch {
        unanswered++;
      }
      maxLatencyMs = Math.max(maxLatencyMs, performance.now() - sent);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  let result: T;
  try {
    result = await work();
  } finally {
    running = false;
  }
  await prober;
  return { result, answered, unanswered, maxLatencyMs, loopDelayMs: await loopDelayMs() };
}

/** Jobs the server's edit pool has run (toolgate_worker_jobs_total{pool="edit"}): a large edit runs there, off the event loop. */
async function editJobs(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^toolgate_worker_jobs_total\{pool="edit"\}\s+(\S+)/m.exec(text)?.[1] ?? 0);
}

function report(name: string, p: Probed<unknown>, extra = ''): void {
  console.log(
    `stall suite: ${name}: /livez answered ${p.answered} probe(s) during the call, slowest ${p.maxLatencyMs.toFixed(0)} ms; server event-loop delay max ${p.loopDelayMs.toFixed(0)} ms${extra}`,
  );
}

async function procStatus(field: 'VmHWM' | 'VmRSS'): Promise<number> {
  const status = await fs.readFile(`/proc/${server.child.pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
}

beforeAll(async () => {
  pages = await startPages((req, res) => {
    const page = PAGES[req.url ?? ''];
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html' });
    res.end(page ?? 'no such page');
  });
  dir = await makeTempDir();
  root = path.join(dir, 'ws');
  await fs.mkdir(root);
  server = await startProcess({
    TOOLGATE_ROOT: root,
    TOOLGATE_AUDIT_STDOUT: 'false',
    TOOLGATE_RATE_LIMIT: '0',
    // The page server is on loopback, which web_fetch refuses unless the operator allows it.
    TOOLGATE_WEB_ALLOW: '127.0.0.1',
    // Eight documents read one after another must not run out of their own time limit on a busy machine.
    TOOLGATE_TOOL_TIMEOUT_MS: '300000',
  });
  // The first web call loads undici and starts the converter's workers: not part of any input's figures.
  expect((await call('web_fetch', { url: `${pages.origin}/small.html` })).body.status).toBe('success');
}, 60_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await pages?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('hostile inputs do not stall the service', () => {
  it.each([
    ['a page of <div> nested 2,000 deep (22 KB)', '/nested-2000.html', 'FILE_TOO_LARGE'],
    ['a page of <div> nested 10,000 deep', '/nested-10000.html', 'FILE_TOO_LARGE'],
    ['a page of 120,000 flat <p>', '/flat-120000.html', 'FILE_TOO_LARGE'],
  ])('web_fetch of %s ends with an envelope while /livez answers', async (name, route, code) => {
    const p = await probed(() => call('web_fetch', { url: `${pages.origin}${route}` }));
    report(`web_fetch ${name}`, p);
    expect(p.result.body.status).toBe('error');
    expect(p.result.body.error?.code, p.result.body.error?.message).toBe(code);
    expect(p.answered).toBeGreaterThan(0);
    expect(p.unanswered).toBe(0);
  });

  it('web_fetch of 50,000 paragraphs converts in the worker while /livez answers', async () => {
    const p = await probed(() => call('web_fetch', { url: `${pages.origin}/flat-50000.html` }));
    report('web_fetch 50,000 <p> (converted)', p);
    expect(p.result.body.error?.code ?? null, p.result.body.error?.message).toBeOneOf([null, 'TIMEOUT']);
    expect(p.answered).toBeGreaterThan(0);
    expect(p.unanswered).toBe(0);
  });

  it('edit_file on 150,000 identical lines with 2,000 of them indented ends with an envelope while /livez answers', async () => {
    const content = LINE.repeat(150_000);
    await fs.writeFile(path.join(root, 'same.js'), content);
    const jobs = await editJobs();
    const p = await probed(() => call('edit_file', { path: 'same.js', old_text: `    ${LINE}`.repeat(2000), new_text: 'gone\n' }));
    // The engine ran in the edit worker: what stayed on the event loop is reading and decoding the file.
    expect(await editJobs()).toBe(jobs + 1);
    report('edit_file 150,000 identical lines', p);
    expect(p.result.body.error?.code).toBe('TIMEOUT');
    expect(p.answered).toBeGreaterThan(0);
    expect(p.unanswered).toBe(0);
    expect(await fs.readFile(path.join(root, 'same.js'), 'utf8')).toBe(content);
  });

  it('edit_file with 1 MB of long lines found nowhere in a 5 MB file of long lines answers NO_MATCH while /livez answers', async () => {
    const lines = longLines;
    await fs.writeFile(path.join(root, 'long.txt'), lines(5000, 0, 'file'));
    const jobs = await editJobs();
    const p = await probed(() => call('edit_file', { path: 'long.txt', old_text: lines(1000, 3, 'model'), new_text: 'x\n' }));
    // The engine ran in the edit worker: what stayed on the event loop is reading and decoding the file.
    expect(await editJobs()).toBe(jobs + 1);
    report('edit_file NO_MATCH, 1 MB of long lines', p);
    expect(p.result.body.error?.code).toBe('NO_MATCH');
    expect(p.answered).toBeGreaterThan(0);
    expect(p.unanswered).toBe(0);
  });

  it('apply_patch with a hunk of 2,000 of those lines indented ends with an envelope while /livez answers', async () => {
    const content = LINE.repeat(150_000);
    await fs.writeFile(path.join(root, 'same-patch.js'), content);
    const hunk = Array.from({ length: 2000 }, () => `-    ${LINE.trimEnd()}`);
    const patch = ['*** Begin Patch', '*** Update File: same-patch.js', '@@', ...hunk, '+gone', '*** End Patch'].join('\n');
    const jobs = await editJobs();
    const p = await probed(() => call('apply_patch', { patch }));
    // The engine ran in the edit worker: what stayed on the event loop is reading and decoding the file.
    expect(await editJobs()).toBe(jobs + 1);
    report('apply_patch 150,000 identical lines', p);
    expect(p.result.body.error?.code).toBe('MULTIPLE_MATCHES');
    expect(p.answered).toBeGreaterThan(0);
    expect(p.unanswered).toBe(0);
    expect(await fs.readFile(path.join(root, 'same-patch.js'), 'utf8')).toBe(content);
  });

  it('read_docx of a document inflating to 120 MiB answers while /livez answers', async () => {
    await fs.writeFile(path.join(root, 'inflating.docx'), inflatingDocx());
    const p = await probed(() => call('read_docx', { path: 'inflating.docx' }));
    report('read_docx 120 MiB inflated', p);
    expect(p.result.body.status, p.result.body.text).toBe('success');
    expect(p.answered).toBeGreaterThan(0);
    expect(p.unanswered).toBe(0);
  });

  it('eight such documents at once stay under the chart limit of 512 MiB RSS while /livez answers', async () => {
    const bomb = inflatingDocx();
    for (let i = 0; i < 8; i++) await fs.writeFile(path.join(root, `inflating-${i}.docx`), bomb);
    // The kernel's high-water mark, reset for this case (writing 5 to clear_refs); sampled as well, in
    // case this kernel refuses the reset.
    const reset = await fs.writeFile(`/proc/${server.child.pid}/clear_refs`, '5').then(
      () => true,
      () => false,
    );
    const before = await procStatus('VmRSS');
    let sampled = before;
    const p = await probed(async () => {
      const sampler = setInterval(() => void procStatus('VmRSS').then((rss) => (sampled = Math.max(sampled, rss)), () => {}), 20);
      try {
        return await Promise.all(Array.from({ length: 8 }, (_, i) => call('read_docx', { path: `inflating-${i}.docx` })));
      } finally {
        clearInterval(sampler);
      }
    });
    const peak = reset ? Math.max(await procStatus('VmHWM'), sampled) : sampled;
    report('read_docx eight at once', p, `; RSS before ${(before / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB (${reset ? 'VmHWM' : 'sampled'})`);
    for (const res of p.result) expect(res.body.status, res.body.text).toBe('success');
    expect(p.answered).toBeGreaterThan(0);
    expect(p.unanswered).toBe(0);
    expect(peak).toBeLessThan(512 * MiB);
  }, 600_000);
});
