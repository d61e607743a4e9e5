/**
 * The admin console's infrastructure (infra/console.ts): a private bucket behind CloudFront with origin
 * access control, HTTPS, security headers and logs; `/admin-api/*` routed to the HTTP API on the same
 * origin; the built files and an OIDC config.json uploaded under console/.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { AdminConsole, consoleSignInConfig, SPA_REWRITE } from '../../infra/console.ts';
import { loadStageConfig } from '../../infra/config.ts';
import { CDK_JSON, synthStack } from './synth.ts';

const API_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com/';

function consoleStack(distDir: string): Stack {
  const app = new App({ context: { ...CDK_JSON.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'ConsoleOnly');
  new AdminConsole(stack, 'Console', { config: loadStageConfig(app.node), apiUrl: API_URL, distDir });
  return stack;
}

let template: Template;
beforeAll(() => {
  const dist = mkdtempSync(join(tmpdir(), 'console-dist-'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html>');
  template = Template.fromStack(consoleStack(dist));
}, 60_000);

describe('admin console infrastructure', () => {
  it('keeps the files in a private, TLS-only, encrypted bucket that logs access', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: Match.anyValue(),
      LoggingConfiguration: { DestinationBucketName: Match.anyValue(), LogFilePrefix: 's3/' },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('serves them through CloudFront over HTTPS only, with origin access control, security headers and access logs', () => {
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultCacheBehavior: Match.objectLike({ ViewerProtocolPolicy: 'redirect-to-https' }),
        Origins: Match.arrayWith([Match.objectLike({ OriginAccessControlId: Match.anyValue() })]),
        Logging: Match.objectLike({ Prefix: 'cloudfront/' }),
      }),
    });
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: {
        SecurityHeadersConfig: Match.objectLike({
          ContentSecurityPolicy: { ContentSecurityPolicy: Match.stringLikeRegexp("default-src 'self'"), Override: true },
          FrameOptions: { FrameOption: 'DENY', Override: true },
          StrictTransportSecurity: Match.objectLike({ AccessControlMaxAgeSec: 31_536_000 }),
          ContentTypeOptions: { Override: true },
        }),
      },
    });
  });

  it('sends /admin-api/* to the HTTP API uncached, with the Authorization header, so the API shares the origin', () => {
    const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution')) as any[];
    const config = distribution.Properties.DistributionConfig;
    const api = config.CacheBehaviors.find((b: any) => b.PathPattern === '/admin-api/*');
    expect(api).toMatchObject({ ViewerProtocolPolicy: 'https-only', AllowedMethods: expect.arrayContaining(['POST', 'GET']) });
    const origin = config.Origins.find((o: any) => o.Id === api.TargetOriginId);
    expect(origin.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
    expect(JSON.stringify(origin.DomainName)).toContain('abc123.execute-api.eu-west-1.amazonaws.com');
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: Match.objectLike({
        DefaultTTL: 0,
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({ HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['Authorization'] } }),
      }),
    });
  });

  it('never caches an error answer (CloudFront would keep an API 503 or 403 for 10 s)', () => {
    const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution')) as any[];
    const errors = distribution.Properties.DistributionConfig.CustomErrorResponses as { ErrorCode: number; ErrorCachingMinTTL: number; ResponsePagePath?: string }[];
    expect(errors.map((e) => e.ErrorCode)).toEqual(expect.arrayContaining([400, 403, 500, 502, 503, 504]));
    for (const e of errors) expect(e).toEqual({ ErrorCode: e.ErrorCode, ErrorCachingMinTTL: 0 });
  });

  it('sends the bare domain to /console/, rewrites console routes to index.html, and leaves files alone', () => {
    const handler = new Function(`${SPA_REWRITE}; return handler;`)() as (e: { request: { uri: string } }) => any;
    expect(handler({ request: { uri: '/' } })).toEqual({ statusCode: 302, statusDescription: 'Found', headers: { location: { value: '/console/' } } });
    expect(handler({ request: { uri: '/console/jobs/01J0000000000000000000000A' } }).uri).toBe('/console/index.html');
    expect(handler({ request: { uri: '/console' } }).uri).toBe('/console/index.html');
    expect(handler({ request: { uri: '/console/assets/app.js' } }).uri).toBe('/console/assets/app.js');
    expect(handler({ request: { uri: '/console/config.json' } }).uri).toBe('/console/config.json');
  });

  it("tells the console to sign in at the stage's issuer as its client, asking for the admin scope when the stage requires one", () => {
    const config = (context: Record<string, unknown>) => loadStageConfig(new App({ context: { ...CDK_JSON.context, ...context } }).node);
    expect(consoleSignInConfig(config({ consoleClientId: 'console-app' }))).toEqual({
      signIn: 'oidc', issuer: 'https://auth.example.com/', clientId: 'console-app', audience: 'ai-jobs-api', scope: 'openid',
    });
    expect(consoleSignInConfig(config({ consoleClientId: 'console-app', adminScope: 'ai-jobs/admin' })).scope).toBe('openid ai-jobs/admin');
  });

  it('warns at synth when the console has no client id, or one the JWT authorizer does not accept', () => {
    const warnings = (context: Record<string, unknown>) => {
      const app = new App({ context: { ...CDK_JSON.context, ...context, 'aws:cdk:bundling-stacks': [] } });
      const stack = new Stack(app, 'ConsoleOnly');
      const dist = mkdtempSync(join(tmpdir(), 'console-dist-'));
      writeFileSync(join(dist, 'index.html'), '<!doctype html>');
      new AdminConsole(stack, 'Console', { config: loadStageConfig(app.node), apiUrl: API_URL, distDir: dist });
      return Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('consoleClientId')).map((w) => String(w.entry.data));
    };
    expect(warnings({})).toEqual([expect.stringContaining('consoleClientId is not set')]);
    expect(warnings({ consoleClientId: 'console-app' })).toEqual([expect.stringContaining('is not in jwtAudience')]);
    expect(warnings({ consoleClientId: 'console-app', jwtAudience: 'ai-jobs-api,console-app' })).toEqual([]);
  });

  it('uploads the build under console/ and invalidates it on deploy', () => {
    template.hasResourceProperties('Custom::CDKBucketDeployment', { DestinationBucketKeyPrefix: 'console/', DistributionPaths: ['/console/*'] });
  });

  it('warns instead of uploading when the console is not built', () => {
    const stack = consoleStack(mkdtempSync(join(tmpdir(), 'console-empty-')));
    Template.fromStack(stack).resourceCountIs('Custom::CDKBucketDeployment', 0);
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('npm run console:build'))).toHaveLength(1);
  });

  it('is part of the AWS stack, behind the same HTTP API', () => {
    synthStack().template.resourceCountIs('AWS::CloudFront::Distribution', 1);
  }, 60_000);
});
