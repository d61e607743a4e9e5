/**
 * One WebSocket connection to the local hub, speaking AppSync Events' protocol (lib/realtime/events-protocol.ts):
 * connection_init → connection_ack; subscribe with per-message authorization → subscribe_success or
 * subscribe_error; unsubscribe; publish (refused: the `jobs` namespace takes IAM publishers only, over HTTP).
 * Messages are handled one at a time in arrival order, so an unsubscribe never overtakes its subscribe.
 *
 * Error types (`errorType`), as the service reports them: a malformed message, subscription id or channel, or a
 * namespace other than `jobs` → BadRequestException; a missing, forged or expired token, or a channel the
 * caller may not read → UnauthorizedException; an unknown message type → UnsupportedOperation.
 */
import type { WebSocket } from 'ws';
import type { JWTPayload } from 'jose';
import { channelSegments, JOBS_NAMESPACE } from '../../realtime/channel.ts';
import { EVENTS_ERROR_TYPES, tokenOf, type EventsError } from '../../realtime/events-protocol.ts';
import { authorizeJobSubscription, type SubscribePolicy } from '../../realtime/subscribe-rules.ts';
import { utf8Base64 } from '../../realtime/server-channel.ts';
import type { HubChannels, HubSubscription } from './realtime-hub-channels.ts';

/** Subscriptions one connection may hold (a local limit; the service documents its own quotas). */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 100;
const SUBSCRIPTION_ID = /^[A-Za-z0-9_+-]{1,128}$/;

export interface ConnectionContext {
  channels: HubChannels;
  verifyToken(token: string): Promise<JWTPayload>;
  policy: SubscribePolicy;
  connectionTimeoutMs: number;
  /** A connection whose unsent data exceeds this is cut (slow consumer); it reconnects and backfills. */
  maxBufferedBytes: number;
}

const { badRequest, unauthorized, unsupported } = EVENTS_ERROR_TYPES;

export class HubConnection {
  private readonly subscriptions = new Map<string, HubSubscription>();
  private chain: Promise<void>;
  private admitted = false;

  /** `admission` resolves true once the connection's own token verified; messages wait for it. */
  constructor(private readonly ws: WebSocket, private readonly ctx: ConnectionContext, admission: Promise<boolean>) {
    this.chain = admission.then((ok) => { this.admitted = ok; }, () => undefined);
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? undefined : data.toString();
      this.chain = this.chain.then(() => (this.admitted ? this.handle(text) : undefined)).catch(() => this.ws.terminate());
    });
    ws.on('close', () => this.dispose());
  }

  /** Frees every subscription (the socket closed). */
  dispose(): void {
    for (const sub of this.subscriptions.values()) this.ctx.channels.remove(sub);
    this.subscriptions.clear();
  }

  private async handle(text: string | undefined): Promise<void> {
    const message = parse(text);
    if (!message) return this.send({ type: 'error', errors: [error(badRequest, 'Invalid message: expected a JSON object with a type')] });
    switch (message.type) {
      case 'connection_init':
        return this.send({ type: 'connection_ack', connectionTimeoutMs: this.ctx.connectionTimeoutMs });
      case 'subscribe':
        return this.subscribe(message);
      case 'unsubscribe':
        return this.unsubscribe(message);
      case 'publish':
        return this.send({ type: 'publish_error', id: idOf(message), errors: [error(unauthorized, 'Publishing to namespace jobs requires IAM authorization')] });
      default:
        return this.send({ type: 'error', ...(typeof message.id === 'string' ? { id: message.id } : {}), errors: [error(unsupported, `Unsupported message type ${String(message.type)}`)] });
    }
  }

  private async subscribe(message: Record<string, unknown>): Promise<void> {
    const id = idOf(message);
    const refuse = (type: string, text: string) => this.send({ type: 'subscribe_error', id, errors: [error(type, text)] });
    if (!SUBSCRIPTION_ID.test(id)) return refuse(badRequest, 'Invalid subscription id');
    if (this.subscriptions.has(id)) return refuse(badRequest, 'Subscription id already in use');
    if (this.subscriptions.size >= MAX_SUBSCRIPTIONS_PER_CONNECTION) return refuse(badRequest, 'Too many subscriptions on this connection');
    const segments = typeof message.channel === 'string' ? channelSegments(message.channel, { wildcard: true }) : undefined;
    if (!segments) return refuse(badRequest, 'Invalid Channel Format');
    if (segments[0] !== JOBS_NAMESPACE) return refuse(badRequest, `No channel namespace ${segments[0]}`);
    const token = tokenOf(message.authorization as Record<string, unknown> | undefined);
    if (!token) return refuse(unauthorized, 'Missing authorization');
    const payload = await this.ctx.verifyToken(token).catch((err: unknown) => err as Error);
    if (payload instanceof Error) return refuse(unauthorized, payload.message || 'Invalid token');
    const verdict = authorizeJobSubscription(segments, { sub: payload.sub, claims: payload }, this.ctx.policy, utf8Base64(String(payload.sub)));
    if (verdict !== 'allow') return refuse(unauthorized, `You are not authorized to subscribe to this channel (${verdict})`);
    if (this.ws.readyState !== this.ws.OPEN) return;
    const sub: HubSubscription = { id, channel: `/${segments.join('/')}`, send: (text) => this.deliver(text) };
    this.subscriptions.set(id, sub);
    this.ctx.channels.add(sub);
    this.send({ type: 'subscribe_success', id });
  }

  private unsubscribe(message: Record<string, unknown>): void {
    const id = idOf(message);
    const sub = this.subscriptions.get(id);
    if (!sub) return this.send({ type: 'unsubscribe_error', id, errors: [error(badRequest, 'Subscription not found')] });
    this.subscriptions.delete(id);
    this.ctx.channels.remove(sub);
    this.send({ type: 'unsubscribe_success', id });
  }

  /** A `data` frame; cuts the connection when the client does not keep up. */
  private deliver(text: string): boolean {
    if (this.ws.readyState !== this.ws.OPEN) return false;
    if (this.ws.bufferedAmount > this.ctx.maxBufferedBytes) {
      this.ws.terminate();
      return false;
    }
    this.ws.send(text);
    return true;
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }
}

function parse(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as { type?: unknown }).type === 'string'
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function idOf(message: Record<string, unknown>): string {
  return typeof message.id === 'string' ? message.id : '';
}

function error(errorType: string, message: string): EventsError {
  return { errorType, message };
}
