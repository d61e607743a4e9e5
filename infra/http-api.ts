/**
 * The HTTP API: one route per entry of lib/api/routes.ts, user routes to the user Lambda, admin routes to the
 * admin Lambda and stream routes to the stream Lambda, every route behind the JWT authorizer (issuer and
 * audience from context). The admin
 * Lambda also checks the caller's `SUPER_ADMIN` role itself (lib/api/auth.ts); an optional `adminScope`
 * makes API Gateway require an OAuth scope on admin routes as well. Throttling is set on the stage.
 *
 * CORS (`corsOrigins`, none by default): API Gateway answers preflight `OPTIONS` itself. No route is `ANY` or
 * `OPTIONS`, so a preflight never reaches the JWT authorizer (browsers send it without credentials).
 */
import { CfnOutput, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ADMIN_ROUTES, STREAM_ROUTES, USER_ROUTES, type ApiRoute } from '../lib/api/routes.ts';
import { retentionOf } from './app-function.ts';
import type { StageConfig } from './config.ts';

/**
 * Request headers browsers may send cross-origin: the bearer token, JSON bodies, and the create's
 * `Idempotency-Key` (without it a browser could not make a create safe to repeat).
 */
export const CORS_ALLOWED_HEADERS = ['authorization', 'content-type', 'idempotency-key'];

/**
 * Response headers browser code may read cross-origin (beyond the CORS-safelisted ones): the new job's
 * `Location`, `Idempotent-Replayed` on a replayed create, and `Retry-After` on 429 and 503.
 */
export const CORS_EXPOSED_HEADERS = ['location', 'idempotent-replayed', 'retry-after'];

export interface JobsHttpApiProps {
  config: StageConfig;
  userFunction: lambda.IFunction;
  adminFunction: lambda.IFunction;
  /** The stream routes' function (STREAM_ROUTES): its owner routes are user routes, its admin routes admin routes. */
  streamFunction: lambda.IFunction;
}

/** Fields of each access log line (HTTP API `$context` variables). */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  time: '$context.requestTime',
  routeKey: '$context.routeKey',
  status: '$context.status',
  latencyMs: '$context.responseLatency',
  integrationError: '$context.integrationErrorMessage',
  authorizerError: '$context.authorizer.error',
  sourceIp: '$context.identity.sourceIp',
};

export class JobsHttpApi extends Construct {
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;

  constructor(scope: Construct, id: string, props: JobsHttpApiProps) {
    super(scope, id);
    const { config } = props;
    const authorizer = new HttpJwtAuthorizer('Jwt', config.jwtIssuer, { jwtAudience: config.jwtAudience });
    this.api = new apigw.HttpApi(this, 'Api', {
      apiName: `ai-jobs-${config.stage}`,
      createDefaultStage: false,
      defaultAuthorizer: authorizer,
      ...(config.corsOrigins.length ? { corsPreflight: corsOf(config.corsOrigins) } : {}),
    });
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: retentionOf(config.logRetentionDays),
      removalPolicy: config.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: config.apiThrottle.rateLimit, burstLimit: config.apiThrottle.burstLimit },
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    this.addRoutes(USER_ROUTES, new HttpLambdaIntegration('UserIntegration', props.userFunction), authorizer, []);
    const adminScopes = config.adminScope ? [config.adminScope] : [];
    this.addRoutes(ADMIN_ROUTES, new HttpLambdaIntegration('AdminIntegration', props.adminFunction), authorizer, adminScopes);
    const stream = new HttpLambdaIntegration('StreamIntegration', props.streamFunction);
    this.addRoutes(STREAM_ROUTES.filter((r) => r.access === 'owner'), stream, authorizer, []);
    this.addRoutes(STREAM_ROUTES.filter((r) => r.access === 'admin'), stream, authorizer, adminScopes);
    new CfnOutput(scope, 'ApiUrl', { value: this.stage.url });
  }

  private addRoutes(
    routes: readonly ApiRoute[],
    integration: HttpLambdaIntegration,
    authorizer: HttpJwtAuthorizer,
    authorizationScopes: string[],
  ): void {
    for (const route of routes) {
      this.api.addRoutes({
        path: route.path,
        methods: [apigw.HttpMethod[route.method]],
        integration,
        authorizer,
        ...(authorizationScopes.length ? { authorizationScopes } : {}),
      });
    }
  }
}

/**
 * CORS for `origins`: the methods our routes use, the request headers in {@link CORS_ALLOWED_HEADERS}, the
 * response headers in {@link CORS_EXPOSED_HEADERS} (API Gateway adds them to the integration's answers).
 */
function corsOf(origins: string[]): apigw.CorsPreflightOptions {
  const methods = [...new Set([...USER_ROUTES, ...ADMIN_ROUTES, ...STREAM_ROUTES].map((route) => apigw.CorsHttpMethod[route.method]))];
  return {
    allowOrigins: origins,
    allowHeaders: CORS_ALLOWED_HEADERS,
    exposeHeaders: CORS_EXPOSED_HEADERS,
    allowMethods: [...methods, apigw.CorsHttpMethod.OPTIONS],
    allowCredentials: false,
    maxAge: Duration.hours(1),
  };
}
