/**
 * Realtime push on AWS AppSync Events (docs/deploy.md "Realtime"): one Event API per stage with the channel
 * namespace `jobs`.
 *
 * - Connect and subscribe: OPENID_CONNECT with the stage's `jwtIssuer` — the issuer of the HTTP API's JWT
 *   authorizer, so clients use the token they call the API with. AppSync's `clientId` check is left open: it does
 *   not know API Gateway's rule (an access token without `aud` is checked by `client_id`), so the namespace's
 *   onSubscribe handler enforces `jwtAudience` that way, together with the owner/admin rule
 *   (infra/realtime-handler.ts, lib/realtime/subscribe-rules.ts). A connection alone receives nothing.
 * - Publish: AWS_IAM only (the namespace's publish mode). `appsync:EventPublish` on the namespace is granted to
 *   the functions that write stream entries (every function that moves a job: ApiUser cancel, ApiAdmin
 *   retry/cancel, the consumers, the dispatcher's failures before an attempt, the reaper), and only to them;
 *   each gets the HTTP endpoint as REALTIME_HTTP_ENDPOINT (lib/realtime/publisher-from-env.ts).
 * - Logs: handler errors (level ERROR) to a log group of the stack's retention, through a role that may write
 *   only there; set on the L1 resource because the construct's `logConfig` always adds a log-retention Lambda
 *   and the AWS managed AWSAppSyncPushToCloudWatchLogs policy.
 */
import { CfnOutput, RemovalPolicy } from 'aws-cdk-lib';
import * as appsync from 'aws-cdk-lib/aws-appsync';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { JOBS_NAMESPACE } from '../lib/realtime/channel.ts';
import { EVENT_PATH, REALTIME_PATH } from '../lib/realtime/events-protocol.ts';
import { REALTIME_ENDPOINT_ENV } from '../lib/realtime/publisher-from-env.ts';
import { retentionOf } from './app-function.ts';
import type { StageConfig } from './config.ts';
import { jobsNamespaceHandlerCode } from './realtime-handler.ts';

export interface JobsRealtimeProps {
  config: StageConfig;
  /** Functions that publish stream entries: granted publish, given the endpoint. */
  publishers: lambda.Function[];
}

export class JobsRealtime extends Construct {
  readonly api: appsync.EventApi;
  readonly namespace: appsync.ChannelNamespace;
  /** `https://<id>.appsync-api.<region>.amazonaws.com/event` */
  readonly httpEndpoint: string;
  /** `wss://<id>.appsync-realtime-api.<region>.amazonaws.com/event/realtime` */
  readonly realtimeUrl: string;

  constructor(scope: Construct, id: string, props: JobsRealtimeProps) {
    super(scope, id);
    const { config } = props;
    const iam: appsync.AppSyncAuthProvider = { authorizationType: appsync.AppSyncAuthorizationType.IAM };
    const oidc: appsync.AppSyncAuthProvider = {
      authorizationType: appsync.AppSyncAuthorizationType.OIDC,
      openIdConnectConfig: { oidcProvider: config.jwtIssuer },
    };
    this.api = new appsync.EventApi(this, 'Api', {
      apiName: `ai-jobs-${config.stage}-realtime`,
      authorizationConfig: {
        authProviders: [iam, oidc],
        connectionAuthModeTypes: [appsync.AppSyncAuthorizationType.OIDC],
        defaultPublishAuthModeTypes: [appsync.AppSyncAuthorizationType.IAM],
        defaultSubscribeAuthModeTypes: [appsync.AppSyncAuthorizationType.OIDC],
      },
    });
    this.logErrors(config);
    this.namespace = this.api.addChannelNamespace('Jobs', {
      channelNamespaceName: JOBS_NAMESPACE,
      code: appsync.Code.fromInline(jobsNamespaceHandlerCode({
        adminClaim: config.adminClaim, adminGroup: config.adminGroup, audiences: config.jwtAudience,
      })),
      authorizationConfig: {
        publishAuthModeTypes: [appsync.AppSyncAuthorizationType.IAM],
        subscribeAuthModeTypes: [appsync.AppSyncAuthorizationType.OIDC],
      },
    });
    this.httpEndpoint = `https://${this.api.httpDns}${EVENT_PATH}`;
    this.realtimeUrl = `wss://${this.api.realtimeDns}${REALTIME_PATH}`;
    for (const fn of props.publishers) {
      this.namespace.grantPublish(fn);
      fn.addEnvironment(REALTIME_ENDPOINT_ENV, this.httpEndpoint);
    }
    new CfnOutput(scope, 'RealtimeHttpEndpoint', { value: this.httpEndpoint, description: 'AppSync Events HTTP endpoint (the client library\'s httpEndpoint)' });
    new CfnOutput(scope, 'RealtimeWebSocketUrl', { value: this.realtimeUrl, description: 'AppSync Events realtime endpoint' });
    new CfnOutput(scope, 'RealtimeApiId', { value: this.api.apiId });
  }

  /** Handler and request errors to `/aws/appsync/apis/<id>` (where AppSync writes), kept `logRetentionDays`. */
  private logErrors(config: StageConfig): void {
    const logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `/aws/appsync/apis/${this.api.apiId}`,
      retention: retentionOf(config.logRetentionDays),
      removalPolicy: config.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    const role = new iam.Role(this, 'LogsRole', { assumedBy: new iam.ServicePrincipal('appsync.amazonaws.com') });
    logGroup.grantWrite(role);
    (this.api.node.defaultChild as appsync.CfnApi).addPropertyOverride('EventConfig.LogConfig', { CloudWatchLogsRoleArn: role.roleArn, LogLevel: 'ERROR' });
  }
}
