/**
 * What the stack needs to deploy and be operated (issue 11, "The stack"): alarms that can reach their topic,
 * AZs chosen by the stage, CORS without a JWT on preflight, admin checks at API Gateway, tracing and log
 * retention everywhere, database and consumer alarms, and the VPC endpoint option.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { buildOpenApiDocument } from '../../lib/api/openapi.ts';
import { ADMIN_ROUTES, STREAM_ROUTES, USER_ROUTES, routeKeyOf } from '../../lib/api/routes.ts';
import { loadStageConfig, StageConfigError } from '../../infra/config.ts';
import { INTERFACE_ENDPOINT_SERVICES } from '../../infra/vpc-endpoints.ts';
import { EXPECTED_PINNED_SESSIONS } from '../../infra/database-alarms.ts';
import { CDK_JSON, synthStack, type Synthesized } from './synth.ts';

type Resource = { Properties: Record<string, any>; DependsOn?: string[] };
const resources = (s: Synthesized, type: string) => Object.entries(s.template.findResources(type)) as [string, Resource][];
const envOf = (s: Synthesized, prefix: string) =>
  resources(s, 'AWS::Lambda::Function').find(([id]) => id.startsWith(prefix))![1].Properties.Environment.Variables as Record<string, string>;

const PROD = {
  stage: 'prod', jwtIssuer: 'https://login.example.org/', corsOrigins: 'https://app.example.org,http://localhost:5173', availabilityZones: 'us-east-1a,us-east-1c',
  vpcEndpoints: true, stages: { ...(CDK_JSON.context.stages as object), prod: { ...(CDK_JSON.context.stages as any).prod, adminScope: 'ai-jobs/admin' } },
  adminClaim: 'groups', adminGroup: 'platform-admins',
};
let dev: Synthesized;
let prod: Synthesized;
beforeAll(() => {
  dev = synthStack();
  prod = synthStack(PROD);
}, 600_000);

describe('alarm topic', () => {
  it('lets CloudWatch alarms of this account publish, besides denying non-TLS publishing', () => {
    for (const s of [dev, prod]) {
      const [[, policy]] = resources(s, 'AWS::SNS::TopicPolicy') as [[string, Resource]];
      const statements = policy.Properties.PolicyDocument.Statement as Record<string, any>[];
      expect(statements.some((st) => st.Effect === 'Deny' && st.Condition?.Bool?.['aws:SecureTransport'] === 'false')).toBe(true);
      const allow = statements.find((st) => st.Effect === 'Allow')!;
      expect(allow).toMatchObject({ Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish' });
      expect(allow.Condition.StringEquals['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
      expect(JSON.stringify(allow.Condition.ArnLike['aws:SourceArn'])).toMatch(/:cloudwatch:.*:alarm:\*/);
    }
  });
});

describe('availability zones', () => {
  it('puts the VPC, and so the RDS Proxy, in the AZs the stage names, without any lookup', () => {
    const zones = resources(prod, 'AWS::EC2::Subnet').map(([, r]) => r.Properties.AvailabilityZone);
    expect(new Set(zones)).toEqual(new Set(['us-east-1a', 'us-east-1c']));
    expect(prod.stack.node.metadata.filter((m) => m.type === 'aws:cdk:missing-context')).toEqual([]);
    // Unset: the region's first two AZs through Fn::GetAZs (no lookup either).
    expect(JSON.stringify(resources(dev, 'AWS::EC2::Subnet')[0]![1].Properties.AvailabilityZone)).toContain('Fn::GetAZs');
  });

  it('refuses fewer than two AZs or something that is not an AZ name', () => {
    for (const availabilityZones of ['us-east-1a', 'use1-az1,use1-az2']) {
      const app = new App({ context: { ...CDK_JSON.context, availabilityZones } });
      expect(() => loadStageConfig(app.node), availabilityZones).toThrow(StageConfigError);
    }
  });
});

