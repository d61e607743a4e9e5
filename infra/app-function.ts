/**
 * The one way the stack makes a Lambda: NodejsFunction, Node 24 on arm64, bundled locally by esbuild with
 * the settings of ./bundling.ts (no Docker), in the VPC's private subnets (on AWS), with its own log group,
 * source maps enabled at run time, active X-Ray tracing, and the database connection settings every function shares.
 */
import path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { LAMBDA_ENTRIES, PROJECT_ROOT, lambdaBundling, type LambdaName } from './bundling.ts';
import { LAMBDA_MANAGED_POLICY_FINDINGS, acknowledge } from './acknowledge.ts';

/** How functions reach the database: its variables, the secret they read, the network they run in. */
export interface DatabaseAccess {
  environment: Record<string, string>;
  /** Read at cold start by lib/config/database-secret.ts; absent when DATABASE_URL is given directly. */
  secret?: ISecret;
  /** Absent on LocalStack, where functions run outside any VPC. */
  network?: { vpc: ec2.IVpc; securityGroup: ec2.ISecurityGroup };
}

export interface FunctionContext {
  stage: string;
  production: boolean;
  logRetentionDays: number;
  database: DatabaseAccess;
}

export interface AppFunctionProps {
  timeout: Duration;
  memoryMb?: number;
  environment?: Record<string, string>;
}

/** Creates the function `name` of {@link LAMBDA_ENTRIES}, e.g. `ConsumerInteractive`. */
export function createAppFunction(scope: Construct, name: LambdaName, ctx: FunctionContext, props: AppFunctionProps): NodejsFunction {
  const source = LAMBDA_ENTRIES[name];
  const logGroup = new logs.LogGroup(scope, `${name}Logs`, {
    retention: retentionOf(ctx.logRetentionDays),
    removalPolicy: ctx.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
  });
  const fn = new NodejsFunction(scope, name, {
    entry: path.join(PROJECT_ROOT, source.entry),
    handler: 'handler',
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: props.memoryMb ?? 512,
    timeout: props.timeout,
    bundling: lambdaBundling({ withMigrations: 'withMigrations' in source && source.withMigrations }),
    environment: { NODE_OPTIONS: '--enable-source-maps', STAGE: ctx.stage, ...ctx.database.environment, ...props.environment },
    ...(ctx.database.network ? {
      vpc: ctx.database.network.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      securityGroups: [ctx.database.network.securityGroup],
    } : {}),
    logGroup,
    // X-Ray: Lambda records each (sampled) invocation. No Powertools Tracer in the code: see docs/deploy.md "Alarms".
    tracing: lambda.Tracing.ACTIVE,
    description: `ai-jobs ${ctx.stage}: ${source.entry}`,
  });
  acknowledgeLambdaRole(fn.role!);
  return fn;
}

/** cdk-nag findings every function role has, and why they are accepted. */
function acknowledgeLambdaRole(role: Construct): void {
  acknowledge(role, LAMBDA_MANAGED_POLICY_FINDINGS.basic,
    'AWS-maintained policy limited to creating log streams and putting log events; the function logs to its own group');
  acknowledge(role, LAMBDA_MANAGED_POLICY_FINDINGS.vpc,
    'AWS-maintained policy for the ENIs a function in a VPC needs; a hand-written copy would only drift from it');
  acknowledge(role, 'AwsSolutions-IAM5[Resource::*]',
    'X-Ray (active tracing): xray:PutTraceSegments and PutTelemetryRecords support no resource-level permissions');
}

/** CloudWatch accepts only some retention periods: the longest one not above `days`. */
export function retentionOf(days: number): logs.RetentionDays {
  const allowed = Object.values(logs.RetentionDays).filter((v): v is number => typeof v === 'number' && v > 0 && v <= days);
  return (allowed.length ? Math.max(...allowed) : logs.RetentionDays.ONE_DAY) as logs.RetentionDays;
}
