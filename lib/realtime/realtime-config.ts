/**
 * What `GET /api/ai/realtime` tells a client (docs/streaming.md "Finding the service"): whether this stage pushes
 * job streams, where a subscriber connects (the AppSync Events endpoints, or the local hub's), and the caller's
 * owner segment, so it can name its jobs' channels (`<channelPrefix><jobId>`) without hashing its own `sub`.
 *
 * The endpoint is the one the functions publish to (REALTIME_HTTP_ENDPOINT): subscribing and publishing share the
 * Event API's HTTP domain (the subscriber's `host` authorization header names it).
 */
import { JOBS_NAMESPACE } from './channel.ts';
import { realtimeUrlOf } from './events-protocol.ts';
import { REALTIME_ENDPOINT_ENV } from './publisher-from-env.ts';
import { ownerSegmentOfSubjectSync } from './server-channel.ts';

/** The answer of `GET /api/ai/realtime` (lib/api/response-schemas.ts `RealtimeConfig`). */
export interface RealtimeConfig {
  /** False: no realtime push on this stage; read the stream log (long-poll) instead. */
  available: boolean;
  /** The Event API's HTTP endpoint (the client library's `httpEndpoint`), when available. */
  httpEndpoint?: string;
  /** Its WebSocket endpoint (`wss://…/event/realtime`), when available. */
  realtimeUrl?: string;
  /** The caller's owner segment (lib/realtime/channel.ts). */
  ownerSegment: string;
  /** A job's channel is this followed by its id; `<channelPrefix>*` is every job of the caller. */
  channelPrefix: string;
}

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