describe('CORS', () => {
  it('is off unless the stage names origins', () => {
    const [[, api]] = resources(dev, 'AWS::ApiGatewayV2::Api') as [[string, Resource]];
    expect(api.Properties.CorsConfiguration).toBeUndefined();
  });

  it('allows the configured origins with the headers a create sends, exposes the ones it answers, and no route makes preflight need a JWT', () => {
    const [[, api]] = resources(prod, 'AWS::ApiGatewayV2::Api') as [[string, Resource]];
    expect(api.Properties.CorsConfiguration).toMatchObject({
      AllowOrigins: ['https://app.example.org', 'http://localhost:5173'],
      AllowHeaders: ['authorization', 'content-type', 'idempotency-key'],
      ExposeHeaders: ['location', 'idempotent-replayed', 'retry-after'],
    });
    expect(api.Properties.CorsConfiguration.AllowMethods).toEqual(expect.arrayContaining(['GET', 'POST', 'OPTIONS']));
    // API Gateway answers OPTIONS itself unless a route matches it: an `OPTIONS` or `ANY` route would send the
    // preflight to the JWT authorizer, which rejects it (browsers send preflight without credentials).
    for (const [, route] of resources(prod, 'AWS::ApiGatewayV2::Route')) expect(route.Properties.RouteKey).toMatch(/^(GET|POST|PUT|DELETE|PATCH) /);
  });

  it('allows every request header the API documents and exposes every response header it documents', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; responses: Record<string, { headers?: Record<string, unknown> }> }>> };
    const operations = Object.values(doc.paths).flatMap((path) => Object.values(path));
    const requestHeaders = operations.flatMap((op) => (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase()));
    const responseHeaders = operations.flatMap((op) => Object.values(op.responses).flatMap((r) => Object.keys(r.headers ?? {}).map((h) => h.toLowerCase())));
    expect(new Set(requestHeaders)).toEqual(new Set(['idempotency-key']));
    expect(new Set(responseHeaders)).toEqual(new Set(['location', 'idempotent-replayed', 'retry-after']));
    const [[, api]] = resources(prod, 'AWS::ApiGatewayV2::Api') as [[string, Resource]];
    expect(api.Properties.CorsConfiguration.AllowHeaders).toEqual(expect.arrayContaining(requestHeaders));
    expect(api.Properties.CorsConfiguration.ExposeHeaders).toEqual(expect.arrayContaining(responseHeaders));
  });

  it('refuses wildcard or malformed origins', () => {
    for (const corsOrigins of ['*', 'https://app.example.org/', 'http://app.example.org']) {
      const app = new App({ context: { ...CDK_JSON.context, corsOrigins } });
      expect(() => loadStageConfig(app.node), corsOrigins).toThrow(StageConfigError);
    }
  });
});

