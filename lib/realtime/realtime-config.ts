/**
 * What `GET /api/ai/realtime` tells a client (docs/streaming.md "Finding the service"): whether this stage pushes
 * job streams, where a subscriber connects (the AppSync Events endpoints, or the local hub's), and the caller's
 * owner segment, so it can name its jobs' channels (`<channelPrefix><jobId>`) without hashing its own `sub`.
 *
 * The endpoint is the one the functions publish to (REALTIME_HTTP_ENDPOINT): subscribing and publishing share the
 * Event API's HTTP domain (the subscriber's `host` authorization header names it).
 */
import { JOBS_NAMESPACE, type RealtimeConfig } from './channel.ts';
import { realtimeUrlOf } from './events-protocol.ts';
import { REALTIME_ENDPOINT_ENV } from './publisher-from-env.ts';
import { ownerSegmentOfSubjectSync } from './server-channel.ts';

export type { RealtimeConfig } from './channel.ts';

/** The realtime configuration for caller `userId` (their JWT `sub`) on a stage whose publish endpoint is `httpEndpoint`. */
export function realtimeConfigFor(userId: string, httpEndpoint: string | undefined): RealtimeConfig {
  const ownerSegment = ownerSegmentOfSubjectSync(userId);
  const endpoint = httpEndpoint?.trim();
  return {
    available: Boolean(endpoint),
    ...(endpoint ? { httpEndpoint: endpoint, realtimeUrl: realtimeUrlOf(endpoint) } : {}),
    ownerSegment,
    channelPrefix: `/${JOBS_NAMESPACE}/${ownerSegment}/`,
  };
}

/** The stage's publish endpoint, from the environment (unset: no realtime push). */
export function realtimeEndpointFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  return env[REALTIME_ENDPOINT_ENV]?.trim() || undefined;
}
