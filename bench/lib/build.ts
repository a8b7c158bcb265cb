// What toolgate build is measured: by default the working tree (`npm run build`, then dist/main.js);
// with BENCH_REF=<commit> a snapshot of that commit's sources, built into the cache directory, so the
// figures belong to one commit even while others edit the working tree.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { progress } from './log.js';
import { options, REPO_DIR } from './options.js';

export interface Build {
  /** dist/main.js to run. */
  main: string;
  commit: string;
  /** Uncommitted changes under src/ are part of the build (working-tree builds only). */
  dirty: boolean;
  source: 'working tree' | 'commit snapshot';
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: REPO_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

function run(cmd: string, args: string[], cwd: string, what: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`${what} failed (exit ${String(r.status)}):\n${`${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-30).join('\n')}`);
  }
}

export async function buildToolgate(ref: string | null = options.ref): Promise<Build> {
  if (ref) {
    const commit = git(['rev-parse', '--short=12', `${ref}^{commit}`]);
    const dir = path.join(options.cacheDir, `build-${commit}`);
    const main = path.join(dir, 'dist', 'main.js');
    const marker = path.join(dir, '.built');
    if (!(await fs.stat(marker).catch(() => null))) {
      progress(`building toolgate at ${commit} (${ref}) in ${dir}`);
      await fs.rm(dir, { recursive: true, force: true });
      await fs.mkdir(dir, { recursive: true });
      // The production build: tsc, then (from d9661c1 on) the server bundle of scripts/bundle.mjs.
      const bundled = spawnSync('git', ['cat-file', '-e', `${commit}:scripts/bundle.mjs`], { cwd: REPO_DIR }).status === 0;
      const files = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json', ...(bundled ? ['scripts/bundle.mjs'] : [])];
      const archive = spawnSync('git', ['archive', '--format=tar', commit, ...files], { cwd: REPO_DIR, maxBuffer: 256 * 1024 * 1024 });
      if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr.toString()}`);
      const tar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
      if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr.toString()}`);
      await fs.symlink(path.join(REPO_DIR, 'node_modules'), path.join(dir, 'node_modules'));
      run(process.execPath, [path.join(REPO_DIR, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], dir, `tsc at ${commit}`);
      if (bundled) run(process.execPath, ['scripts/bundle.mjs'], dir, `bundle at ${commit}`);
      await fs.writeFile(marker, new Date().toISOString());
    } else progress(`using the build of ${commit} cached in ${dir}`);
    return { main, commit, dirty: false, source: 'commit snapshot' };
  }
  const commit = git(['rev-parse', '--short=12', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--', 'src']) !== '';
  if (options.skipBuild) progress('BENCH_SKIP_BUILD=1: using the existing dist/');
  else {
    progress(`building toolgate (npm run build) from the working tree at ${commit}${dirty ? ' with uncommitted changes in src/' : ''}`);
    run('npm', ['run', 'build'], REPO_DIR, 'npm run build');
  }
  const main = path.join(REPO_DIR, 'dist', 'main.js');
  await fs.access(main).catch(() => {
    throw new Error(`${main} is missing; run npm run build`);
  });
  return { main, commit, dirty, source: 'working tree' };
}
