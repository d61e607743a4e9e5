/**
 * Bundles a Lambda entry as the stack does (esbuild with infra/bundling.ts's settings, the same asset layout:
 * `index.mjs` and its source map, prisma/migrations copied in where the function carries them), for the
 * benches that run deployed code outside AWS (bench/cold.ts, bench/memory.ts).
 */
import { cpSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { BUNDLED_MIGRATIONS_DIR, ESBUILD_SETTINGS, PROJECT_ROOT } from '../infra/bundling.ts';

/** Bundles `entry` into `dir`; resolves with `dir`. */
export async function bundleLambda(entry: string, dir: string, options: { withMigrations?: boolean } = {}): Promise<string> {
  const s = ESBUILD_SETTINGS;
  await build({
    entryPoints: [entry], bundle: true, outfile: path.join(dir, s.outfileName), logLevel: 'error',
    platform: s.platform, format: s.format, target: s.target, minify: s.minify, keepNames: s.keepNames,
    sourcemap: s.sourcemap, sourcesContent: s.sourcesContent, mainFields: [...s.mainFields],
    banner: { js: s.banner }, external: [...s.external],
  });
  if (options.withMigrations) cpSync(path.join(PROJECT_ROOT, 'prisma', 'migrations'), path.join(dir, BUNDLED_MIGRATIONS_DIR), { recursive: true });
  return dir;
}
