/**
 * A subscriber for job streams over AWS AppSync Events' WebSocket protocol, against the deployed Event API and
 * the local hub alike (lib/realtime/events-protocol.ts). Runs in Node 24 and in browsers: the global WebSocket,
 * WebCrypto and nothing Node-only.
 *
 * One connection carries every subscription; it opens with the first subscription and closes with the last
 * (connection-minutes are billed). It authenticates with the caller's JWT in the `header-` subprotocol and again
 * in every subscribe message (`getToken` is asked each time, so a refreshed token is used), keeps track of `ka`,
 * and reconnects with jittered exponential backoff after a drop, re-subscribing everything. Pushes are hints:
 * a reader calls `onSubscribed` → backfill from its last `seq` (each time, reconnects included), and
 * de-duplicates by `seq`; a refused subscription (`UnauthorizedException`, `BadRequestException`) ends it with
 * `onError`, and the reader long-polls instead.
 */
import type { StreamPush } from '../stream/protocol.ts';
import { isStreamPush } from '../stream/push-guard.ts';
import {
  EVENT_WS_SUBPROTOCOL, EVENTS_ERROR_TYPES, authSubprotocol, parseServerMessage, realtimeUrlOf, tokenAuthorization, type ServerMessage,
} from '../realtime/events-protocol.ts';
import { CLIENT_ERROR_TYPES, RealtimeError, backoffDelay, realtimeErrorOf } from './realtime-errors.ts';

export { RealtimeError, CLIENT_ERROR_TYPES } from './realtime-errors.ts';

export interface RealtimeClientOptions {
  /** The Event API's HTTP endpoint (stack output RealtimeHttpEndpoint), or the local hub's, e.g. http://127.0.0.1:3001/event */
  httpEndpoint: string;
  /** The caller's JWT, as for the HTTP API (asked on every connect and subscribe). */
  getToken(): string | Promise<string>;
  /** Reconnect delays: the first, and the cap (defaults 500 ms and 30 s). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** How long to wait for `connection_ack` (default 15 s). */
  handshakeTimeoutMs?: number;
  /** Connection problems: refused (`UnauthorizedException`: the client stops), lost, keep-alive timeout. */
  onConnectionError?(err: RealtimeError): void;
  /** A WebSocket implementation (default: the global one). */
  WebSocket?: typeof WebSocket;
}

export interface SubscriptionHandlers {
  /** A push: the entries one append committed (a hint; order and de-duplicate by `seq`). */
  onPush(push: StreamPush): void;
  /** The subscription is live (first time, and after every reconnect): backfill from the last `seq` now. */
  onSubscribed?(): void;
  /** The subscription was refused (it ends; `retryable` false) or a push could not be delivered. */
  onError?(err: RealtimeError): void;
  /**
   * The connection dropped (or could not be opened): pushes stop until the client has reconnected and
   * `onSubscribed` is called again. A reader reads the log meanwhile (long-poll).
   */
  onDisconnected?(err: RealtimeError): void;
}

export interface RealtimeSubscription {
  unsubscribe(): void;
}

export interface RealtimeClient {
  /** Subscribes to `channel` (lib/realtime/channel.ts `jobChannel`, or a `/jobs/<owner>/*` of one's own). */
  subscribe(channel: string, handlers: SubscriptionHandlers): RealtimeSubscription;
  /** Ends every subscription and the connection; the client cannot be used again. */
  close(): void;
}

interface Sub {
  id: string;
  channel: string;
  handlers: SubscriptionHandlers;
}

/** A realtime client; it connects on the first subscription. */
export function createRealtimeClient(options: RealtimeClientOptions): RealtimeClient {
  return new EventsClient(options);
}