describe('admin routes', () => {
  it('require the stage\'s admin scope at API Gateway (stages.<stage>.adminScope), user routes none', () => {
    const adminKeys = new Set([...ADMIN_ROUTES, ...STREAM_ROUTES.filter((r) => r.access === 'admin')].map(routeKeyOf));
    const routes = resources(prod, 'AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties);
    expect(routes).toHaveLength(ADMIN_ROUTES.length + USER_ROUTES.length + STREAM_ROUTES.length);
    for (const route of routes) {
      expect(route.AuthorizationScopes, route.RouteKey).toEqual(adminKeys.has(route.RouteKey) ? ['ai-jobs/admin'] : undefined);
    }
    for (const [, route] of resources(dev, 'AWS::ApiGatewayV2::Route')) expect(route.Properties.AuthorizationScopes).toBeUndefined();
  });

  it('give the API functions the admin claim and group (defaults cognito:groups and SUPER_ADMIN) and the issuer the authorizer verifies', () => {
    for (const fn of ['ApiUser', 'ApiAdmin', 'ApiStream']) {
      expect(envOf(dev, fn), fn).toMatchObject({ ADMIN_CLAIM: 'cognito:groups', ADMIN_GROUP: 'SUPER_ADMIN', JWT_ISSUER: 'https://auth.example.com/' });
      expect(envOf(prod, fn), fn).toMatchObject({ ADMIN_CLAIM: 'groups', ADMIN_GROUP: 'platform-admins', JWT_ISSUER: 'https://login.example.org/' });
    }
  });
});

describe('tracing and logs', () => {
  it('traces every function with X-Ray', () => {
    for (const [id, fn] of resources(dev, 'AWS::Lambda::Function')) {
      if (id.startsWith('AWSCDKTrigger')) continue; // CDK's own provider: a CfnResource without a tracing option
      if (id.startsWith('CustomCDKBucketDeployment')) continue; // CDK's console upload at deploy time: no tracing option either
      expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
    }
  });

  it("gives every log group the stage's retention: functions, API access logs, RDS exports, flow logs, the trigger's provider", () => {
    for (const [s, days] of [[dev, 14], [prod, 90]] as const) {
      const groups = resources(s, 'AWS::Logs::LogGroup');
      for (const [id, group] of groups) expect(group.Properties.RetentionInDays, id).toBe(days);
      const names = groups.map(([, g]) => JSON.stringify(g.Properties.LogGroupName ?? null));
      expect(names).toContain(JSON.stringify(`/aws/rds/cluster/ai-jobs-${s.config.stage}/error`));
      expect(names).toContain(JSON.stringify(`/aws/rds/cluster/ai-jobs-${s.config.stage}/slowquery`));
      const provider = resources(s, 'AWS::Lambda::Function').find(([id]) => id.startsWith('AWSCDKTrigger'))![0];
      expect(names).toContain(JSON.stringify({ 'Fn::Join': ['', ['/aws/lambda/', { Ref: provider }]] }));
      expect(groups.some(([id]) => id.startsWith('HttpAccessLogs'))).toBe(true);
      // Every app function writes to its own group (LoggingConfig), so no /aws/lambda group is created unmanaged.
      for (const [id, fn] of resources(s, 'AWS::Lambda::Function')) {
        if (!id.startsWith('AWSCDKTrigger')) expect(fn.Properties.LoggingConfig?.LogGroup, id).toBeDefined(); // the console upload's too
      }
    }
  });

  it('creates the RDS export and trigger-provider log groups before what would write to them', () => {
    const [[clusterId, cluster]] = resources(dev, 'AWS::RDS::DBCluster') as [[string, Resource]];
    const exportGroups = resources(dev, 'AWS::Logs::LogGroup').filter(([, g]) => String(g.Properties.LogGroupName ?? '').startsWith('/aws/rds/'));
    expect(clusterId).toBeDefined();
    for (const [id] of exportGroups) expect(cluster.DependsOn, id).toContain(id);
    const trigger = dev.template.toJSON().Resources.MigrateOnDeploy as Resource;
    const providerGroup = resources(dev, 'AWS::Logs::LogGroup').find(([id]) => id.startsWith('MigrateOnDeployProviderLogs'))![0];
    expect(trigger.DependsOn).toContain(providerGroup);
  });
});

describe('database and consumer alarms', () => {
  const alarms = (s: Synthesized) => resources(s, 'AWS::CloudWatch::Alarm').map(([id, a]): Record<string, any> => ({ id, ...a.Properties }));
  const metricsOf = (a: Record<string, any>) => (a.Metrics ?? []).map((m: any) => m.MetricStat?.Metric).filter(Boolean);

  it('watches Aurora ACU use, proxy connections against the allowed maximum, and pinned sessions', () => {
    const all = alarms(dev);
    expect(all.find((a) => a.MetricName === 'ACUUtilization')).toMatchObject({ Namespace: 'AWS/RDS', Threshold: 90 });
    const connections = all.find((a) => metricsOf(a).some((m: any) => m.MetricName === 'MaxDatabaseConnectionsAllowed'))!;
    expect(metricsOf(connections).map((m: any) => m.MetricName).sort()).toEqual(['DatabaseConnections', 'MaxDatabaseConnectionsAllowed']);
    expect(all.find((a) => a.MetricName === 'DatabaseConnectionsCurrentlySessionPinned')).toMatchObject({
      Namespace: 'AWS/RDS', Dimensions: [{ Name: 'ProxyName', Value: 'ai-jobs-dev' }], Threshold: EXPECTED_PINNED_SESSIONS,
    });
  });

  it("watches the failed-job share and each consumer's duration against 80% of its timeout", () => {
    const all = alarms(dev);
    const rate = all.find((a) => metricsOf(a).some((m: any) => m.MetricName === 'JobsFailed'))!;
    expect(metricsOf(rate).map((m: any) => [m.Namespace, m.MetricName]).sort()).toEqual([['AiJobs', 'JobsFailed'], ['AiJobs', 'JobsSucceeded']]);
    const durations = all.filter((a) => a.MetricName === 'Duration');
    expect(durations.map((a) => a.Threshold).sort((x, y) => x - y)).toEqual([72_000, 240_000]); // 0.8 × 90 s, 0.8 × 300 s
  });
});

describe('VPC endpoints (stage option)', () => {
  it('are absent by default and, when on, reach SQS, KMS, Secrets Manager and EventBridge privately from the Lambda subnets', () => {
    dev.template.resourceCountIs('AWS::EC2::VPCEndpoint', 0);
    const endpoints = resources(prod, 'AWS::EC2::VPCEndpoint').map(([, e]) => e.Properties);
    expect(endpoints).toHaveLength(Object.keys(INTERFACE_ENDPOINT_SERVICES).length);
    const services = endpoints.map((e) => JSON.stringify(e.ServiceName));
    for (const service of ['sqs', 'kms', 'secretsmanager', 'events']) expect(services.some((s) => s.includes(`.${service}`)), service).toBe(true);
    for (const e of endpoints) expect(e).toMatchObject({ VpcEndpointType: 'Interface', PrivateDnsEnabled: true });
    expect(endpoints[0]!.SubnetIds).toHaveLength(2);
  });
});
