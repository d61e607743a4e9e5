/**
 * The synthesized template of `AiJobs-<stage>` holds every resource of the deployment with its key properties.
 * Bundling is skipped (test/infra/synth.ts); test/infra/synth-cli.test.ts runs the real `cdk synth`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROUTES, STREAM_ROUTES, USER_ROUTES, routeKeyOf } from '../../lib/api/routes.ts';
import { READ_RESERVE_ENV, STREAM_FUNCTION_TIMEOUT_SECONDS } from '../../lib/stream/long-poll.ts';
import { LAMBDA_ENTRIES } from '../../infra/bundling.ts';
import { PLATFORM_SECRET_PLACEHOLDER_KEY, parsePlatformSecret } from '../../lib/credentials/platform-secret.ts';
import { logicalIdOf, referencedId, synthStack, type Synthesized } from './synth.ts';

type Resource = { Properties: Record<string, any>; DependsOn?: string[]; DeletionPolicy?: string };
const resources = (s: Synthesized, type: string) => Object.entries(s.template.findResources(type)) as [string, Resource][];
const only = (s: Synthesized, type: string): [string, Resource] => {
  const found = resources(s, type);
  expect(found, type).toHaveLength(1);
  return found[0]!;
};

let dev: Synthesized;
let prod: Synthesized;
beforeAll(() => {
  dev = synthStack();
  prod = synthStack({ stage: 'prod', jwtIssuer: 'https://login.example.org/', alarmEmail: 'ops@example.org' });
}, 600_000);

describe('database', () => {
  it('is an encrypted Aurora MySQL 3 Serverless v2 cluster in isolated subnets with an RDS-generated secret', () => {
    const [, cluster] = only(dev, 'AWS::RDS::DBCluster');
    expect(cluster.Properties).toMatchObject({
      Engine: 'aurora-mysql', StorageEncrypted: true, DatabaseName: 'ai_jobs',
      ServerlessV2ScalingConfiguration: { MinCapacity: 0.5, MaxCapacity: 4 },
    });
    expect(cluster.Properties.EngineVersion).toMatch(/^8\.0\.mysql_aurora\.3\./);
    expect(JSON.stringify(cluster.Properties.MasterUserPassword)).toContain('resolve:secretsmanager');
    dev.template.resourceCountIs('AWS::RDS::DBInstance', 1);
    dev.template.hasResourceProperties('AWS::RDS::DBInstance', { DBInstanceClass: 'db.serverless' });
    prod.template.resourceCountIs('AWS::RDS::DBInstance', 2);
  });

  it('sits behind an RDS Proxy that requires TLS and authenticates with the cluster secret', () => {
    const [, proxy] = only(dev, 'AWS::RDS::DBProxy');
    expect(proxy.Properties).toMatchObject({ EngineFamily: 'MYSQL', RequireTLS: true, DBProxyName: 'ai-jobs-dev' });
    expect(proxy.Properties.Auth).toEqual([expect.objectContaining({ AuthScheme: 'SECRETS', IAMAuth: 'DISABLED' })]);
    const lambdaSg = logicalIdOf(dev.stack.node.findChild('Data').node.findChild('LambdaSecurityGroup'));
    dev.template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      FromPort: 3306, ToPort: 3306, SourceSecurityGroupId: { 'Fn::GetAtt': [lambdaSg, 'GroupId'] },
    });
  });

  it("waits for a pooled connection for less time than an API function may run, so a full pool is an answer, not a timeout", () => {
    const [, group] = only(dev, 'AWS::RDS::DBProxyTargetGroup');
    const borrowSeconds = group.Properties.ConnectionPoolConfigurationInfo.ConnectionBorrowTimeout as number;
    const apiTimeouts = appFunctions(dev).filter(([id]) => id.startsWith('Api')).map(([, fn]) => fn.Properties.Timeout as number);
    expect(apiTimeouts).toHaveLength(3);
    for (const timeout of apiTimeouts) expect(borrowSeconds).toBeLessThanOrEqual(timeout - 5);
  });

  it('gives the stream function a timeout under API Gateway\'s 30 s and a read reserve of the proxy\'s borrow timeout + 1 s', () => {
    const [, group] = only(dev, 'AWS::RDS::DBProxyTargetGroup');
    const borrowSeconds = group.Properties.ConnectionPoolConfigurationInfo.ConnectionBorrowTimeout as number;
    const [, stream] = appFunctions(dev).find(([id]) => id.startsWith('ApiStream'))!;
    expect(stream!.Properties.Timeout).toBe(STREAM_FUNCTION_TIMEOUT_SECONDS);
    expect(STREAM_FUNCTION_TIMEOUT_SECONDS).toBeLessThan(30);
    expect(stream!.Properties.Environment.Variables[READ_RESERVE_ENV]).toBe(String((borrowSeconds + 1) * 1000));
    // What a long-poll may hold at most, and that a read started then still ends before the function's deadline.
    expect(STREAM_FUNCTION_TIMEOUT_SECONDS - borrowSeconds - 1).toBeGreaterThanOrEqual(18);
  });

  it('gives every function the proxy endpoint and the secret ARN, never a password', () => {
    const proxyId = logicalIdOf(dev.stack.node.findChild('Data').node.findChild('Cluster').node.findChild('Proxy'));
    for (const [id, fn] of appFunctions(dev)) {
      const env = fn.Properties.Environment.Variables as Record<string, unknown>;
      expect(referencedId(env.DATABASE_HOST), id).toBe(proxyId);
      expect(env.DATABASE_SECRET_ARN, id).toBeDefined();
      expect(env.DATABASE_TLS, id).toBe('true');
      expect(Object.keys(env).filter((k) => /PASSWORD|DATABASE_URL/.test(k)), id).toEqual([]);
    }
  });

  it('rotates the secret the proxy and every function read, every 30 days, with the hosted single-user rotation, never during a deployment', () => {
    const [, schedule] = only(dev, 'AWS::SecretsManager::RotationSchedule');
    expect(schedule.Properties).toMatchObject({ RotateImmediatelyOnUpdate: false, RotationRules: { ScheduleExpression: 'rate(30 days)' } });
    const secretId = referencedId(schedule.Properties.SecretId);
    expect(referencedId(only(dev, 'AWS::RDS::DBProxy')[1].Properties.Auth[0].SecretArn)).toBe(secretId);
    for (const [id, fn] of appFunctions(dev)) expect(referencedId(fn.Properties.Environment.Variables.DATABASE_SECRET_ARN), id).toBe(secretId);
    // AWS's rotation function for MySQL, deployed from the Serverless Application Repository.
    const [appId, app] = only(dev, 'AWS::Serverless::Application');
    expect(referencedId(schedule.Properties.RotationLambdaARN)).toBe(appId);
    expect(JSON.stringify(dev.template.toJSON().Mappings)).toContain('SecretsManagerRDSMySQLRotationSingleUser');
  });

  it('runs the rotation in the Lambda subnets (NAT to Secrets Manager), admitted by the cluster on its port and by the API endpoints on 443', () => {
    const data = dev.stack.data!;
    const [, app] = only(dev, 'AWS::Serverless::Application');
    const lambdaSubnets = data.vpc.privateSubnets.map(logicalIdOf);
    const joined = app.Properties.Parameters.vpcSubnetIds['Fn::Join'][1].filter((part: unknown) => part !== ',').map(referencedId);
    expect(joined).toEqual(lambdaSubnets);
    const rotationSg = logicalIdOf(data.node.findChild('SecretRotationSecurityGroup'));
    expect(referencedId(app.Properties.Parameters.vpcSecurityGroupIds)).toBe(rotationSg);
    const clusterSg = logicalIdOf(data.node.findChild('Cluster').node.findChild('SecurityGroup'));
    dev.template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: { 'Fn::GetAtt': [clusterSg, 'GroupId'] }, SourceSecurityGroupId: { 'Fn::GetAtt': [rotationSg, 'GroupId'] },
    });
    const withEndpoints = synthStack({ vpcEndpoints: true });
    const endpointsSg = logicalIdOf(withEndpoints.stack.node.findChild('Data').node.findChild('ApiEndpoints').node.findChild('SecurityGroup'));
    withEndpoints.template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: { 'Fn::GetAtt': [endpointsSg, 'GroupId'] }, FromPort: 443, ToPort: 443, SourceSecurityGroupId: { 'Fn::GetAtt': [rotationSg, 'GroupId'] },
    });
  }, 60_000);

  it('keeps data on delete in prod (retained, deletion-protected cluster and secret) and snapshots dev', () => {
    expect(only(prod, 'AWS::RDS::DBCluster')[1]).toMatchObject({ DeletionPolicy: 'Retain', Properties: { DeletionProtection: true } });
    expect(only(dev, 'AWS::RDS::DBCluster')[1].DeletionPolicy).toBe('Snapshot');
    const dbSecret = resources(prod, 'AWS::SecretsManager::Secret').find(([, r]) => r.Properties.Name === 'ai-jobs/prod/database');
    expect(dbSecret?.[1].DeletionPolicy).toBe('Retain');
  });
});

describe('network', () => {
  it('spans two AZs without lookups, with a configurable number of NAT gateways (1 in dev, 2 in prod)', () => {
    dev.template.resourceCountIs('AWS::EC2::NatGateway', 1);
    prod.template.resourceCountIs('AWS::EC2::NatGateway', 2);
    dev.template.resourceCountIs('AWS::EC2::Subnet', 6);
    expect(JSON.stringify(dev.template.toJSON())).toContain('Fn::GetAZs');
  });
});

describe('keys and secrets', () => {
  it('has a rotating KMS key for user credentials that is retained in every stage', () => {
    for (const s of [dev, prod]) {
      const [, key] = only(s, 'AWS::KMS::Key');
      expect(key).toMatchObject({ DeletionPolicy: 'Retain', Properties: { EnableKeyRotation: true } });
    }
    dev.template.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/ai-jobs-dev-credentials' });
  });

  it('has the platform provider secret, generated (never a literal a later deploy would write back) until an operator sets the keys', () => {
    const [, secret] = resources(dev, 'AWS::SecretsManager::Secret').find(([, r]) => r.Properties.Name === 'ai-jobs/dev/platform-provider-keys')!;
    expect(secret.Properties.SecretString).toBeUndefined();
    expect(secret.Properties.GenerateSecretString).toMatchObject({ SecretStringTemplate: '{}', GenerateStringKey: PLATFORM_SECRET_PLACEHOLDER_KEY });
    for (const [id, r] of resources(dev, 'AWS::SecretsManager::Secret')) expect(r.Properties.SecretString, id).toBeUndefined();
  });

  it('reads the generated value as "no provider keys yet", so platform_key jobs fail clearly until it is set', () => {
    expect(() => parsePlatformSecret(JSON.stringify({ [PLATFORM_SECRET_PLACEHOLDER_KEY]: 'Xy12random' }))).toThrow(/has no provider keys/);
    expect(parsePlatformSecret(JSON.stringify({ [PLATFORM_SECRET_PLACEHOLDER_KEY]: 'Xy12random', deepseek: 'sk-1' })).providers).toEqual(['deepseek']);
  });
});

describe('functions', () => {
  it('deploys every entry of LAMBDA_ENTRIES on nodejs24.x, arm64, ESM, source maps on, inside the VPC', () => {
    const fns = appFunctions(dev);
    expect(fns.map(([id]) => id.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(Object.keys(LAMBDA_ENTRIES).sort());
    for (const [id, fn] of fns) {
      expect(fn.Properties, id).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler' });
      expect(fn.Properties.Environment.Variables.NODE_OPTIONS, id).toBe('--enable-source-maps');
      expect(fn.Properties.VpcConfig.SubnetIds, id).toHaveLength(2);
    }
  });

  it('runs both consumers from SQS with partial batch failures, several jobs per invocation; background is capped', () => {
    const mappings = resources(dev, 'AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties);
    expect(mappings).toHaveLength(2);
    const of = (fn: string) => mappings.find((m) => referencedId(m.FunctionName).startsWith(fn))!;
    for (const m of mappings) expect(m.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    const { interactive, background } = dev.config.consumers;
    expect(of('ConsumerInteractive')).toMatchObject({ BatchSize: interactive.batchSize, ScalingConfig: { MaximumConcurrency: interactive.maxConcurrency } });
    expect(of('ConsumerBackground')).toMatchObject({ BatchSize: background.batchSize, ScalingConfig: { MaximumConcurrency: background.maxConcurrency } });
    expect([interactive.batchSize, background.batchSize]).toEqual([5, 5]);
    expect(background.maxConcurrency).toBeLessThan(interactive.maxConcurrency);
  });

  it('sizes the consumers from bench:memory and both APIs from bench:memory-api (measured peak RSS and a margin)', () => {
    const memoryOf = (name: string) => appFunctions(dev).find(([id]) => id.startsWith(name))![1].Properties.MemorySize as number;
    const { interactive, background } = dev.config.consumers;
    expect([interactive.memoryMb, background.memoryMb]).toEqual([320, 512]);
    expect(memoryOf('ConsumerInteractive')).toBe(interactive.memoryMb);
    expect(memoryOf('ConsumerBackground')).toBe(background.memoryMb);
    expect(memoryOf('ApiUser')).toBe(512);
    expect(memoryOf('ApiAdmin')).toBe(512);
    expect(memoryOf('Dispatcher')).toBe(512);
  });

  it('runs the dispatcher and the reaper every minute and maintenance every 15 minutes from EventBridge, retried by neither EventBridge nor Lambda', () => {
    const rules = resources(dev, 'AWS::Events::Rule').map(([, r]) => r.Properties);
    const byTarget = Object.fromEntries(rules.map((r) => [referencedId(r.Targets[0].Arn).replace(/[0-9A-F]{8}$/, ''), r]));
    expect(Object.keys(byTarget).sort()).toEqual(['Dispatcher', 'Maintenance', 'Reaper']);
    for (const [target, rule] of Object.entries(byTarget)) {
      const rate = target === 'Maintenance' ? 'rate(15 minutes)' : 'rate(1 minute)';
      expect(rule).toMatchObject({ ScheduleExpression: rate, Targets: [{ RetryPolicy: { MaximumRetryAttempts: 0 } }] });
    }
    // Lambda's own retries of an asynchronous invocation (two by default) are off as well, for exactly these three.
    const asyncConfigs = resources(dev, 'AWS::Lambda::EventInvokeConfig').map(([, c]) => c.Properties);
    expect(asyncConfigs.map((c) => referencedId(c.FunctionName).replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(['Dispatcher', 'Maintenance', 'Reaper']);
    for (const c of asyncConfigs) expect(c).toMatchObject({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60, Qualifier: '$LATEST' });
  });

  it('gives the maintenance function the stage\'s retention settings (defaults: 7 days, keep, 400 days, 30 days, 7 days)', () => {
    expect(envOf(dev, 'Maintenance')).toMatchObject({
      RETENTION_OUTBOX_PUBLISHED_DAYS: '7', RETENTION_OUTBOX_FAILED_DAYS: 'keep', RETENTION_USAGE_LEDGER_DAYS: '400',
      RETENTION_REVOKED_CREDENTIAL_DAYS: '30', RETENTION_STREAM_DAYS: '7',
    });
    expect(envOf(synthStack({ retentionStreamDays: 'keep' }), 'Maintenance').RETENTION_STREAM_DAYS).toBe('keep');
  });

  it('has an EventBridge bus for domain events, named after the stage and given to the dispatcher', () => {
    const [busId] = only(dev, 'AWS::Events::EventBus');
    dev.template.hasResourceProperties('AWS::Events::EventBus', { Name: 'ai-jobs-dev' });
    expect(referencedId(envOf(dev, 'Dispatcher').EVENT_BUS_NAME)).toBe(busId);
  });
});

describe('HTTP API', () => {
  it('has one route per entry of USER_ROUTES and ADMIN_ROUTES, each behind the JWT authorizer', () => {
    const [authorizerId] = only(dev, 'AWS::ApiGatewayV2::Authorizer');
    const routes = resources(dev, 'AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties);
    expect(routes.map((r) => r.RouteKey).sort()).toEqual([...USER_ROUTES, ...ADMIN_ROUTES, ...STREAM_ROUTES].map(routeKeyOf).sort());
    for (const route of routes) {
      expect(route, route.RouteKey).toMatchObject({ AuthorizationType: 'JWT', AuthorizerId: { Ref: authorizerId } });
    }
  });

  it('takes the issuer and audience of the authorizer from context', () => {
    dev.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT', JwtConfiguration: { Issuer: 'https://auth.example.com/', Audience: ['ai-jobs-api'] },
    });
    prod.template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', { JwtConfiguration: { Issuer: 'https://login.example.org/' } });
  });

  it('sends user routes to the user function and admin routes to the admin function only', () => {
    const integrations = Object.fromEntries(resources(dev, 'AWS::ApiGatewayV2::Integration')
      .map(([id, i]) => [id, referencedId(i.Properties.IntegrationUri)]));
    const target = (routeKey: string) => {
      const route = resources(dev, 'AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === routeKey)![1];
      const integrationId = JSON.stringify(route.Properties.Target).match(/"Ref":"([^"]+)"/)![1]!;
      return integrations[integrationId]!.replace(/[0-9A-F]{8}$/, '');
    };
    for (const route of USER_ROUTES) expect(target(routeKeyOf(route))).toBe('ApiUser');
    for (const route of ADMIN_ROUTES) expect(target(routeKeyOf(route))).toBe('ApiAdmin');
    for (const route of STREAM_ROUTES) expect(target(routeKeyOf(route))).toBe('ApiStream');
  });

  it('requires the adminScope, when configured, on admin routes only', () => {
    const scoped = synthStack({ adminScope: 'ai-jobs/admin' });
    const routes = resources(scoped, 'AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties);
    const adminKeys = new Set([...ADMIN_ROUTES, ...STREAM_ROUTES.filter((r) => r.access === 'admin')].map(routeKeyOf));
    for (const route of routes) {
      expect(route.AuthorizationScopes, route.RouteKey).toEqual(adminKeys.has(route.RouteKey) ? ['ai-jobs/admin'] : undefined);
    }
  }, 600_000);

  it('throttles on the $default stage with the configured limits', () => {
    dev.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default', AutoDeploy: true, DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
    prod.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { DefaultRouteSettings: { ThrottlingRateLimit: 200 } });
  });
});

describe('alarms', () => {
  it('watches the DLQs (visible + hidden), the oldest message age, the outbox backlog, and every function', () => {
    const alarms = resources(dev, 'AWS::CloudWatch::Alarm').map(([id, a]): Record<string, any> => ({ id, ...a.Properties }));
    const topic = only(dev, 'AWS::SNS::Topic')[0];
    for (const a of alarms) expect(a.AlarmActions, a.id).toEqual([{ Ref: topic }]);
    const dlq = alarms.filter((a) => a.id.includes('DeadLetterQueueNotEmpty'));
    expect(dlq).toHaveLength(2);
    for (const a of dlq) expect(a.Metrics[0]).toMatchObject({ Expression: 'visible + hidden' });
    expect(alarms.filter((a) => a.MetricName === 'ApproximateAgeOfOldestMessage')).toHaveLength(2);
    dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AiJobs', MetricName: 'OutboxBacklog', Dimensions: [{ Name: 'service', Value: 'outbox-dispatcher' }],
    });
    const functionCount = Object.keys(LAMBDA_ENTRIES).length;
    expect(alarms.filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === 'Errors')).toHaveLength(functionCount);
    expect(alarms.filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === 'Throttles')).toHaveLength(functionCount);
  });

  it('mails the alarms when alarmEmail is set', () => {
    prod.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.org' });
    dev.template.resourceCountIs('AWS::SNS::Subscription', 0);
  });
});

describe('LocalStack target (free-tier fallback)', () => {
  it('leaves out what the free tier lacks (VPC, Aurora, RDS Proxy, HTTP API) and gives functions DATABASE_URL', () => {
    const local = synthStack({ target: 'localstack', stage: 'local', mockAiBaseUrl: 'http://host.docker.internal:4010' });
    for (const type of ['AWS::EC2::VPC', 'AWS::RDS::DBCluster', 'AWS::RDS::DBProxy', 'AWS::ApiGatewayV2::Api']) {
      local.template.resourceCountIs(type, 0);
    }
    for (const [id, fn] of appFunctions(local)) {
      const env = fn.Properties.Environment.Variables;
      expect(env.DATABASE_URL, id).toBe('mysql://root@mysql:3306/ai_jobs');
      expect(env.DATABASE_SECRET_ARN, id).toBeUndefined();
      expect(fn.Properties.VpcConfig, id).toBeUndefined();
    }
    expect(envOf(local, 'ConsumerInteractive').MOCK_AI_BASE_URL).toBe('http://host.docker.internal:4010');
    local.template.resourceCountIs('AWS::SQS::Queue', 4);
    local.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    local.template.resourceCountIs('Custom::Trigger', 1);
  });
});

describe('stack', () => {
  it('is environment-agnostic and needs no context lookups', () => {
    expect(dev.stack.environment).toBe('aws://unknown-account/unknown-region');
    const assembly = dev.app.synth();
    expect(assembly.manifest.missing ?? []).toEqual([]);
  });
});

function appFunctions(s: Synthesized): [string, Resource][] {
  return resources(s, 'AWS::Lambda::Function').filter(([id]) => !id.startsWith('AWSCDK') && !id.startsWith('CustomCDKBucketDeployment'));
}

function envOf(s: Synthesized, name: string): Record<string, unknown> {
  const found = appFunctions(s).find(([id]) => id.replace(/[0-9A-F]{8}$/, '') === name);
  return found![1].Properties.Environment.Variables;
}
