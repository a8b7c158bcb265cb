// `npm start` runs this first (prestart): builds dist/ only when it is missing or older than what it is built
// from, so a start with nothing changed serves at once, and a fresh clone (no dist/) still builds first.
// "Older" compares modification times: the newest file or directory (a deleted or added file changes its
// directory's time) among the build's inputs against dist/.build-stamp, which scripts/bundle.mjs, the
// build's last step, writes. See docs/development.md.
//
// Plain JavaScript so that it runs with no loader: node scripts/build-if-stale.mjs [--check]
// (--check: only say whether a build is due; exit 0 fresh, 1 stale).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** What `npm run build` reads, relative to the repository (directories are walked). */
export const BUILD_INPUTS = ['src', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.client.json', 'scripts/bundle.mjs'];
export const STAMP = path.join('dist', '.build-stamp');

/** The newest modification time (ms) among `inputs` under `repo`, directories included; missing inputs are skipped. */
export function newestInput(repo, inputs = BUILD_INPUTS) {
  let newest = { mtimeMs: 0, file: '' };
  const visit = (file) => {
    let st;
    try {
      st = statSync(file);
    } catch (err) {
      if (err.code === 'ENOENT') return;
      throw err;
    }
    if (st.mtimeMs > newest.mtimeMs) newest = { mtimeMs: st.mtimeMs, file };
    if (st.isDirectory()) for (const name of readdirSync(file)) visit(path.join(file, name));
  };
  for (const input of inputs) visit(path.join(repo, input));
  return newest;
}

/** Why dist/ under `repo` must be built, or null when it is up to date. */
export function staleReason(repo, inputs = BUILD_INPUTS) {
  let stamp;
  try {
    stamp = statSync(path.join(repo, STAMP)).mtimeMs;
  } catch (err) {
    if (err.code === 'ENOENT') return `${STAMP} is missing (never built)`;
    throw err;
  }
  const newest = newestInput(repo, inputs);
  return newest.mtimeMs > stamp ? `${path.relative(repo, newest.file)} is newer than the last build` : null;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } }, strict: true });
  const repo = path.resolve(import.meta.dirname, '..');
  const reason = staleReason(repo);
  if (values.check) {
    console.log(reason ? `stale: ${reason}` : 'fresh');
    process.exit(reason ? 1 : 0);
  }
  if (reason) {
    // The stamp then carries the time the build started: a source saved while it ran is newer, so the
    // next start builds again rather than serve a build that may not hold that change.
    const started = new Date();
    console.error(`build: ${reason}; running npm run build`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const r = spawnSync(npm, ['run', 'build'], { cwd: repo, stdio: 'inherit' });
    if (r.error) throw r.error;
    if (r.status !== 0) process.exit(r.status ?? 1);
    utimesSync(path.join(repo, STAMP), started, started);
  }
}
