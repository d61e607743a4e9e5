/**
 * `npx cdk synth` as CI runs it: offline, without AWS credentials, with real esbuild bundling (no Docker).
 * Proves the app starts from cdk.json, every bundle builds, and the migration asset carries the migrations.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_ENTRIES, PROJECT_ROOT } from '../../infra/bundling.ts';

const outDir = mkdtempSync(path.join(tmpdir(), 'cdk-synth-'));
let result: ReturnType<typeof spawnSync>;
let elapsedMs = 0;

beforeAll(() => {
  // No credentials, no endpoints, no instance metadata: what a CI runner without AWS access has.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && k !== 'CDK_DEFAULT_ACCOUNT'));
  const started = Date.now();
  result = spawnSync('npx', ['cdk', 'synth', '--quiet', '--output', outDir], {
    cwd: PROJECT_ROOT,
    env: { ...env, CDK_DISABLE_CLI_TELEMETRY: 'true', AWS_EC2_METADATA_DISABLED: 'true', CI: 'true' },
    encoding: 'utf8',
    timeout: 540_000,
  });
  elapsedMs = Date.now() - started;
}, 600_000);

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('cdk synth (CLI, with bundling)', () => {
  it('succeeds offline without AWS credentials', () => {
    expect(result.status, String(result.stderr).slice(-3000)).toBe(0);
    expect(existsSync(path.join(outDir, 'AiJobs-dev.template.json'))).toBe(true);
    console.info(`cdk synth with bundling took ${elapsedMs} ms`);
  });

  it('bundles every function into an ESM index.mjs with its source map, and ships the migrations with Migrate', () => {
    const template = JSON.parse(readFileSync(path.join(outDir, 'AiJobs-dev.template.json'), 'utf8'));
    const functions = Object.entries<any>(template.Resources)
      .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && !id.startsWith('AWSCDK') && !id.startsWith('CustomCDKBucketDeployment'));
    expect(functions).toHaveLength(Object.keys(LAMBDA_ENTRIES).length);
    for (const [id, fn] of functions) {
      const assetDir = path.join(outDir, `asset.${String(fn.Properties.Code.S3Key).replace(/\.zip$/, '')}`);
      const files = readdirSync(assetDir);
      expect(files, id).toEqual(expect.arrayContaining(['index.mjs', 'index.mjs.map']));
      expect(readFileSync(path.join(assetDir, 'index.mjs'), 'utf8').slice(0, 200), id).toContain('createRequire');
      if (id.startsWith('Migrate')) {
        const migrations = readdirSync(path.join(assetDir, 'migrations'));
        expect(migrations).toEqual(readdirSync(path.join(PROJECT_ROOT, 'prisma', 'migrations')));
      } else {
        expect(files, id).not.toContain('migrations');
      }
    }
  });
});
