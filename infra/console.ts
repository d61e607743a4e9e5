/**
 * The admin console on a deployed stage: the built files of console/dist in a private S3 bucket (block
 * public access, TLS only, server access logs) behind CloudFront (HTTPS only, origin access control,
 * security headers, access logs), and the admin API on the same origin — CloudFront sends `/admin-api/*`
 * to the HTTP API, so the browser needs no CORS. `/console/config.json` tells the console to sign in through
 * the stage's OIDC issuer; the local runtime's token route does not exist here.
 *
 * cdk-nag AwsSolutions: the findings this design accepts are suppressed on the resource with a reason.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Annotations, CfnOutput, Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct, type IConstruct } from 'constructs';
import { retentionOf } from './app-function.ts';
import type { StageConfig } from './config.ts';

/** Where `npm run console:build` writes the console. */
export const CONSOLE_DIST = fileURLToPath(new URL('../console/dist', import.meta.url));

export interface AdminConsoleProps {
  config: StageConfig;
  /** The HTTP API stage URL (`https://<id>.execute-api.<region>.amazonaws.com/`). */
  apiUrl: string;
  /** The built console; default console/dist. When missing, the files are not deployed (a warning says so). */
  distDir?: string;
  /**
   * The stage's realtime push (infra/realtime.ts), when it has one: config.json tells the console its HTTP endpoint
   * (the job page watches a running job live), and the CSP lets the page open its WebSocket (`wss://<realtime domain>`).
   */
  realtime?: { httpEndpoint: string; realtimeOrigin: string };
}

/**
 * The same policy the local runtime sends (lib/dev/local-runtime/console-routes.ts), plus HSTS. The realtime
 * WebSocket's origin is named: not every browser counts `wss:` as matched by `https:` or `'self'` (MDN, CSP
 * connect-src).
 */
export function contentSecurityPolicy(realtimeOrigin?: string): string {
  return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    + `connect-src 'self' https:${realtimeOrigin ? ` ${realtimeOrigin}` : ''}; frame-ancestors 'none'; base-uri 'self'; form-action 'self' https:`;
}

/**
 * Sends the bare domain to the console, and rewrites the console's own routes (no file extension) to its
 * index.html; leaves asset paths alone. (Without the redirect `/` would answer S3's AccessDenied XML: there is
 * no default root object, the files live under console/.)
 */
export const SPA_REWRITE = `function handler(event) {
  var r = event.request;
  if (r.uri === '/') return { statusCode: 302, statusDescription: 'Found', headers: { location: { value: '/console/' } } };
  if (r.uri === '/console') r.uri = '/console/index.html';
  else if (r.uri.startsWith('/console/') && r.uri.split('/').pop().indexOf('.') < 0) r.uri = '/console/index.html';
  return r;
}`;

/** Error statuses CloudFront caches by default (10 s) that the console's origins may answer. */
const NEVER_CACHED_ERRORS = [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504];

