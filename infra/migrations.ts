/**
 * Migrations on every deployment, before new code serves traffic.
 *
 * Mechanism: a `triggers.Trigger` on the Migrate function (functions/migrate.ts, the offline runner of
 * lib/db/migrator.ts with prisma/migrations copied into its asset). CloudFormation invokes it synchronously and
 * fails the deployment if it throws; every other function, and with it each event source mapping and API
 * integration, depends on the trigger, so no new handler code is deployed until migrations are applied.
 *
 * When it runs: on EVERY deployment. The function first runs the database preflight (lib/db/preflight.ts), which
 * must see each deploy even when no migration is pending, so the trigger carries a `DeployRun` property that is
 * new at every synth (or the `deployRun` context value, for a pipeline that names its runs): CloudFormation then
 * updates the trigger, and an update invokes the function (`ExecuteOnHandlerChange`). The function's version
 * changes as before with its code and with `MIGRATIONS_HASH` (a hash of prisma/migrations) in its configuration,
 * so a changed migration is always shipped in a new version. The Trigger is the construct made for this and needs
 * no handler of our own for Create/Update/Delete events. The price: `cdk diff` always shows the trigger changed.
 *
 * Consequences: migrations run while the previous code still serves, and a failed deployment rolls the code
 * back but not the schema — so every migration must be backward compatible (expand first, contract in a later
 * release).
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CfnResource, CustomResource, Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Trigger } from 'aws-cdk-lib/triggers';
import type { Construct } from 'constructs';
import { PROJECT_ROOT } from './bundling.ts';

export const MIGRATIONS_SOURCE_DIR = path.join(PROJECT_ROOT, 'prisma', 'migrations');

/** SHA-256 over every file's relative path and content in `dir`, in sorted order. */
export function migrationsHash(dir = MIGRATIONS_SOURCE_DIR): string {
  const hash = createHash('sha256');
  const files = (readdirSync(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(path.join(dir, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

export interface DeployTimeMigrationsProps {
  migrate: lambda.Function;
  /** What must exist before migrating: the network, the database, the proxy and their security rules. */
  after: Construct[];
  /** What must not change before migrations are applied (every other function). */
  before: Construct[];
  /** Retention of the log group of the Trigger's provider function (CDK's own, which makes none). */
  logRetention: logs.RetentionDays;
  production: boolean;
}

/** Context key that names this deployment's run of the trigger; unset, each synth makes a new one. */
export const DEPLOY_RUN_CONTEXT = 'deployRun';

/** Construct id CDK gives the Trigger's singleton provider in the stack (aws-cdk-lib/triggers). */
const TRIGGER_PROVIDER_ID = 'AWSCDK.TriggerCustomResourceProviderCustomResourceProvider';

/** The trigger that runs `migrate` during deployment (see the module comment). */
export function deployTimeMigrations(scope: Construct, props: DeployTimeMigrationsProps): Trigger {
  const trigger = new Trigger(scope, 'MigrateOnDeploy', {
    handler: props.migrate,
    // Past the function's own timeout, so a slow migration fails as the function's error, not the invoke's.
    timeout: props.migrate.timeout ? props.migrate.timeout.plus(Duration.minutes(1)) : Duration.minutes(11),
    executeOnHandlerChange: true,
    executeAfter: props.after,
    executeBefore: props.before,
  });
  trigger.node.addDependency(providerLogGroup(scope, props));
  // A property new at every synth: every deployment updates the trigger, and so runs the preflight.
  const resource = (trigger.node.defaultChild as CustomResource).node.defaultChild as CfnResource;
  resource.addPropertyOverride('DeployRun', String(scope.node.tryGetContext(DEPLOY_RUN_CONTEXT) ?? randomUUID()));
  return trigger;
}

/**
 * The log group `/aws/lambda/<provider>` of the Trigger's provider function, with the stage's retention.
 * Created before the trigger runs (the trigger depends on it), or Lambda would create it without expiry first.
 */
function providerLogGroup(scope: Construct, props: DeployTimeMigrationsProps): logs.LogGroup {
  const provider = Stack.of(scope).node.findChild(TRIGGER_PROVIDER_ID);
  const handler = provider.node.findChild('Handler') as CfnResource;
  return new logs.LogGroup(scope, 'MigrateOnDeployProviderLogs', {
    logGroupName: Fn.join('', ['/aws/lambda/', handler.ref]),
    retention: props.logRetention,
    removalPolicy: props.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
  });
}
