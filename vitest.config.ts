import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The container test builds and runs the image: `npm run test:container` (test/container/vitest.config.ts).
    exclude: [...configDefaults.exclude, 'test/container/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
