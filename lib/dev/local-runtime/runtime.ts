/**
 * The whole engine on one machine (`npm start`): MySQL (migrated), fauxqs with the stack's queues, the mock AI
 * provider unless a real one is configured, the API routes served over HTTP through the very Lambda handlers,
 * eager + scheduled dispatch, the reaper, and queue pollers feeding the consumer handlers real SQS batches.
 */
import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Logger } from '@aws-lambda-powertools/logger';
import { createEventBridgeClient, createSqsClient } from '../../config/aws.ts';
import { closePrisma, getPrisma } from '../../db/client.ts';
import { closeSqlPool } from '../../db/sql-pool.ts';
import { migrateDatabase } from '../../db/migrator.ts';
import { loadOrCreateLocalJwtKey, type LocalJwtKey, type TokenAudience } from '../../api/local-jwt.ts';
import { createDispatcherDeps } from '../../outbox/dispatcher-deps.ts';
import { createOutboxRoutes } from '../../outbox/routes.ts';
import { JOB_TERMINAL_EVENTS } from '../../outbox/event-types.ts';
import type { LeaseTiming } from '../../engine/lease-keeper.ts';
import { startMockAiServer, type MockAiServer, type MockAiServerOptions } from '../mock-ai-server.ts';
import { jobTypeMockResponder } from '../mock-responder.ts';
import { createGatewayServer } from './http-gateway.ts';
import { CONSOLE_PATH, createConsoleRoutes } from './console-routes.ts';
import { createOidcVerifier, localOidcFromEnv } from './local-oidc.ts';
import { DEFAULT_JWT_KEY_FILE, LOCAL_TOKEN_AUDIENCE } from './local-auth.ts';
import { LOCAL_EVENT_BUS, startLocalAws, type LocalAws } from './local-aws.ts';
import { recoverOpenJobs } from './boot-recovery.ts';
import { logEventRoute } from './log-event-route.ts';
import { startBackgroundWork, type BackgroundWork } from './background-work.ts';
import { startLocalRealtime } from './local-realtime.ts';
import type { RealtimeHub } from './realtime-hub.ts';
import { registerLocalPublisher } from './local-publisher.ts';
import { jobRegistry } from '../../jobs/registry.ts';

export { DEFAULT_JWT_KEY_FILE, LOCAL_TOKEN_AUDIENCE };

export interface LocalRuntimeOptions {
  databaseUrl: string;
  /** 0 picks a free port. */
  port: number;
  host?: string;
  sqsPort?: number;
  /** Use this SQS-API server instead of starting fauxqs in-process. */
  sqsEndpoint?: string;
  /** The mock provider's pace and failures (../mock-ai-env.ts reads them from the environment for `npm start`). */
  mockAi?: Pick<MockAiServerOptions, 'port' | 'latencyMs' | 'failureRate' | 'scenario' | 'tokensPerSecond' | 'firstTokenDelayMs' | 'rateLimits'>;
  /** Use this OpenAI-compatible mock (e.g. in another process) instead of starting one. */
  mockAiUrl?: string;
  /** Start moto_server (when installed) for EventBridge and KMS. */
  useMoto?: boolean;
  /** Use this AWS-API server (moto, LocalStack) for EventBridge and KMS instead of starting one. */
  awsEndpoint?: string;
  jwtKey?: LocalJwtKey;
  timing?: LeaseTiming;
  dispatchIntervalMs?: number;
  reaperIntervalMs?: number;
  /** Rollups and retention (lib/maintenance/); default 60 s (15 min in AWS). */
  maintenanceIntervalMs?: number;
  /** The built admin console served at /console/ (default console/dist). */
  consoleDistDir?: string;
  /**
   * The realtime hub's port (0: a free one). `false`: no hub; publishers publish where REALTIME_HTTP_ENDPOINT
   * points, as deployed functions do, or nowhere when it is unset (readers long-poll).
   */
  realtimePort?: number | false;
  log?: (line: string) => void;
}

/** Where `npm run console:build` writes the console. */
export const DEFAULT_CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist', import.meta.url));

export interface LocalRuntime {
  url: string;
  /** The admin console, e.g. http://127.0.0.1:3000/console/ */
  consoleUrl: string;
  port: number;
  jwtKey: LocalJwtKey;
  audience: TokenAudience;
  aws: LocalAws;
  mock?: MockAiServer;
  /**
   * The local AppSync Events stand-in (absent with `realtimePort: false`). `stop()` ends the hub alone, as a
   * realtime service that goes away: jobs go on, publishes fail (bounded, counted), readers fall back to the log.
   */
  realtime?: Pick<RealtimeHub, 'httpEndpoint' | 'realtimeUrl' | 'stop'>;
  /** Stops taking requests and messages, lets in-flight jobs finish (bounded), closes everything. */
  stop(): Promise<void>;
}

/** True when a real provider is configured, so the mock is not started. */
function realProviderConfigured(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.DEEPSEEK_API_KEY?.trim() || (env.OPENAI_COMPAT_BASE_URL?.trim() && env.OPENAI_COMPAT_API_KEY?.trim()) || env.PLATFORM_PROVIDER_SECRET_ID?.trim());
}

