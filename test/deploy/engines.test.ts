// The Node versions package.json's `engines` names are the ones every dependency takes, both ways the package
// is installed:
// - `npm ci` from the lockfile (issue 26): npm's own engine check, in a dry run over a copy of the package
//   files, and each locked package's `engines` read against the oldest Node named;
// - the published package, which carries no lockfile (issue 36): npm resolves its dependencies' ranges
//   afresh and applies none of our `overrides`, so content-disposition 3 and cookie 2 (Node >= 22 only) came
//   in through @fastify/static and light-my-request. package.json now pins those two to releases whose
//   dependencies run on Node 20; here npm resolves the production dependencies as a consumer's install does,
//   and every package's `engines` must cover the whole range the package names.
// The second needs the registry's metadata (or npm's cache of it: --prefer-offline).
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import semver from 'semver';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

interface Lockfile {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
}
interface PackageJson {
  engines: { node: string };
  dependencies: Record<string, string>;
  [key: string]: unknown;
}

const packageJson = async () => JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')) as PackageJson;

async function npmIn(cwd: string, args: string[]): Promise<string> {
  const { stdout, stderr } = await promisify(execFile)(npm, [...args, '--no-audit', '--no-fund'], { cwd, maxBuffer: 16 * 1024 * 1024 });
  return `${stdout}${stderr}`;
}

/** The packages of a lockfile whose `engines.node` `covers` refuses, as "name@version: node <range>". */
function outsideRange(lock: Lockfile, covers: (nodeRange: string) => boolean): string[] {
  const out: string[] = [];
  for (const [where, entry] of Object.entries(lock.packages)) {
    const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (where === '' || !node) continue;
    if (!covers(node)) out.push(`${where.replace(/^.*node_modules\//, '')}@${entry.version}: node ${node}`);
  }
  return out;
}

describe('npm ci on Node 20', () => {
  it('prints no EBADENGINE warning, and every locked package takes the oldest Node named', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-engines-'));
    dirs.push(dir);
    for (const f of ['package.json', 'package-lock.json']) await copyFile(path.join(REPO, f), path.join(dir, f));
    expect(await npmIn(dir, ['ci', '--dry-run', '--ignore-scripts'])).not.toContain('EBADENGINE');
    // The Node running the tests may be newer than the oldest one engines names: read the lockfile against that one.
    const oldest = semver.minVersion((await packageJson()).engines.node)!.version;
    const lock = JSON.parse(await readFile(path.join(dir, 'package-lock.json'), 'utf8')) as Lockfile;
    expect(outsideRange(lock, (node) => semver.satisfies(oldest, node))).toEqual([]);
  });
});

describe('the published package, installed without a lockfile', () => {
  it('resolves to production dependencies that take every Node version engines names', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-engines-nolock-'));
    dirs.push(dir);
    // What a consumer's npm reads of the package: its dependencies and engines; no dev dependencies, no overrides.
    const pkg = await packageJson();
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, engines: pkg.engines, dependencies: pkg.dependencies }));
    const output = await npmIn(dir, ['install', '--package-lock-only', '--ignore-scripts', '--prefer-offline']);
    expect(output).not.toContain('EBADENGINE');
    const lock = JSON.parse(await readFile(path.join(dir, 'package-lock.json'), 'utf8')) as Lockfile;
    expect(outsideRange(lock, (node) => semver.subset(pkg.engines.node, node))).toEqual([]);
  });

  it('the checker refuses a dependency that leaves out part of the range', () => {
    const lock: Lockfile = { packages: { '': {}, 'node_modules/a': { version: '1.0.0', engines: { node: '>=22' } }, 'node_modules/b': { version: '2.0.0', engines: { node: '>=18' } } } };
    expect(outsideRange(lock, (node) => semver.subset('^20.19.0 || >=22', node))).toEqual(['a@1.0.0: node >=22']);
  });
});
