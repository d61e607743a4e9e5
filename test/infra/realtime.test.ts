/**
 * Realtime push in the stack (infra/realtime.ts): an AppSync Event API whose clients connect and subscribe with
 * the API's JWT issuer and whose `jobs` namespace only IAM may publish to; the namespace's onSubscribe code with
 * the stage's admin rule and audiences; publish granted to exactly the functions that move jobs, with the
 * endpoint in their environment; alarms on publish errors; outputs; nothing of it on LocalStack.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { REALTIME_ENDPOINT_ENV } from '../../lib/realtime/publisher-from-env.ts';
import { REALTIME_LOSS_THRESHOLD } from '../../infra/realtime-alarms.ts';
import { logicalIdOf, referencedId, statementsOfRole, synthStack, type Synthesized } from './synth.ts';

type Resource = { Properties: Record<string, any> };
const resources = (s: Synthesized, type: string) => Object.entries(s.template.findResources(type)) as [string, Resource][];

let dev: Synthesized;
let prod: Synthesized;
beforeAll(() => {
  dev = synthStack();
  prod = synthStack({ stage: 'prod', jwtIssuer: 'https://login.example.org/', jwtAudience: 'web,cli', adminClaim: 'roles', adminGroup: 'ops-admin' });
}, 600_000);

const apiId = (s: Synthesized) => logicalIdOf(s.stack.realtime!.api);

describe('the Event API', () => {
  it('lets clients connect and subscribe with the stage’s JWT issuer, and only IAM publish', () => {
    const [[, api]] = resources(prod, 'AWS::AppSync::Api') as [[string, Resource]];
    expect(api.Properties.EventConfig).toMatchObject({
      AuthProviders: [{ AuthType: 'AWS_IAM' }, { AuthType: 'OPENID_CONNECT', OpenIDConnectConfig: { Issuer: 'https://login.example.org/' } }],
      ConnectionAuthModes: [{ AuthType: 'OPENID_CONNECT' }],
      DefaultPublishAuthModes: [{ AuthType: 'AWS_IAM' }],
      DefaultSubscribeAuthModes: [{ AuthType: 'OPENID_CONNECT' }],
    });
    const [[, namespace]] = resources(prod, 'AWS::AppSync::ChannelNamespace') as [[string, Resource]];
    expect(namespace.Properties).toMatchObject({
      Name: 'jobs', PublishAuthModes: [{ AuthType: 'AWS_IAM' }], SubscribeAuthModes: [{ AuthType: 'OPENID_CONNECT' }],
    });
    expect(resources(prod, 'AWS::AppSync::ApiKey')).toEqual([]);
  });

  it("runs the onSubscribe rules with the stage's admin claim, group and audiences", () => {
    const [[, namespace]] = resources(prod, 'AWS::AppSync::ChannelNamespace') as [[string, Resource]];
    const code = namespace.Properties.CodeHandlers as string;
    expect(code).toContain('export function onSubscribe(ctx)');
    expect(code).toContain('var POLICY = { "adminClaim": "roles", "adminGroup": "ops-admin", "audiences": ["web", "cli"] };');
    expect(code).not.toContain('onPublish');
  });

  it('logs errors to its own log group, kept for the stage’s retention, through a role that can write only there', () => {
    const [[logsId, group]] = resources(dev, 'AWS::Logs::LogGroup').filter(([id]) => id.startsWith('RealtimeLogs')) as [[string, Resource]];
    expect(group.Properties.RetentionInDays).toBe(14);
    expect(JSON.stringify(group.Properties.LogGroupName)).toContain('/aws/appsync/apis/');
    const [[, api]] = resources(dev, 'AWS::AppSync::Api') as [[string, Resource]];
    expect(api.Properties.EventConfig.LogConfig.LogLevel).toBe('ERROR');
    const role = dev.stack.realtime!.node.findChild('LogsRole');
    expect(statementsOfRole(dev, role)).toEqual([{ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logsId] }]);
  });
});

describe('the admin console', () => {
  it("lets its page open the Event API's WebSocket (CSP connect-src names the realtime domain)", () => {
    const [[, policy]] = resources(dev, 'AWS::CloudFront::ResponseHeadersPolicy') as [[string, Resource]];
    const csp = JSON.stringify(policy.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy);
    expect(csp).toContain("connect-src 'self' https: wss://");
    expect(csp).toContain(apiId(dev));
    expect(csp).toContain('Dns.Realtime');
  });
});

describe('publishers', () => {
  const movers = ['ApiUser', 'ApiAdmin', 'ConsumerInteractive', 'ConsumerBackground', 'Dispatcher', 'Reaper'];

  it('grants appsync:EventPublish on the jobs namespace to exactly the functions that move jobs, and nothing else of AppSync', () => {
    const { functions } = dev.stack;
    const all = { ApiUser: functions.apiUser, ApiAdmin: functions.apiAdmin, ConsumerInteractive: functions.consumers.interactive,
      ConsumerBackground: functions.consumers.background, Dispatcher: functions.dispatcher, Reaper: functions.reaper,
      Maintenance: functions.maintenance, Migrate: functions.migrate };
    for (const [name, fn] of Object.entries(all)) {
      const appsync = statementsOfRole(dev, fn.role!).filter((st) => st.actions.some((a) => a.startsWith('appsync:')));
      if (!movers.includes(name)) {
        expect(appsync, name).toEqual([]);
        continue;
      }
      expect(appsync, name).toHaveLength(1);
      expect(appsync[0]!.actions, name).toEqual(['appsync:EventPublish']);
      expect(appsync[0]!.resources[0], name).toContain(`${apiId(dev)}`);
      expect(appsync[0]!.resources[0], name).toMatch(/\/channelNamespace\/jobs"/);
    }
  });

  it('gives those functions the HTTP endpoint as REALTIME_HTTP_ENDPOINT, and no other function', () => {
    for (const [id, fn] of resources(dev, 'AWS::Lambda::Function')) {
      const value = fn.Properties.Environment?.Variables?.[REALTIME_ENDPOINT_ENV];
      const name = movers.find((m) => id.startsWith(m));
      if (!name) {
        expect(value, id).toBeUndefined();
        continue;
      }
      expect(value, id).toEqual({ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [apiId(dev), 'Dns.Http'] }, '/event']] });
    }
  });
});

describe('alarms and outputs', () => {
  it('alarms on the Event API’s publish errors and on pushes the publisher lost', () => {
    const alarms = resources(dev, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const service = (metric: string) => alarms.find((a) => a.Namespace === 'AWS/AppSync' && a.MetricName === metric);
    for (const metric of ['5XXError', '4XXError']) {
      expect(service(metric), metric).toMatchObject({ Statistic: 'Sum', Threshold: 1, Period: 300 });
      expect(referencedId(service(metric)!.Dimensions[0].Value), metric).toBe(apiId(dev));
      expect(service(metric)!.Dimensions[0].Name).toBe('EventAPIId');
    }
    for (const metric of ['RealtimePublishFailed', 'RealtimePublishDropped']) {
      expect(alarms.find((a) => a.Namespace === 'AiJobs' && a.MetricName === metric), metric).toMatchObject({
        Threshold: REALTIME_LOSS_THRESHOLD, Dimensions: [{ Name: 'service', Value: 'realtime-publisher' }],
      });
    }
    const topic = logicalIdOf(dev.stack.node.findChild('Alarms').node.findChild('Topic'));
    for (const a of alarms.filter((x) => /Realtime|AppSync/.test(`${x.MetricName} ${x.Namespace}`))) expect(a.AlarmActions).toEqual([{ Ref: topic }]);
  });

  it('outputs the endpoints the client library needs', () => {
    const outputs = dev.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.RealtimeHttpEndpoint!.Value).toEqual({ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [apiId(dev), 'Dns.Http'] }, '/event']] });
    expect(outputs.RealtimeWebSocketUrl!.Value).toEqual({ 'Fn::Join': ['', ['wss://', { 'Fn::GetAtt': [apiId(dev), 'Dns.Realtime'] }, '/event/realtime']] });
  });
});

describe('LocalStack', () => {
  it('has no Event API (not in LocalStack’s free tier): publishers stay off and readers long-poll', () => {
    const local = synthStack({ stage: 'local', target: 'localstack' });
    expect(local.stack.realtime).toBeUndefined();
    expect(resources(local, 'AWS::AppSync::Api')).toEqual([]);
    for (const [id, fn] of resources(local, 'AWS::Lambda::Function')) expect(fn.Properties.Environment?.Variables?.[REALTIME_ENDPOINT_ENV], id).toBeUndefined();
  });
});
