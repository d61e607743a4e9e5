/**
 * The local runtime's realtime push: the hub (./realtime-hub.ts) trusting exactly the tokens the local API
 * trusts (the local key, and the configured OIDC issuer when LOCAL_OIDC_ISSUER is set), with the API's admin
 * rule, accepting publishes signed with the runtime's AWS key pair — and REALTIME_HTTP_ENDPOINT pointed at it,
 * so every publisher in the runtime (consumer thread included) publishes there as deployed functions publish
 * to AppSync Events.
 */
import { adminPolicyFromEnv } from '../../api/auth.ts';
import { verifyLocalToken, type LocalJwtKey, type TokenAudience } from '../../api/local-jwt.ts';
import { REALTIME_ENDPOINT_ENV } from '../../realtime/publisher-from-env.ts';
import { createOidcVerifier, unverifiedIssuer, type LocalOidcSettings } from './local-oidc.ts';
import { startRealtimeHub, type RealtimeHub } from './realtime-hub.ts';

export interface LocalRealtimeOptions {
  port: number;
  host: string;
  jwtKey: LocalJwtKey;
  audience: TokenAudience;
  oidc?: LocalOidcSettings;
}

/** The hub; stopping it also takes {@link REALTIME_ENDPOINT_ENV} back to what it was before the hub started. */
export type LocalRealtime = RealtimeHub;

/** Starts the hub and points this process's (and its future threads') publishers at it. */
export async function startLocalRealtime(env: NodeJS.ProcessEnv, o: LocalRealtimeOptions): Promise<LocalRealtime> {
  const admin = adminPolicyFromEnv(env);
  const oidcVerify = o.oidc ? createOidcVerifier(o.oidc) : undefined;
  const hub = await startRealtimeHub({
    port: o.port, host: o.host,
    verifyToken: (token) => (o.oidc && oidcVerify && unverifiedIssuer(token) === o.oidc.issuer ? oidcVerify(token) : verifyLocalToken(o.jwtKey, token, o.audience)),
    policy: { adminClaim: admin.claim, adminGroup: admin.group, audiences: [o.audience.audience, ...(o.oidc?.audiences ?? [])] },
    publisher: {
      region: env.AWS_REGION ?? 'us-east-1',
      credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID ?? 'local', secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? 'local' },
    },
  });
  const before = env[REALTIME_ENDPOINT_ENV];
  env[REALTIME_ENDPOINT_ENV] = hub.httpEndpoint;
  let stopped: Promise<void> | undefined;
  return {
    ...hub,
    // Idempotent: the runtime stops it on shutdown, and may have stopped it before (a hub that went away).
    stop: () => (stopped ??= hub.stop().finally(() => {
      if (env[REALTIME_ENDPOINT_ENV] !== hub.httpEndpoint) return;
      if (before === undefined) delete env[REALTIME_ENDPOINT_ENV];
      else env[REALTIME_ENDPOINT_ENV] = before;
    })),
  };
}
