// `npm ci` on the oldest Node the package supports (engines: >=20.19) installs nothing that asks for a newer
// one (issue 26): package.json's `overrides` hold back content-disposition, cookie and nanoid, whose latest
// majors need Node 22. npm's own engine check, in a dry run over a copy of the package files, says so.
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
let dir = '';
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('npm ci on Node 20', () => {
  it('prints no EBADENGINE warning', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-engines-'));
    for (const f of ['package.json', 'package-lock.json']) await copyFile(path.join(REPO, f), path.join(dir, f));
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const { stdout, stderr } = await promisify(execFile)(npm, ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
    expect(`${stdout}${stderr}`).not.toContain('EBADENGINE');
  });
});
