// Finding (issue 12): a full disk left a cut-short audit line, so `toolgate audit verify` failed from then
// on, and the calls made meanwhile were missing without a trace. The state directory lives on a small
// tmpfs mounted for this test (needs root, as test/tools/disk-full.test.ts); a second test injects the
// short write and ENOSPC at the audit file's write, so the behaviour is checked without root too.
import { execFileSync } from 'node:child_process';
import fsNow from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { verifyAuditFile } from '../../src/ops/audit-verify.js';
import { makeTempDir } from '../helpers.js';
import { cli } from './process.js';
import { request } from './ops-helpers.js';

let mountPoint = '';
let mounted = false;
let base = '';

beforeAll(async () => {
  base = await makeTempDir('toolgate-audit-full-');
  mountPoint = path.join(base, 'state');
  await fs.mkdir(mountPoint);
  await fs.mkdir(path.join(base, 'ws'));
  await fs.writeFile(path.join(base, 'ws', 'a.txt'), 'hello\n');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mountPoint], { stdio: 'ignore' });
    mounted = true;
  } catch {
    // not root: the injected test below still runs
  }
});
afterAll(async () => {
  if (mounted) execFileSync('umount', [mountPoint]);
  await fs.rm(base, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function appOver(stateDir: string, instance: string) {
  return buildApp(
    loadConfig({ TOOLGATE_ROOT: path.join(base, 'ws'), TOOLGATE_STATE_DIR: stateDir, TOOLGATE_INSTANCE_ID: instance, TOOLGATE_AUDIT_STDOUT: 'false', TOOLGATE_RATE_LIMIT: '0' }),
  );
}

type Line = Record<string, unknown>;
const parse = (text: string): Line[] => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);

/** Every line whole, and the chain intact: what the finding said was no longer true after a full disk. */
async function expectNoTornLine(file: string): Promise<Line[]> {
  const text = await fs.readFile(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  expect((await verifyAuditFile(file)).ok).toBe(true);
  return parse(text);
}

describe('audit log on a full disk', () => {
  it('disk full leaves no torn audit line, and the gap is recorded once space returns', async (ctx) => {
    if (!mounted) ctx.skip();
    const app = await appOver(mountPoint, 'full');
    const read = () => request(app, 'POST', '/v1/tools/read_file', { path: 'a.txt' });
    try {
      for (let i = 0; i < 3; i++) expect((await read()).status).toBe(200);
      await app.toolgate.audit.flush();
      const file = app.toolgate.audit.fileFor(mountPoint, new Date());
      expect(await expectNoTornLine(file)).toHaveLength(3);

      // Fill the volume: only the slack of the audit file's last page is left, so the next groups of
      // lines are written in part (a short write) and then refused (ENOSPC).
      const filler = path.join(mountPoint, 'filler');
      await fs.writeFile(filler, Buffer.alloc(1024 * 1024)).catch((err: NodeJS.ErrnoException) => expect(err.code).toBe('ENOSPC'));
      const whileFull = await Promise.all(Array.from({ length: 20 }, () => read()));
      for (let i = 0; i < 10; i++) whileFull.push(await read());
      // the calls themselves are answered; only their audit lines cannot be kept
      expect(whileFull.every((r) => r.status === 200)).toBe(true);
      await app.toolgate.audit.flush();
      const duringFull = await expectNoTornLine(file);
      expect(duringFull.filter((l) => l.event === undefined).length).toBeLessThan(33);

      await fs.rm(filler);
      for (let i = 0; i < 5; i++) expect((await read()).status).toBe(200);
      await app.toolgate.audit.flush();
      const after = await expectNoTornLine(file);
      // the file only grew: nothing written while full was cut away later
      expect(after.slice(0, duringFull.length).map((l) => l.hash)).toEqual(duringFull.map((l) => l.hash));
      // A gap line goes out with the first write that succeeds, which may already fit in the page's
      // slack while the volume is still full; so there is at least one, and every call is either in the
      // file or counted in a gap.
      const gaps = after.filter((l) => l.event === 'audit_gap');
      expect(gaps.length).toBeGreaterThanOrEqual(1);
      const entries = after.filter((l) => l.event === undefined);
      expect(entries.length + gaps.reduce((n, g) => n + (g.lost as number), 0)).toBe(38);
      expect(after.slice(-5).every((l) => l.tool === 'read_file')).toBe(true);
      for (const gap of gaps) {
        const at = after.indexOf(gap);
        expect(gap).toMatchObject({ error: 'ENOSPC', prev: after[at - 1]?.hash });
        expect(gap.lost as number).toBeGreaterThan(0);
        expect(Date.parse(gap.from as string)).toBeLessThanOrEqual(Date.parse(gap.to as string));
        expect(Date.parse(gap.to as string)).toBeLessThanOrEqual(Date.parse(gap.time as string));
      }

      const verify = await cli(['audit', 'verify', file]);
      expect(verify.code).toBe(0);
      expect(verify.stdout).toContain(`OK: ${file}: ${after.length} line(s), hash chain intact.`);
      const first = gaps[0] as Line;
      expect(verify.stdout).toContain(`GAP: line ${after.indexOf(first) + 1}: ${String(first.lost)} entr`);
      expect(verify.stdout).toContain(`from ${String(first.from)} to ${String(first.to)}`);
    } finally {
      await app.close();
    }
  });

  it('a short write followed by ENOSPC is cut back to the last whole line (injected at the audit write)', async () => {
    const stateDir = path.join(base, 'injected');
    const app = await appOver(stateDir, 'injected');
    const read = () => request(app, 'POST', '/v1/tools/read_file', { path: 'a.txt' });
    let full = false;
    const realOpen = fs.open.bind(fs);
    // Only the audit file's handles: each takes 100 bytes of its first write, then is out of space.
    vi.spyOn(fs, 'open').mockImplementation(async (...args: Parameters<typeof fs.open>) => {
      const fh = await realOpen(...args);
      if (!full || !String(args[0]).includes(`${path.sep}audit${path.sep}`)) return fh;
      const realWrite = fh.write.bind(fh) as (b: Buffer, o: number, l: number) => Promise<{ bytesWritten: number }>;
      let wrote = false;
      (fh as unknown as { write: typeof realWrite }).write = async (b, o, l) => {
        if (wrote) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
        wrote = true;
        return realWrite(b, o, Math.min(l, 100));
      };
      return fh;
    });
    // The same for the synchronous path the audit takes while no fsync runs (src/ops/audit-file.ts, appendWholeNow),
    // whose descriptor stays open between groups: once the disk is full, each descriptor takes 100 bytes.
    const realOpenSync = fsNow.openSync.bind(fsNow);
    const realWriteSync = fsNow.writeSync.bind(fsNow) as (fd: number, b: Buffer, o: number, l: number) => number;
    const injected = new Map<number, boolean>();
    vi.spyOn(fsNow, 'openSync').mockImplementation((...args: Parameters<typeof fsNow.openSync>) => {
      const fd = realOpenSync(...args);
      if (String(args[0]).includes(`${path.sep}audit${path.sep}`)) injected.set(fd, false);
      return fd;
    });
    vi.spyOn(fsNow, 'writeSync').mockImplementation(((fd: number, b: Buffer, o: number, l: number) => {
      const wrote = injected.get(fd);
      if (!full || wrote === undefined) return realWriteSync(fd, b, o, l);
      if (wrote) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      injected.set(fd, true);
      return realWriteSync(fd, b, o, Math.min(l, 100));
    }) as typeof fsNow.writeSync);
    const realCloseSync = fsNow.closeSync.bind(fsNow);
    vi.spyOn(fsNow, 'closeSync').mockImplementation((fd: number) => {
      injected.delete(fd);
      realCloseSync(fd);
    });
    try {
      await read();
      await app.toolgate.audit.flush();
      full = true;
      await Promise.all([read(), read(), read()]);
      await read();
      await app.toolgate.audit.flush();
      const file = app.toolgate.audit.fileFor(stateDir, new Date());
      expect(await expectNoTornLine(file)).toHaveLength(1);
      full = false;
      await read();
      await app.toolgate.audit.flush();
      const lines = await expectNoTornLine(file);
      expect(lines.map((l) => l.event ?? l.tool)).toEqual(['read_file', 'audit_gap', 'read_file']);
      expect(lines[1]).toMatchObject({ lost: 4, error: 'ENOSPC', prev: lines[0]?.hash });
      expect(await verifyAuditFile(file)).toEqual({ ok: true, lines: 3, gaps: [{ line: 2, lost: 4, from: lines[1]?.from, to: lines[1]?.to }] });
    } finally {
      await app.close();
    }
  });
});
