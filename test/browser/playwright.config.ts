/**
 * Browser tests of the admin console (`npm run test:browser`): Playwright's runner driving Debian's
 * Chromium headless (CHROMIUM_PATH, default /usr/bin/chromium; nothing is downloaded) against the real
 * local runtime that global-setup.ts starts as `npm start` would. One worker: the specs share one database
 * and compare the pages with it. Screenshots of every page go to .scratch/console-screens/ on every run.
 */
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.ts',
  globalSetup: './global-setup.ts',
  outputDir: '../../.scratch/playwright',
  workers: 1,
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  // A shared 2-core machine: generous deadlines, and every wait is on a condition, never a sleep.
  timeout: 90_000,
  expect: { timeout: 20_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] },
    actionTimeout: 20_000,
    navigationTimeout: 30_000,
    trace: 'retain-on-failure',
  },
});
