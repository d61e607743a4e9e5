/**
 * Fan-out check of the local realtime hub: `subscribers` clients (each its own WebSocket, through the project's
 * client library) watch one job; the publisher sends `pushes` pushes of `entriesPerPush` entries; every
 * subscriber must receive every `seq` once, in order. Used by bench/stream-fanout.ts (1,000 subscribers) and by
 * test/realtime/fanout.test.ts (a modest count).
 */
import { ulid } from 'ulid';
import { generateLocalJwtKey, signLocalToken, verifyLocalToken } from '../api/local-jwt.ts';
import { createRealtimeClient, type RealtimeClient } from '../client/realtime-client.ts';
import { HttpStreamPublisher } from '../realtime/publisher.ts';
import { channelOfJob } from '../realtime/server-channel.ts';
import { createEventsSigner } from '../realtime/sigv4.ts';
import type { StreamEntry } from '../stream/protocol.ts';
import { LOCAL_TOKEN_AUDIENCE } from './local-runtime/local-auth.ts';
import { startRealtimeHub } from './local-runtime/realtime-hub.ts';

export interface FanoutOptions {
  subscribers: number;
  pushes: number;
  entriesPerPush: number;
}

export interface FanoutResult extends FanoutOptions {
  /** Subscribers that received every seq exactly once, in order. */
  complete: number;
  /** Over all subscribers: seqs never received, received twice, received out of order. */
  missing: number;
  duplicates: number;
  outOfOrder: number;
  connectMs: number;
  deliverMs: number;
}

const CREDENTIALS = { accessKeyId: 'fanout', secretAccessKey: 'fanout-secret' };

export async function runFanout(o: FanoutOptions): Promise<FanoutResult> {
  const key = generateLocalJwtKey();
  const hub = await startRealtimeHub({
    port: 0, verifyToken: (token) => verifyLocalToken(key, token, LOCAL_TOKEN_AUDIENCE),
    policy: { adminClaim: 'cognito:groups', adminGroup: 'SUPER_ADMIN', audiences: [LOCAL_TOKEN_AUDIENCE.audience] },
    publisher: { region: 'us-east-1', credentials: CREDENTIALS }, maxBufferedBytes: 64 * 1024 * 1024,
  });
  const token = await signLocalToken(key, { sub: 'fanout-user', ...LOCAL_TOKEN_AUDIENCE });
  const jobId = ulid();
  const total = o.pushes * o.entriesPerPush;
  const received = Array.from({ length: o.subscribers }, () => [] as number[]);
  const clients: RealtimeClient[] = [];
  try {
    let live = 0;
    let done = 0;
    const allLive = deferred();
    const allDone = deferred();
    const started = Date.now();
    for (const seqs of received) {
      const client = createRealtimeClient({ httpEndpoint: hub.httpEndpoint, getToken: () => token });
      clients.push(client);
      client.subscribe(channelOfJob('fanout-user', jobId), {
        onSubscribed: () => { live += 1; if (live === o.subscribers) allLive.resolve(); },
        onPush: (push) => {
          for (const entry of push.entries) seqs.push(entry.seq);
          if (seqs.length === total) { done += 1; if (done === o.subscribers) allDone.resolve(); }
        },
        onError: (err) => allLive.reject(err),
      });
    }
    await allLive.promise;
    const connectMs = Date.now() - started;
    const publisher = new HttpStreamPublisher({ httpEndpoint: hub.httpEndpoint, sign: createEventsSigner('us-east-1', CREDENTIALS), maxQueued: o.pushes + 1 });
    const sending = Date.now();
    for (let p = 0; p < o.pushes; p += 1) {
      const entries: StreamEntry[] = Array.from({ length: o.entriesPerPush }, (_, i) => ({
        type: 'text', seq: p * o.entriesPerPush + i + 1, attempt: 1, at: new Date().toISOString(), field: 'feedback', delta: 'token ',
      }));
      publisher.publish({ userId: 'fanout-user', jobId, entries });
    }
    await publisher.flush(60_000);
    await allDone.promise;
    return { ...o, ...tally(received, total), connectMs, deliverMs: Date.now() - sending };
  } finally {
    for (const client of clients) client.close();
    await hub.stop();
  }
}

function tally(received: number[][], total: number): Pick<FanoutResult, 'complete' | 'missing' | 'duplicates' | 'outOfOrder'> {
  let complete = 0, missing = 0, duplicates = 0, outOfOrder = 0;
  for (const seqs of received) {
    const unique = new Set(seqs);
    duplicates += seqs.length - unique.size;
    for (let seq = 1; seq <= total; seq += 1) if (!unique.has(seq)) missing += 1;
    let inOrder = true;
    for (let i = 1; i < seqs.length; i += 1) if (seqs[i]! <= seqs[i - 1]!) { outOfOrder += 1; inOrder = false; }
    if (inOrder && unique.size === total && seqs.length === total) complete += 1;
  }
  return { complete, missing, duplicates, outOfOrder };
}

function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}
