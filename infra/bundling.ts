/**
 * How every Lambda is bundled: one set of esbuild options that the CDK stack (through NodejsFunction) and the
 * cold-start benchmark (bench/cold.ts, through esbuild's API) both read, so the bench measures what deploys.
 *
 * Decisions:
 * - ESM (`index.mjs`) for Node 24, with the `createRequire` banner: CommonJS dependencies bundled into an ESM
 *   file still call `require` for Node built-ins.
 * - `mainFields: module, main`: the AWS SDK and Powertools ship ES modules; esbuild tree-shakes them better
 *   than their CommonJS builds.
 * - The AWS SDK is BUNDLED (`externalModules: []`), not taken from the runtime: the deployed code then runs the
 *   exact SDK versions the tests ran (the runtime's copy changes under us, without notice), at a cost in size
 *   that bench/cold.ts reports (well within the 2 MB budget).
 * - Everything is bundled but iconv-lite's lazily loaded CJK tables (`./tables/*.json`): the mariadb driver
 *   only needs them for non-UTF-8 connection charsets, and we always connect in utf8mb4.
 * - `keepNames`: error classes set `this.name = new.target.name`; minified names would make logs unreadable.
 * - Source maps on, without sources content (stack traces map to file:line; the asset stays small), and
 *   `NODE_OPTIONS=--enable-source-maps` in every function's environment.
 */
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { fileURLToPath } from 'node:url';

/** The repository root (NodejsFunction's project root; entries and prisma/migrations are relative to it). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Lets bundled CommonJS code `require` Node built-ins from an ES module. */
export const CREATE_REQUIRE_BANNER =
  "import { createRequire as __cjsCreateRequire } from 'node:module'; const require = __cjsCreateRequire(import.meta.url);";

/** Folder, inside a function's asset, holding prisma/migrations (the migrate function's `MIGRATIONS_DIR`). */
export const BUNDLED_MIGRATIONS_DIR = 'migrations';

/** The esbuild settings shared by the stack and the benchmark, in esbuild's own terms. */
export const ESBUILD_SETTINGS = {
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minify: true,
  keepNames: true,
  sourcemap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: CREATE_REQUIRE_BANNER,
  // iconv-lite's CJK code tables (~480 KB, lazily `require`d only for those charsets; we speak utf8mb4 only),
  // pulled in through the mariadb driver: left out of the bundle.
  external: ['./tables/*.json'] as string[],
  outfileName: 'index.mjs',
} as const;

/** NodejsFunction `bundling` props equal to {@link ESBUILD_SETTINGS}; `withMigrations` copies prisma/migrations in. */
export function lambdaBundling(options: { withMigrations?: boolean } = {}): BundlingOptions {
  const s = ESBUILD_SETTINGS;
  return {
    format: OutputFormat.ESM,
    target: s.target,
    minify: s.minify,
    keepNames: s.keepNames,
    sourceMap: s.sourcemap,
    sourcesContent: s.sourcesContent,
    mainFields: [...s.mainFields],
    banner: s.banner,
    externalModules: [...s.external],
    ...(options.withMigrations ? { commandHooks: copyMigrationsHook() } : {}),
  };
}

function copyMigrationsHook(): NonNullable<BundlingOptions['commandHooks']> {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [
      `cp -R "${inputDir}/prisma/migrations" "${outputDir}/${BUNDLED_MIGRATIONS_DIR}"`,
    ],
  };
}

/** A Lambda's source: its entry file (relative to {@link PROJECT_ROOT}) and what its asset carries besides. */
export interface LambdaEntry {
  entry: string;
  withMigrations?: boolean;
}

/** Every function the stack deploys, by construct id; the benchmark bundles the same list. */
export const LAMBDA_ENTRIES = {
  ApiUser: { entry: 'functions/api-user.ts' },
  ApiAdmin: { entry: 'functions/api-admin.ts' },
  ApiStream: { entry: 'functions/api-stream.ts' },
  ConsumerInteractive: { entry: 'functions/consumer-interactive.ts' },
  ConsumerBackground: { entry: 'functions/consumer-background.ts' },
  Dispatcher: { entry: 'functions/dispatcher.ts' },
  Reaper: { entry: 'functions/reaper.ts' },
  Maintenance: { entry: 'functions/maintenance.ts' },
  Migrate: { entry: 'functions/migrate.ts', withMigrations: true },
} as const satisfies Record<string, LambdaEntry>;

export type LambdaName = keyof typeof LAMBDA_ENTRIES;
