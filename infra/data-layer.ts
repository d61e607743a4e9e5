/**
 * Network and database: a two-AZ VPC (public subnets for the NAT gateways, private subnets with egress for
 * the Lambdas, which must reach the AI provider, isolated subnets for the database), an Aurora MySQL 3
 * Serverless v2 cluster with an RDS-generated secret, and an RDS Proxy in front of it.
 *
 * Lambdas reach the database only through the proxy, with the secret's user and password over TLS (the
 * proxy requires it): many short-lived Lambda connections become a few pooled database connections.
 * The secret rotates every {@link DATABASE_SECRET_ROTATION_DAYS} days ({@link DataLayer.rotateSecret}); the
 * proxy reads it itself, the functions read it again when a new connection is refused
 * (lib/db/credential-rotation.ts).
 * The VPC spans the stage's `availabilityZones` (context) — RDS Proxy is not offered in every AZ — or, when
 * unset, the region's first two (`Fn::GetAZs`): either way the stack stays environment-agnostic (no lookups).
 * The cluster's log exports go to log groups created here with the stage's retention.
 */
import { CfnOutput, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { CLUSTER_PARAMETERS, INSTANCE_PARAMETERS } from '../lib/db/server-settings.ts';
import { retentionOf, type DatabaseAccess } from './app-function.ts';
import { API_FUNCTION_TIMEOUT_SECONDS, type StageConfig } from './config.ts';
import { ApiEndpoints } from './vpc-endpoints.ts';
import { acknowledge } from './acknowledge.ts';

/** The schema the application uses (the secret's `dbname`). */
export const DATABASE_NAME = 'ai_jobs';
const DATABASE_USER = 'ai_jobs_admin';
/** Aurora log types exported to CloudWatch Logs (`/aws/rds/cluster/<cluster>/<type>`). */
export const DATABASE_LOG_EXPORTS = ['error', 'slowquery'] as const;

/** Days between two rotations of the database secret (Secrets Manager's default schedule). */
export const DATABASE_SECRET_ROTATION_DAYS = 30;

/** RDS Proxy's ConnectionBorrowTimeout: 5 s below the API functions' timeout. */
export const PROXY_BORROW_TIMEOUT_SECONDS = API_FUNCTION_TIMEOUT_SECONDS - 5;

/**
 * RDS Proxy's IdleClientTimeout: a client connection idle this long is closed by the proxy (default 30 min).
 * It bounds how long a vanished scheduled dispatcher's held claim keeps its row locks should the server's
 * `wait_timeout` (the claim's lock TTL, lib/outbox/held-claim.ts) not end the database session first, and it
 * frees sooner the connections of Lambda containers that froze and never came back. Above the lock TTL, so the
 * proxy never cuts a live claim (test/infra/stack.test.ts). The pools survive it: a pooled connection idle over
 * half a second is pinged before use (lib/db/database-url.ts). docs/deploy.md, "RDS Proxy".
 */
export const PROXY_IDLE_CLIENT_TIMEOUT_SECONDS = 300;

export class DataLayer extends Construct {
  readonly vpc: ec2.Vpc;
  readonly cluster: rds.DatabaseCluster;
  readonly proxy: rds.DatabaseProxy;
  /** The proxy's name: its CloudWatch metrics' `ProxyName` dimension. */
  readonly proxyName: string;
  readonly secret: secretsmanager.ISecret;
  /** Every Lambda gets this group; the proxy admits it on the MySQL port. */
  readonly lambdaSecurityGroup: ec2.SecurityGroup;
  private readonly requireTls: boolean;

  constructor(scope: Construct, id: string, config: StageConfig) {
    super(scope, id);
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ...(config.availabilityZones ? { availabilityZones: config.availabilityZones } : { maxAzs: 2 }),
      natGateways: config.natGateways,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'lambda', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
        { name: 'database', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
    });
    this.lambdaSecurityGroup = new ec2.SecurityGroup(this, 'LambdaSecurityGroup', {
      vpc: this.vpc, description: 'AI job Lambdas', allowAllOutbound: true,
    });
    // Rejected traffic only: what a misconfigured security group or an unexpected caller looks like, at little cost.
    this.vpc.addFlowLog('RejectedFlows', {
      trafficType: ec2.FlowLogTrafficType.REJECT,
      destination: ec2.FlowLogDestination.toCloudWatchLogs(new logs.LogGroup(this, 'FlowLogs', {
        retention: retentionOf(config.logRetentionDays),
        removalPolicy: config.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      })),
    });
    const endpoints = config.vpcEndpoints ? new ApiEndpoints(this, 'ApiEndpoints', { vpc: this.vpc, clients: this.lambdaSecurityGroup }) : undefined;
    this.cluster = this.createCluster(config);
    this.secret = this.cluster.secret!;
    this.rotateSecret(endpoints);
    this.proxyName = `ai-jobs-${config.stage}`;
    this.proxy = this.createProxy(config);
    this.requireTls = config.database.requireTls;
    new CfnOutput(scope, 'DatabaseProxyEndpoint', { value: this.proxy.endpoint });
  }

  /**
   * What functions need to connect: the proxy endpoint, the schema, the secret's ARN (lib/config/database-secret.ts
   * builds DATABASE_URL from it at cold start), TLS when the proxy requires it, and the VPC to run in.
   */
  access(): DatabaseAccess {
    return {
      secret: this.secret,
      network: { vpc: this.vpc, securityGroup: this.lambdaSecurityGroup },
      environment: {
        DATABASE_SECRET_ARN: this.secret.secretArn,
        DATABASE_HOST: this.proxy.endpoint,
        DATABASE_NAME,
        ...(this.requireTls ? { DATABASE_TLS: 'true' } : {}),
      },
    };
  }

  private createCluster(config: StageConfig): rds.DatabaseCluster {
    const production = config.production;
    const generatedSecret = new rds.DatabaseSecret(this, 'Secret', {
      username: DATABASE_USER,
      secretName: `ai-jobs/${config.stage}/database`,
    });
    // Retained with a retained cluster: without it nobody knows the master password.
    generatedSecret.applyRemovalPolicy(production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);
    const clusterIdentifier = `ai-jobs-${config.stage}`;
    // Created before the cluster so RDS exports into them instead of creating groups that never expire.
    const exportLogs = DATABASE_LOG_EXPORTS.map((type) => new logs.LogGroup(this, `${type}Logs`, {
      logGroupName: `/aws/rds/cluster/${clusterIdentifier}/${type}`,
      retention: retentionOf(config.logRetentionDays),
      removalPolicy: production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    }));
    const engine = rds.DatabaseClusterEngine.auroraMysql({ version: rds.AuroraMysqlEngineVersion.VER_3_10_0 });
    // The server settings the code relies on, pinned instead of left to engine defaults (lib/db/server-settings.ts;
    // the deploy's preflight checks them through the proxy). Aurora MySQL 3 takes some per cluster, some per instance.
    const instanceParameters = new rds.ParameterGroup(this, 'InstanceParameters', {
      engine, description: `ai-jobs-${config.stage}: sql_mode, isolation, max_allowed_packet`, parameters: { ...INSTANCE_PARAMETERS },
    });
    const cluster = new rds.DatabaseCluster(this, 'Cluster', {
      clusterIdentifier,
      engine,
      parameterGroup: new rds.ParameterGroup(this, 'ClusterParameters', {
        engine, description: `ai-jobs-${config.stage}: time zone, character set, collation`, parameters: { ...CLUSTER_PARAMETERS },
      }),
      credentials: rds.Credentials.fromSecret(generatedSecret),
      defaultDatabaseName: DATABASE_NAME,
      writer: rds.ClusterInstance.serverlessV2('Writer', { parameterGroup: instanceParameters }),
      readers: Array.from({ length: config.database.readers }, (_, i) =>
        rds.ClusterInstance.serverlessV2(`Reader${i + 1}`, { scaleWithWriter: true, parameterGroup: instanceParameters })),
      serverlessV2MinCapacity: config.database.minCapacity,
      serverlessV2MaxCapacity: config.database.maxCapacity,
      vpc: this.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      storageEncrypted: true,
      backup: { retention: Duration.days(production ? 14 : 1) },
      deletionProtection: production,
      removalPolicy: production ? RemovalPolicy.RETAIN : RemovalPolicy.SNAPSHOT,
      cloudwatchLogsExports: [...DATABASE_LOG_EXPORTS],
    });
    exportLogs.forEach((group) => cluster.node.addDependency(group));
    acknowledgeClusterFindings(cluster, production);
    return cluster;
  }

  /**
   * Single-user rotation of the cluster's secret by Secrets Manager's hosted rotation function for MySQL (a
   * serverless application in the stack), in the Lambda subnets: it reaches Secrets Manager through the NAT
   * gateways, or the interface endpoint when `vpcEndpoints` is on (admitted on 443), and the cluster directly
   * (admitted on 3306). Not rotated at deploy time (`rotateImmediatelyOnUpdate: false`): the migration step must
   * not see the password change under it; the first rotation comes on schedule.
   */
  private rotateSecret(endpoints: ApiEndpoints | undefined): void {
    const securityGroup = new ec2.SecurityGroup(this, 'SecretRotationSecurityGroup', {
      vpc: this.vpc, description: 'Rotation of the database secret', allowAllOutbound: true,
    });
    this.cluster.addRotationSingleUser({
      automaticallyAfter: Duration.days(DATABASE_SECRET_ROTATION_DAYS),
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      securityGroup,
      rotateImmediatelyOnUpdate: false,
    });
    endpoints?.securityGroup.addIngressRule(securityGroup, ec2.Port.tcp(443), 'rotation of the database secret to Secrets Manager');
  }

  private createProxy(config: StageConfig): rds.DatabaseProxy {
    const proxySecurityGroup = new ec2.SecurityGroup(this, 'ProxySecurityGroup', {
      vpc: this.vpc, description: 'RDS Proxy of the AI job database', allowAllOutbound: false,
    });
    const proxy = this.cluster.addProxy('Proxy', {
      dbProxyName: this.proxyName,
      vpc: this.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      secrets: [this.secret],
      securityGroups: [proxySecurityGroup],
      requireTLS: config.database.requireTls,
      iamAuth: false,
      // How long a statement waits for a database connection when the proxy's pool is full. Shorter than the API
      // functions' timeout, so a request at that moment gets the proxy's error, and with it our 503 with
      // Retry-After, instead of being killed by Lambda with nothing but the gateway's 500 for its caller.
      borrowTimeout: Duration.seconds(PROXY_BORROW_TIMEOUT_SECONDS),
      idleClientTimeout: Duration.seconds(PROXY_IDLE_CLIENT_TIMEOUT_SECONDS),
      // The outbox claims' `SET TRANSACTION ISOLATION LEVEL READ COMMITTED` (next-transaction scope, always in the
      // same query as its START TRANSACTION: lib/outbox/outbox-claims.ts) is not among the variables the proxy
      // tracks, and would pin every session that claims. The driver's `SET time_zone` on connect is tracked and
      // needs no filter. Kept while lib/ sends that statement (test/infra/stack.test.ts); docs/deploy.md says why.
      sessionPinningFilters: [rds.SessionPinningFilter.EXCLUDE_VARIABLE_SETS],
    });
    proxy.connections.allowFrom(this.lambdaSecurityGroup, ec2.Port.tcp(3306), 'Lambdas to the proxy');
    this.cluster.connections.allowDefaultPortFrom(proxySecurityGroup, 'RDS Proxy to the cluster');
    proxySecurityGroup.addEgressRule(this.cluster.connections.securityGroups[0]!, ec2.Port.tcp(3306), 'proxy to the cluster');
    return proxy;
  }
}

/** cdk-nag findings on the cluster and its secret, and why they are accepted. */
function acknowledgeClusterFindings(cluster: rds.DatabaseCluster, production: boolean): void {
  acknowledge(cluster, 'AwsSolutions-RDS6',
    'Clients authenticate to RDS Proxy with the Secrets Manager secret (TLS required); nothing connects to the cluster with IAM');
  acknowledge(cluster, 'AwsSolutions-RDS11',
    'Isolated subnets, reachable only from the proxy security group: a non-default port would hide nothing');
  acknowledge(cluster, 'AwsSolutions-RDS14',
    'Recovery is point-in-time restore from continuous backups; Backtrack must be chosen at creation and bills per change record');
  if (!production) acknowledge(cluster, 'AwsSolutions-RDS10', 'Non-production stages are disposable; production sets deletion protection');
}
