// `npm run test:container`: the container image test alone (not part of `npm test`, which excludes
// test/container). Building the image can take minutes on a cold cache, hence the long hook timeout.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/container/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 20 * 60_000,
    pool: 'forks',
    // One container at a time, and the build output stays readable.
    fileParallelism: false,
  },
});
