import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** Test workers; each gets its own database (see test/setup/global-setup.ts). */
export const TEST_WORKERS = Number(process.env.TEST_WORKERS ?? 3);

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts', 'lib/**/*.test.ts'],
    globalSetup: ['test/setup/global-setup.ts'],
    setupFiles: ['test/setup/worker-setup.ts'],
    pool: 'forks',
    maxWorkers: TEST_WORKERS,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    sequence: { hooks: 'stack' },
  },
});