export async function startLocalRuntime(o: LocalRuntimeOptions): Promise<LocalRuntime> {
  const env = process.env;
  const log = o.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  // CloudWatch metrics (EMF lines on stdout) mean nothing locally.
  env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  await migrateDatabase(o.databaseUrl);
  env.DATABASE_URL = o.databaseUrl;
  const aws = await startLocalAws(env, { sqsPort: o.sqsPort, sqsEndpoint: o.sqsEndpoint, useMoto: o.useMoto ?? true, awsEndpoint: o.awsEndpoint, log });
  if (o.mockAiUrl) env.MOCK_AI_BASE_URL = o.mockAiUrl;
  const mock = realProviderConfigured(env) || o.mockAiUrl
    ? undefined
    : await startMockAiServer({ ...o.mockAi, respond: jobTypeMockResponder, apiKey: 'mock-key' });
  if (mock) env.MOCK_AI_BASE_URL = mock.url;
  log(`AI provider: ${mock ? `mock at ${mock.url}` : o.mockAiUrl ? `mock at ${o.mockAiUrl}` : 'configured real provider'}`);

  const jwtKey = o.jwtKey ?? (await loadOrCreateLocalJwtKey(DEFAULT_JWT_KEY_FILE));
  const oidc = localOidcFromEnv(env);
  // The issuer the API handlers treat as the stage's (lib/api/auth.ts: a Cognito user pool's group lists split
  // on spaces); the runtime's own tokens have another `iss` and keep the strict rule.
  if (oidc) env.JWT_ISSUER ??= oidc.issuer;
  // Before any publisher exists (the consumer thread reads the environment when it starts).
  const realtime = o.realtimePort === false ? undefined : await startLocalRealtime(env, {
    port: o.realtimePort ?? 0, host: o.host ?? '127.0.0.1', jwtKey, audience: LOCAL_TOKEN_AUDIENCE, ...(oidc ? { oidc } : {}),
  });
  if (realtime) log(`realtime push (AppSync Events protocol): ${realtime.realtimeUrl} (publish: ${realtime.httpEndpoint})`);
  // Every transition and chunk of this thread (API handlers, dispatcher, reaper, boot recovery) publishes here.
  const publishing = registerLocalPublisher(env, log);

  const dispatcher = localDispatcher(aws, log);
  // Handlers are imported after the environment is complete: they read it when first used.
  const [{ handler: userHandler }, { handler: adminHandler }, { handler: streamHandler }] = await Promise.all([
    import('../../../functions/api-user.ts'), import('../../../functions/api-admin.ts'), import('../../../functions/api-stream.ts'),
  ]);
  // The previous run's messages died with its in-memory queues: give its open jobs a message again.
  const recovered = await recoverOpenJobs(getPrisma(), Date.now().toString(36));
  if (recovered.reenqueued > 0) log(`re-enqueued ${recovered.reenqueued} open job(s) left by the previous run (${recovered.released} interrupted while running)`);
  const work: BackgroundWork = await startBackgroundWork({
    aws, dispatcher, registry: jobRegistry, dispatchIntervalMs: o.dispatchIntervalMs ?? 2_000, reaperIntervalMs: o.reaperIntervalMs ?? 10_000,
    maintenanceIntervalMs: o.maintenanceIntervalMs ?? 60_000, log,
    consumerThread: o.timing ? { timing: o.timing } : {},
  });

  if (oidc) log(`console sign-in: OIDC at ${oidc.issuer} (client ${oidc.clientId}); its tokens are trusted too (LOCAL_OIDC_ISSUER)`);
  const localRoutes = createConsoleRoutes({
    distDir: o.consoleDistDir ?? DEFAULT_CONSOLE_DIST, jwtKey, audience: LOCAL_TOKEN_AUDIENCE, ...(oidc ? { oidc: { issuer: oidc.issuer, clientId: oidc.clientId } } : {}),
    ...(realtime ? { realtime: { httpEndpoint: realtime.httpEndpoint, realtimeUrl: realtime.realtimeUrl } } : {}),
  });
  const server = createGatewayServer({
    jwtKey, audience: LOCAL_TOKEN_AUDIENCE, userHandler, adminHandler, streamHandler, localRoutes, onError: (err) => log(`gateway error: ${(err as Error).message}`),
    ...(oidc ? { oidc: { issuer: oidc.issuer, verify: createOidcVerifier(oidc) } } : {}),
  });
  const port = await listen(server, o.port, o.host ?? '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`, consoleUrl: `http://127.0.0.1:${port}${CONSOLE_PATH}`, port, jwtKey, audience: LOCAL_TOKEN_AUDIENCE, aws, ...(mock ? { mock } : {}),
    ...(realtime ? { realtime: { httpEndpoint: realtime.httpEndpoint, realtimeUrl: realtime.realtimeUrl, stop: realtime.stop } } : {}),
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await work.stop();
      await publishing.unregister();
      await realtime?.stop();
      await mock?.close();
      await aws.stop();
      await closePrisma();
      await closeSqlPool();
    },
  };
}

function localDispatcher(aws: LocalAws, log: (line: string) => void) {
  const routes = new Map(createOutboxRoutes({
    sqs: createSqsClient(), eventBridge: createEventBridgeClient(), eventBusName: LOCAL_EVENT_BUS,
    queueUrls: { interactive: aws.queues.interactive.queueUrl, background: aws.queues.background.queueUrl },
  }));
  if (!aws.motoEndpoint) for (const type of Object.values(JOB_TERMINAL_EVENTS)) routes.set(type, logEventRoute(log));
  return createDispatcherDeps({ db: getPrisma(), routes, logger: new Logger({ serviceName: 'local-dispatcher', logLevel: 'WARN' }) });
}

async function listen(server: http.Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as { port: number }).port;
}