class EventsClient implements RealtimeClient {
  private readonly subs = new Map<string, Sub>();
  private readonly realtimeUrl: string;
  private readonly httpHost: string;
  private ws: WebSocket | undefined;
  private acknowledged = false;
  private connecting = false;
  private closed = false;
  private attempt = 0;
  private lastSeen = 0;
  private timers: ReturnType<typeof setTimeout>[] = [];
  private watchdog: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly o: RealtimeClientOptions) {
    this.realtimeUrl = realtimeUrlOf(o.httpEndpoint);
    this.httpHost = new URL(o.httpEndpoint).host;
  }

  subscribe(channel: string, handlers: SubscriptionHandlers): RealtimeSubscription {
    if (this.closed) throw new Error('the realtime client is closed');
    const sub: Sub = { id: globalThis.crypto.randomUUID(), channel, handlers };
    this.subs.set(sub.id, sub);
    if (!this.ws && !this.connecting) void this.connect();
    else if (this.acknowledged) void this.sendSubscribe(sub);
    return { unsubscribe: () => this.unsubscribe(sub) };
  }

  close(): void {
    this.closed = true;
    this.subs.clear();
    this.disconnect();
  }

  private unsubscribe(sub: Sub): void {
    if (!this.subs.delete(sub.id)) return;
    if (this.acknowledged) this.send({ type: 'unsubscribe', id: sub.id });
    if (this.subs.size === 0) this.disconnect();
  }

  private async connect(): Promise<void> {
    const Impl = this.o.WebSocket ?? globalThis.WebSocket;
    let ws: WebSocket;
    this.connecting = true;
    try {
      const token = await this.o.getToken();
      if (this.closed || this.subs.size === 0 || this.ws) return;
      ws = new Impl(this.realtimeUrl, [EVENT_WS_SUBPROTOCOL, authSubprotocol(tokenAuthorization(this.httpHost, token))]);
    } catch (err) {
      return this.lost(new RealtimeError(CLIENT_ERROR_TYPES.connectionLost, 'could not open the connection', { cause: err }));
    } finally {
      this.connecting = false;
    }
    this.ws = ws;
    this.acknowledged = false;
    ws.addEventListener('open', () => this.send({ type: 'connection_init' }));
    ws.addEventListener('message', (event) => this.onMessage(ws, event.data));
    ws.addEventListener('close', () => ws === this.ws && this.lost(new RealtimeError(CLIENT_ERROR_TYPES.connectionLost, 'connection closed')));
    this.later(() => {
      if (ws === this.ws && !this.acknowledged) this.drop(new RealtimeError(CLIENT_ERROR_TYPES.handshakeTimeout, 'no connection_ack'));
    }, this.o.handshakeTimeoutMs ?? 15_000);
  }

  private onMessage(ws: WebSocket, data: unknown): void {
    if (ws !== this.ws) return;
    this.lastSeen = Date.now();
    const message = parseServerMessage(data);
    if (message) this.dispatch(message);
  }

  private dispatch(message: ServerMessage): void {
    switch (message.type) {
      case 'connection_ack':
        return this.acknowledge(message.connectionTimeoutMs ?? message.payload?.connectionTimeoutMs ?? 300_000);
      case 'connection_error':
        return this.refused(realtimeErrorOf(message.errors, EVENTS_ERROR_TYPES.unauthorized));
      case 'subscribe_success':
        this.attempt = 0;
        return this.subs.get(message.id)?.handlers.onSubscribed?.();
      case 'subscribe_error':
        return this.subscriptionRefused(message.id, realtimeErrorOf(message.errors, EVENTS_ERROR_TYPES.badRequest));
      case 'data':
        return this.deliver(message.id, message.event);
      case 'broadcast_error':
        return this.subs.get(message.id)?.handlers.onError?.(realtimeErrorOf(message.errors, EVENTS_ERROR_TYPES.messageProcessing));
      case 'error':
        if (message.id && this.subs.has(message.id)) return this.subscriptionRefused(message.id, realtimeErrorOf(message.errors, EVENTS_ERROR_TYPES.badRequest));
        return this.o.onConnectionError?.(realtimeErrorOf(message.errors, EVENTS_ERROR_TYPES.badRequest));
      default:
        return undefined; // ka (lastSeen is updated), unsubscribe_*, publish_*
    }
  }

  private acknowledge(connectionTimeoutMs: number): void {
    this.acknowledged = true;
    clearInterval(this.watchdog);
    this.watchdog = setInterval(() => {
      if (Date.now() - this.lastSeen > connectionTimeoutMs) this.drop(new RealtimeError(CLIENT_ERROR_TYPES.keepAliveTimeout, `no message for ${connectionTimeoutMs} ms`));
    }, Math.max(10, Math.min(connectionTimeoutMs / 4, 5_000)));
    for (const sub of this.subs.values()) void this.sendSubscribe(sub);
  }

  private async sendSubscribe(sub: Sub): Promise<void> {
    const ws = this.ws;
    let token: string;
    try {
      token = await this.o.getToken();
    } catch (err) {
      return this.subscriptionRefused(sub.id, new RealtimeError(EVENTS_ERROR_TYPES.unauthorized, 'no token to subscribe with', { cause: err }));
    }
    if (ws !== this.ws || !this.subs.has(sub.id)) return;
    this.send({ type: 'subscribe', id: sub.id, channel: sub.channel, authorization: tokenAuthorization(this.httpHost, token) });
  }

  private deliver(id: string, event: string): void {
    const sub = this.subs.get(id);
    if (!sub) return;
    let push: unknown;
    try {
      push = JSON.parse(event);
    } catch (err) {
      return sub.handlers.onError?.(new RealtimeError(CLIENT_ERROR_TYPES.invalidPush, 'a data message was not JSON', { cause: err }));
    }
    if (!isStreamPush(push)) return sub.handlers.onError?.(new RealtimeError(CLIENT_ERROR_TYPES.invalidPush, 'a data message was not a stream push'));
    sub.handlers.onPush(push);
  }

  private subscriptionRefused(id: string, err: RealtimeError): void {
    const sub = this.subs.get(id);
    if (!sub) return;
    this.subs.delete(id);
    sub.handlers.onError?.(err);
    if (this.subs.size === 0) this.disconnect();
  }

  /** The service refused the connection: report it to everyone and stop (no reconnect loop on a bad token). */
  private refused(err: RealtimeError): void {
    const subs = [...this.subs.values()];
    this.close();
    this.o.onConnectionError?.(err);
    for (const sub of subs) sub.handlers.onError?.(err);
  }

  /** Closes the current connection and reconnects after the backoff. */
  private drop(err: RealtimeError): void {
    const ws = this.ws;
    this.lost(err);
    ws?.close();
  }

  private lost(err: RealtimeError): void {
    this.disconnect();
    if (this.closed || this.subs.size === 0) return;
    this.o.onConnectionError?.(err);
    for (const sub of [...this.subs.values()]) sub.handlers.onDisconnected?.(err);
    const delay = backoffDelay(this.attempt, this.o.backoff?.initialMs ?? 500, this.o.backoff?.maxMs ?? 30_000);
    this.attempt += 1;
    this.later(() => void this.connect(), delay);
  }

  private disconnect(): void {
    const ws = this.ws;
    this.ws = undefined;
    this.acknowledged = false;
    clearInterval(this.watchdog);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
    if (ws && ws.readyState <= 1) ws.close();
  }

  private later(fn: () => void, ms: number): void {
    this.timers.push(setTimeout(fn, ms));
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws?.readyState === 1) this.ws.send(JSON.stringify(message));
  }
}
