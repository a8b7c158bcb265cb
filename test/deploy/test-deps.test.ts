// The README's test command on a fresh machine (issue 12): `npm test` first runs scripts/test-deps.mjs, which
// installs the Debian programs the suites need or fails at once naming them; it never lets a suite skip.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/test-deps.mjs', import.meta.url));
const root = process.getuid?.() === 0;

let bin: string;
afterEach(() => rmSync(bin, { recursive: true, force: true }));

/** A PATH with node and the given stub programs only: what a fresh machine without the packages has. */
function freshPath(stubs: Record<string, string>): string {
  bin = mkdtempSync(path.join(os.tmpdir(), 'toolgate-test-deps-'));
  symlinkSync(process.execPath, path.join(bin, 'node'));
  for (const [name, body] of Object.entries(stubs)) {
    writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  }
  return bin;
}

const run = (dir: string, env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', env: { PATH: dir, HOME: os.tmpdir(), ...env } });

describe('npm test on a fresh machine', () => {
  it('without redis-server, yamllint, chromium, bwrap, slirp4netns and nft and no way to install them, fails at once naming them and the command', () => {
    const res = run(freshPath({}));
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('redis-server (Debian package redis-server)');
    expect(res.stderr).toContain('yamllint (Debian package yamllint)');
    expect(res.stderr).toContain('chromium (Debian package chromium), used by test/console/console.test.ts');
    expect(res.stderr).toContain('bwrap (Debian package bubblewrap)');
    expect(res.stderr).toContain('slirp4netns (Debian package slirp4netns)');
    expect(res.stderr).toContain('nft (Debian package nftables)');
    expect(res.stderr).toContain('apt-get install -y --no-install-recommends redis-server yamllint chromium bubblewrap slirp4netns nftables');
  });

  it('names only what is missing', () => {
    const res = run(freshPath({ 'redis-server': 'exit 0', chromium: 'exit 0', bwrap: 'exit 0', slirp4netns: 'exit 0', nft: 'exit 0', 'apt-get': 'exit 0' }), { TOOLGATE_TEST_NO_INSTALL: '1' });
    expect(res.status).toBe(1);
    expect(res.stderr).not.toContain('redis-server (');
    expect(res.stderr).toMatch(/apt-get install -y --no-install-recommends yamllint$/m);
  });

  it('passes quietly when all are there', () => {
    const res = run(freshPath({ 'redis-server': 'exit 0', yamllint: 'exit 0', chromium: 'exit 0', bwrap: 'exit 0', slirp4netns: 'exit 0', nft: 'exit 0' }));
    expect([res.status, res.stderr]).toEqual([0, '']);
  });

  it.runIf(root)('as root with apt-get, installs the missing packages and goes on', () => {
    // A stand-in apt-get that logs its arguments and "installs" stub programs into the same directory.
    const dir = freshPath({});
    const log = path.join(dir, 'apt.log');
    writeFileSync(
      path.join(dir, 'apt-get'),
      `#!/bin/sh\n[ "$1" = --version ] && exit 0\necho "$@" >> ${log}\nif [ "$1" = install ]; then for p in redis-server yamllint chromium bwrap slirp4netns nft; do printf '#!/bin/sh\\nexit 0\\n' > ${dir}/$p; /bin/chmod 755 ${dir}/$p; done; fi\n`,
    );
    chmodSync(path.join(dir, 'apt-get'), 0o755);
    const res = run(dir);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stderr).toContain('installing redis-server, yamllint, chromium, bubblewrap, slirp4netns, nftables');
    expect(readFileSync(log, 'utf8')).toBe('update -qq\ninstall -y -qq --no-install-recommends redis-server yamllint chromium bubblewrap slirp4netns nftables\n');
  });
});