export class AdminConsole extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;

  constructor(scope: Construct, id: string, props: AdminConsoleProps) {
    super(scope, id);
    const { config } = props;
    const removalPolicy = config.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const logs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL, enforceSSL: true, encryption: s3.BucketEncryption.S3_MANAGED,
      // CloudFront's standard logging writes with an ACL.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(config.logRetentionDays) }], removalPolicy,
    });
    suppress(logs, [['AwsSolutions-S1', 'This is the access-log bucket itself; logging it would log its own log writes.']]);
    this.bucket = new s3.Bucket(this, 'Files', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL, enforceSSL: true, encryption: s3.BucketEncryption.S3_MANAGED,
      serverAccessLogsBucket: logs, serverAccessLogsPrefix: 's3/', versioned: true, removalPolicy,
    });
    this.distribution = this.createDistribution(props, logs);
    this.deployFiles(props);
    new CfnOutput(Stack.of(this), 'ConsoleUrl', { value: `https://${config.consoleDomainName ?? this.distribution.distributionDomainName}/console/` });
  }

  private createDistribution(props: AdminConsoleProps, logs: s3.Bucket): cloudfront.Distribution {
    const { config } = props;
    const headers = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: contentSecurityPolicy(props.realtime?.realtimeOrigin), override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
      },
    });
    // Admin answers are per caller and never cached; Authorization must reach API Gateway's JWT authorizer.
    const apiCache = new cloudfront.CachePolicy(this, 'AdminApiNoCache', {
      defaultTtl: Duration.seconds(0), minTtl: Duration.seconds(0), maxTtl: Duration.seconds(1),
      headerBehavior: cloudfront.CacheHeaderBehavior.allowList('Authorization'),
      queryStringBehavior: cloudfront.CacheQueryStringBehavior.all(),
    });
    const certificate = config.consoleCertificateArn
      ? acm.Certificate.fromCertificateArn(this, 'Certificate', config.consoleCertificateArn) : undefined;
    const distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `ai-jobs ${config.stage} admin console`,
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: headers,
        functionAssociations: [{
          eventType: cloudfront.FunctionEventType.VIEWER_REQUEST,
          function: new cloudfront.Function(this, 'SpaRewrite', { code: cloudfront.FunctionCode.fromInline(SPA_REWRITE), runtime: cloudfront.FunctionRuntime.JS_2_0 }),
        }],
      },
      additionalBehaviors: {
        '/admin-api/*': {
          origin: new origins.HttpOrigin(Fn.select(2, Fn.split('/', props.apiUrl)), { protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY }),
          viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
          cachePolicy: apiCache,
          originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
          responseHeadersPolicy: headers,
        },
      },
      ...(certificate && config.consoleDomainName ? { certificate, domainNames: [config.consoleDomainName] } : {}),
      // Errors are never cached: CloudFront would keep an API error (a 503 with Retry-After, a 403) for 10 s by
      // default, for every caller of the same URL and token, whatever its Cache-Control says.
      errorResponses: NEVER_CACHED_ERRORS.map((httpStatus) => ({ httpStatus, ttl: Duration.seconds(0) })),
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableLogging: true, logBucket: logs, logFilePrefix: 'cloudfront/',
    });
    suppress(distribution, [
      ['AwsSolutions-CFR1', 'An operator console for a global team: no geographic restriction; access is by OIDC sign-in and the admin role.'],
      ['AwsSolutions-CFR2', 'No WAF by default (cost); the admin API behind it requires a JWT with the admin role. Attach a web ACL per stage if required.'],
      ...(certificate ? [] : [['AwsSolutions-CFR4', 'Without consoleDomainName/consoleCertificateArn the default *.cloudfront.net certificate is used, which CloudFront serves with its own TLS policy; set both to enforce TLSv1.2_2021.'] as [string, string]]),
    ]);
    return distribution;
  }

  /** Uploads console/dist and a config.json naming the stage's OIDC issuer (and realtime endpoint), then invalidates /console/*. */
  private deployFiles(props: AdminConsoleProps): void {
    const dist = props.distDir ?? CONSOLE_DIST;
    if (!existsSync(`${dist}/index.html`)) {
      Annotations.of(this).addWarningV2('ai-jobs:consoleNotBuilt', `${dist} has no build: run \`npm run console:build\` before deploying, or the console's files are not uploaded`);
      return;
    }
    const { config } = props;
    if (!config.consoleClientId) {
      Annotations.of(this).addWarningV2('ai-jobs:consoleClientId', 'consoleClientId is not set: the deployed console cannot sign anyone in (set stages.<stage>.consoleClientId to an app client of the issuer)');
    } else if (!config.jwtAudience.includes(config.consoleClientId)) {
      Annotations.of(this).addWarningV2('ai-jobs:consoleAudience', `consoleClientId ${config.consoleClientId} is not in jwtAudience (${config.jwtAudience.join(', ')}): API Gateway matches a token's aud, or its client_id when it has no aud (Cognito access tokens), against that list, so the console's calls get 401 unless the issuer puts an audience from the list in its access tokens`);
    }
    new s3deploy.BucketDeployment(this, 'Deploy', {
      sources: [s3deploy.Source.asset(dist), s3deploy.Source.jsonData('config.json', {
        ...consoleSignInConfig(config), ...(props.realtime ? { realtime: { httpEndpoint: props.realtime.httpEndpoint } } : {}),
      })],
      destinationBucket: this.bucket, destinationKeyPrefix: 'console/',
      distribution: this.distribution, distributionPaths: ['/console/*'],
      memoryLimit: 256,
      // CDK's upload handler logs to a group with the stage's retention, like every other function.
      logGroup: new logs.LogGroup(this, 'DeployLogs', {
        retention: retentionOf(props.config.logRetentionDays),
        removalPolicy: props.config.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      }),
    });
    const handler = Stack.of(this).node.children.find((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
    if (handler) suppress(handler, bucketDeploymentFindings(this.bucket));
  }
}

/**
 * `/console/config.json` on a deployed stage: sign in at the stage's issuer as its console app client, asking
 * for the admin routes' scope when the stage requires one (without it every admin call is API Gateway's 403).
 */
export function consoleSignInConfig(config: StageConfig): Record<string, unknown> {
  return {
    signIn: 'oidc', issuer: config.jwtIssuer, clientId: config.consoleClientId ?? null, audience: config.jwtAudience[0],
    scope: ['openid', ...(config.adminScope ? [config.adminScope] : [])].join(' '),
  };
}

/**
 * What cdk-nag finds on CDK's own BucketDeployment handler, acknowledged finding by finding (cdk-nag 3 wants
 * each wildcard named): its logs policy, and the object wildcards it needs to copy the asset into `bucket`.
 */
function bucketDeploymentFindings(bucket: s3.Bucket): [string, string][] {
  const bucketId = (Stack.of(bucket).resolve(bucket.bucketArn) as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  const copy = "CDK's BucketDeployment copies the console's files from the CDK asset bucket into this one bucket";
  return [
    ['AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', "CDK's BucketDeployment handler writes its logs with the AWS managed basic-execution policy."],
    ...['s3:GetObject*', 's3:GetBucket*', 's3:List*', 's3:DeleteObject*', 's3:Abort*'].map((a): [string, string] => [`AwsSolutions-IAM5[Action::${a}]`, copy]),
    ['AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*]', copy],
    [`AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`, copy],
    ['AwsSolutions-IAM5[Resource::*]', "CDK's BucketDeployment creates a CloudFront invalidation, which IAM cannot scope to one distribution."],
    ['AwsSolutions-L1', "CDK's BucketDeployment pins its own Python runtime."],
  ];
}

/** Acknowledges cdk-nag findings on `construct` and everything under it (CDK's native validations API). */
function suppress(construct: IConstruct, rules: readonly (readonly [string, string])[]): void {
  for (const [id, reason] of rules) Validations.of(construct).acknowledge({ id, reason });
}
