// `npm test` runs this first (pretest). Suites need Debian programs besides Node: redis-server (a real
// Redis for the shared rate limit and the replicas), yamllint (the chart's lint rules, helm/.yamllint,
// which no npm package implements) and chromium (the approval console in a real browser, driven by
// puppeteer-core, which downloads no browser of its own). Installs them where it can (root with apt-get); otherwise fails at
// once, naming what is missing and the command that installs it, so that no suite skips or fails obscurely.
// TOOLGATE_TEST_NO_INSTALL=1 only checks.
import { spawnSync } from 'node:child_process';

const NEEDED = [
  { program: 'redis-server', pkg: 'redis-server', usedBy: 'test/ops/rate-limit.test.ts, test/replicas/replicas.test.ts' },
  { program: 'yamllint', pkg: 'yamllint', usedBy: 'test/helm/chart.test.ts' },
  { program: 'chromium', pkg: 'chromium', usedBy: 'test/console/console.test.ts' },
  // run_command's sandbox (docs/run-command.md): bubblewrap always, slirp4netns and nft for TOOLGATE_EXEC_NETWORK.
  { program: 'bwrap', pkg: 'bubblewrap', usedBy: 'test/exec/*, test/security/run-command-hostile.test.ts' },
  { program: 'slirp4netns', pkg: 'slirp4netns', usedBy: 'test/exec/run-command-network.test.ts' },
  { program: 'nft', pkg: 'nftables', usedBy: 'test/exec/run-command-network.test.ts' },
];

const runs = (program) => {
  const r = spawnSync(program, ['--version'], { stdio: 'ignore' });
  return !r.error && r.status === 0;
};

let missing = NEEDED.filter((n) => !runs(n.program));
if (missing.length === 0) process.exit(0);

const root = process.getuid?.() === 0;
const apt = runs('apt-get');
const packages = missing.map((n) => n.pkg);
const command = `${root ? '' : 'sudo '}apt-get update && ${root ? '' : 'sudo '}apt-get install -y --no-install-recommends ${packages.join(' ')}`;

if (root && apt && process.env.TOOLGATE_TEST_NO_INSTALL !== '1') {
  console.error(`test-deps: installing ${packages.join(', ')} (Debian packages the test suites need): ${command}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (update.status === 0) spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { stdio: ['ignore', 'ignore', 'inherit'], env });
  missing = missing.filter((n) => !runs(n.program));
  if (missing.length === 0) process.exit(0);
}

const lines = missing.map((n) => `  ${n.program} (Debian package ${n.pkg}), used by ${n.usedBy}`);
const how = apt ? `Install with:\n  ${command}` : `Install them with the system's package manager (on Debian: ${command}).`;
console.error(`npm test: missing programs the tests need:\n${lines.join('\n')}\n${how}`);
process.exit(1);
