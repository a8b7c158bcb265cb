// `npm pack` leaves its tarball in the checkout; git must not offer it for a commit (issue 23).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

describe('.gitignore', () => {
  it("ignores npm pack's tarball", () => {
    for (const tarball of [`${pkg.name}-${pkg.version}.tgz`, `toolgate-client-${pkg.version}.tgz`]) {
      const res = spawnSync('git', ['check-ignore', '--no-index', '-q', tarball], { cwd: REPO });
      expect(res.status, `${tarball} is not ignored: ${res.stderr.toString()}`).toBe(0);
    }
  });
});
