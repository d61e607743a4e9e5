/**
 * How code gets deployed: bundling settings shared by the stack and bench/cold.ts, migrations applied by a
 * trigger before any other function changes, and the context settings that shape a stage.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { beforeAll, describe, expect, it } from 'vitest';
import { CREATE_REQUIRE_BANNER, ESBUILD_SETTINGS, lambdaBundling } from '../../infra/bundling.ts';
import { loadStageConfig, StageConfigError } from '../../infra/config.ts';
import { DEPLOY_RUN_CONTEXT, MIGRATIONS_SOURCE_DIR, migrationsHash } from '../../infra/migrations.ts';
import { CDK_JSON, logicalIdOf, synthStack, type Synthesized } from './synth.ts';

let dev: Synthesized;
beforeAll(() => {
  dev = synthStack();
}, 600_000);

describe('bundling', () => {
  it('bundles ESM for node24, minified with names kept, source maps on, the createRequire banner, the AWS SDK included (only iconv-lite CJK tables left out)', () => {
    const b = lambdaBundling();
    expect(b).toMatchObject({
      format: OutputFormat.ESM, target: 'node24', minify: true, keepNames: true, sourceMap: true,
      banner: CREATE_REQUIRE_BANNER, externalModules: ['./tables/*.json'],
    });
    expect(b.commandHooks).toBeUndefined();
    expect(ESBUILD_SETTINGS).toMatchObject({ format: 'esm', target: 'node24', sourcemap: true, banner: CREATE_REQUIRE_BANNER });
    expect(CREATE_REQUIRE_BANNER).toMatch(/createRequire.*import\.meta\.url/);
  });

  it('copies prisma/migrations into the migration function asset, where MIGRATIONS_DIR points', () => {
    const hooks = lambdaBundling({ withMigrations: true }).commandHooks!;
    expect(hooks.afterBundling('/in', '/out')).toEqual(['cp -R "/in/prisma/migrations" "/out/migrations"']);
    const migrate = dev.template.toJSON().Resources[logicalIdOf(dev.stack.functions.migrate)].Properties;
    expect(migrate.Environment.Variables.MIGRATIONS_DIR).toBe('/var/task/migrations');
  });
});

describe('deploy-time migrations', () => {
  it('invokes the migration function synchronously on deploy, via its current version', () => {
    const resources = dev.template.toJSON().Resources;
    const trigger = resources.MigrateOnDeploy;
    expect(trigger.Type).toBe('Custom::Trigger');
    expect(trigger.Properties).toMatchObject({ InvocationType: 'RequestResponse', ExecuteOnHandlerChange: true });
    const version = resources[trigger.Properties.HandlerArn.Ref];
    expect(version.Type).toBe('AWS::Lambda::Version');
    expect(version.Properties.FunctionName).toEqual({ Ref: logicalIdOf(dev.stack.functions.migrate) });
    expect(Number(trigger.Properties.Timeout)).toBeGreaterThan(dev.stack.functions.migrate.timeout!.toMilliseconds());
  });

  it('runs after the database is reachable and before any other function, its event source or its integration changes', () => {
    const resources = dev.template.toJSON().Resources;
    const dependsOn = (id: string): string[] => resources[id].DependsOn ?? [];
    const f = dev.stack.functions;
    for (const fn of [f.apiUser, f.apiAdmin, f.consumers.interactive, f.consumers.background, f.dispatcher, f.reaper]) {
      expect(dependsOn(logicalIdOf(fn)), fn.node.id).toContain('MigrateOnDeploy');
    }
    for (const [id, r] of Object.entries<any>(resources)) {
      if (r.Type === 'AWS::Lambda::EventSourceMapping') expect(dependsOn(id)).toContain('MigrateOnDeploy');
    }
    const data = dev.stack.node.findChild('Data');
    const proxy = data.node.findChild('Cluster').node.findChild('Proxy');
    const writer = data.node.findChild('Cluster').node.findChild('Writer');
    expect(dependsOn('MigrateOnDeploy')).toEqual(expect.arrayContaining([logicalIdOf(proxy), logicalIdOf(writer)]));
  });

  it('runs on every deployment, also with no migration pending: the trigger carries a run id new at each synth (or the deployRun context)', () => {
    const runOf = (s: Synthesized) => s.template.toJSON().Resources.MigrateOnDeploy.Properties.DeployRun as unknown;
    expect(runOf(dev)).toMatch(/^[0-9a-f-]{36}$/);
    const again = synthStack({ [DEPLOY_RUN_CONTEXT]: 'pipeline-run-42' });
    expect(runOf(again)).toBe('pipeline-run-42');
    // Nothing else differs between two synths of the same code: the function's version, and so what it runs, stays.
    const other = synthStack({ [DEPLOY_RUN_CONTEXT]: 'pipeline-run-43' });
    const versionOf = (s: Synthesized) => s.template.toJSON().Resources.MigrateOnDeploy.Properties.HandlerArn as unknown;
    expect(runOf(other)).toBe('pipeline-run-43');
    expect(versionOf(other)).toEqual(versionOf(again));
  }, 300_000); // two more synths, each bundling every function: minutes on a loaded machine

  it('re-runs when a migration changes: the hash of prisma/migrations is part of the function configuration', () => {
    const migrate = dev.template.toJSON().Resources[logicalIdOf(dev.stack.functions.migrate)].Properties;
    expect(migrate.Environment.Variables.MIGRATIONS_HASH).toBe(migrationsHash());
    const copy = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    try {
      cpSync(MIGRATIONS_SOURCE_DIR, copy, { recursive: true });
      expect(migrationsHash(copy)).toBe(migrationsHash());
      mkdirSync(path.join(copy, '29990101000000_next'));
      writeFileSync(path.join(copy, '29990101000000_next', 'migration.sql'), 'SELECT 1;');
      expect(migrationsHash(copy)).not.toBe(migrationsHash());
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe('stage configuration', () => {
  const config = (context: Record<string, unknown>) => loadStageConfig(new App({ context: { ...CDK_JSON.context, ...context } }).node);

  it('defaults to dev from cdk.json, and reads a stage block with top-level keys winning', () => {
    expect(config({})).toMatchObject({ stage: 'dev', production: false, natGateways: 1, jwtAudience: ['ai-jobs-api'] });
    const prod = config({ stage: 'prod', jwtIssuer: 'https://login.example.org/', backgroundConcurrency: '3', jwtAudience: 'web,mobile' });
    expect(prod).toMatchObject({ stage: 'prod', production: true, natGateways: 2, jwtAudience: ['web', 'mobile'] });
    expect(prod.consumers.background.maxConcurrency).toBe(3);
    expect(prod.consumers.interactive.maxConcurrency).toBe(50);
  });

  it("keeps every setting in cdk.json under stages.<stage>: a top-level one would override each stage's", () => {
    const topLevel = Object.keys(CDK_JSON.context).filter((key) => !key.includes(':'));
    expect(topLevel.sort()).toEqual(['stage', 'stages']);
  });

  it("uses a stage's own JWT issuer, and refuses to synthesize a stage that has none", () => {
    const stages = CDK_JSON.context.stages as Record<string, Record<string, unknown>>;
    const withIssuer = { ...stages, prod: { ...stages.prod, jwtIssuer: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Abc' } };
    expect(config({ stage: 'prod', stages: withIssuer }).jwtIssuer).toBe('https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Abc');
    expect(config({}).jwtIssuer).toBe('https://auth.example.com/');
    expect(() => config({ stage: 'prod' })).toThrow('context "jwtIssuer" must be set: set stages.prod.jwtIssuer in cdk.json, or pass -c jwtIssuer=https://…');
    expect(() => config({ stage: 'qa' })).toThrow(/stages\.qa\.jwtIssuer/);
  });

  it('refuses values out of range or malformed, naming the context key', () => {
    expect(() => config({ backgroundConcurrency: 1 })).toThrow(StageConfigError);
    expect(() => config({ interactiveBatchSize: 11 })).toThrow(/interactiveBatchSize/);
    expect(() => config({ jwtIssuer: 'http://insecure.example.com' })).toThrow(/jwtIssuer/);
    expect(() => config({ stage: 'Prod' })).toThrow(/stage/);
    expect(() => config({ natGateways: 0 })).toThrow(/natGateways/);
    expect(() => config({ target: 'gcp' })).toThrow(/target/);
    expect(() => config({ mockAiBaseUrl: 'http://127.0.0.1:4010' })).toThrow(/mockAiBaseUrl/);
  });
});
