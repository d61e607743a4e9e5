/**
 * Vite config of the admin console (Preact, built to console/dist, served under /console/). Used by
 * console/scripts/build.ts (`npm run console:build`, also on `npm start` when the build is stale).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // Always the production build, also when the caller's NODE_ENV is `test` (vitest sets it, and `npm start`
  // run from a test inherits it): JSX would otherwise be compiled in development form, with source locations.
  mode: 'production',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact', development: false } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
});
