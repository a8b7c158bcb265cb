import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

// Suites that drive several real processes at once (writers killed mid-write, racing swappers, replicas
// sharing a Redis, approval stores across processes): a project of their own, so that `vitest run
// --project processes` runs them alone; `npm test` runs both projects in one pool, at the same time.
const PROCESS_SUITES = [
  'test/durability/crash.test.ts',
  'test/durability/concurrency.test.ts',
  'test/security/race.test.ts',
  'test/policy/approvals-processes.test.ts',
  'test/replicas/**/*.test.ts',
  'test/approvals/replicas.test.ts',
  'test/checkpoints/rewind-crash.test.ts',
];

const shared = { testTimeout: 60_000, hookTimeout: 60_000, pool: 'forks' } as const;

export default defineConfig({
  test: {
    // Builds dist/ once when stale: the tests that start the service or the CLI as a process run it compiled.
    globalSetup: ['test/global-setup.ts'],
    // Most files wait on child processes, sockets and the disk rather than the CPU, so one more worker than
    // cores (Vitest's default is one fewer: a single worker on a 2-core machine). `--maxWorkers` overrides.
    maxWorkers: os.availableParallelism() + 1,
    projects: [
      {
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          // The container test builds and runs the image: `npm run test:container` (test/container/vitest.config.ts).
          exclude: [...configDefaults.exclude, 'test/container/**', ...PROCESS_SUITES],
          // Files share a worker's module graph instead of loading the app's ~650 modules again each: that
          // loading was most of the run (40 files: 161 s of imports isolated, 16 s shared). Tests build
          // their own apps over their own temporary workspaces, and restore the timers and spies they fake.
          isolate: false,
          ...shared,
        },
      },
      { test: { name: 'processes', include: PROCESS_SUITES, ...shared } },
    ],
  },
});
