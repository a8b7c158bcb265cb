// `npm start` (issue 26): its prestart, scripts/build-if-stale.mjs, builds on a fresh clone and whenever a
// build input is newer than dist/.build-stamp, and otherwise starts at once. Run on a small copy of a
// checkout whose `build` script only writes the stamp and counts its runs, so no real build is paid for.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/build-if-stale.mjs', import.meta.url));

let repo: string;
const at = (rel: string) => path.join(repo, rel);
/** Sets a file's (or directory's) modification time `secondsAgo` in the past, so no test waits on the clock's granularity. */
const age = (rel: string, secondsAgo: number) => {
  const t = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(at(rel), t, t);
};
const builds = () => {
  try {
    return readFileSync(at('builds.log'), 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
};
const run = (...args: string[]) => spawnSync(process.execPath, [at('scripts/build-if-stale.mjs'), ...args], { cwd: repo, encoding: 'utf8' });

beforeEach(() => {
  repo = mkdtempSync(path.join(os.tmpdir(), 'toolgate-build-if-stale-'));
  mkdirSync(at('scripts'));
  mkdirSync(at('src/tools'), { recursive: true });
  copyFileSync(SCRIPT, at('scripts/build-if-stale.mjs'));
  const build = `node -e "const fs=require('fs');fs.mkdirSync('dist',{recursive:true});fs.writeFileSync('dist/.build-stamp','');fs.appendFileSync('builds.log','built\\\\n')"`;
  writeFileSync(at('package.json'), JSON.stringify({ name: 'copy', private: true, scripts: { build } }));
  writeFileSync(at('tsconfig.json'), '{}');
  writeFileSync(at('src/main.ts'), 'export {};\n');
  writeFileSync(at('src/tools/a.ts'), 'export {};\n');
  for (const rel of ['package.json', 'tsconfig.json', 'src/main.ts', 'src/tools/a.ts', 'src/tools', 'src']) age(rel, 3600);
});
afterEach(() => rmSync(repo, { recursive: true, force: true }));

describe('npm start builds only what is stale', () => {
  it('a fresh clone (no dist/) builds first, and the next start does not build again', () => {
    expect(run('--check')).toMatchObject({ status: 1, stdout: 'stale: dist/.build-stamp is missing (never built)\n' });
    expect(run().status).toBe(0);
    expect(builds()).toBe(1);
    expect(run('--check')).toMatchObject({ status: 0, stdout: 'fresh\n' });
    expect(run().status).toBe(0);
    expect(builds()).toBe(1);
  });

  it('a source, a package or tsconfig file newer than the stamp builds again', () => {
    run();
    for (const rel of ['src/tools/a.ts', 'package.json', 'tsconfig.json']) {
      age('dist/.build-stamp', 60);
      age(rel, 0);
      expect(run('--check').stdout).toBe(`stale: ${rel} is newer than the last build\n`);
      age(rel, 3600);
    }
  });

  it('a deleted source builds again (its directory changed)', () => {
    run();
    age('dist/.build-stamp', 60);
    unlinkSync(at('src/tools/a.ts'));
    expect(run('--check').stdout).toBe('stale: src/tools is newer than the last build\n');
    expect(run().status).toBe(0);
    expect(builds()).toBe(2);
  });

  it('a source saved while the build runs is not taken as built: the next start builds again', () => {
    // The stand-in build edits a source before it writes the stamp, as an editor saving mid-build would.
    const build = `node -e "const fs=require('fs');fs.appendFileSync('src/main.ts','// saved\\\\n');fs.mkdirSync('dist',{recursive:true});fs.writeFileSync('dist/.build-stamp','');fs.appendFileSync('builds.log','built\\\\n')"`;
    writeFileSync(at('package.json'), JSON.stringify({ name: 'copy', private: true, scripts: { build } }));
    age('package.json', 3600);
    expect(run().status).toBe(0);
    expect(run('--check').stdout).toBe('stale: src/main.ts is newer than the last build\n');
  });

  it('a failing build fails the start with its status and leaves the build due', () => {
    writeFileSync(at('package.json'), JSON.stringify({ name: 'copy', private: true, scripts: { build: 'exit 3' } }));
    const res = run();
    expect(res.status).toBe(3);
    expect(res.stderr).toContain('build: dist/.build-stamp is missing (never built); running npm run build');
    expect(run('--check').status).toBe(1);
  });
});
