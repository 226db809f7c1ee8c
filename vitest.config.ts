import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Time limits guard against hangs only, never speed (speed lives in bench/): sized for a
    // 2-core machine at load average ~30-45, where the first Docker validation test (building its
    // env image) took 26 minutes. Do not give single tests a lower limit.
    testTimeout: 3_600_000,
    hookTimeout: 3_600_000,
    pool: 'forks',
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
