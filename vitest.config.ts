import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Time limits guard against hangs only, never speed (speed lives in bench/): sized for a
    // 2-core machine at load average ~30, where one Docker validation test took over 10 minutes.
    // Do not give single tests a lower limit; a test that needs more says so with a higher one.
    testTimeout: 1_800_000,
    hookTimeout: 1_800_000,
    pool: 'forks',
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
