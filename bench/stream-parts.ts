/**
 * The parts of `npm run bench:stream` (./stream.ts): a streaming workload on the local runtime whose provider
 * (the mock, in this process) says when it wrote each token, and subscribers on the runtime's realtime hub.
 *
 * Each job is a Feynman evaluation whose answer the bench writes itself: its `feedback` is plain words (no JSON
 * escape), so character k of the streamed feedback is character `start + k` of the provider's answer, written
 * with token ⌊(start + k) / 4⌋ (the mock's tokens are four characters). A text entry a subscriber receives that
 * makes the feedback L characters long is therefore `now − (when that token for character L − 1 was written)`
 * late: the latency from the provider's token to the client, hold-backs and batching included.
 */
import { createRealtimeClient, type RealtimeClient } from '../lib/client/realtime-client.ts';
import type { MockChatRequestBody } from '../lib/dev/mock-ai-server.ts';
import { ownerChannels } from '../lib/realtime/channel.ts';
import { ownerSegmentOfSubjectSync } from '../lib/realtime/server-channel.ts';
import type { StreamPush } from '../lib/stream/protocol.ts';

const FEEDBACK_KEY = '"feedback":"';

/** The answer the bench's provider gives for job `label` (a Feynman output with `words` plain words of feedback). */
export function benchAnswer(label: string, words: number): string {
  const feedback = Array.from({ length: words }, (_, i) => `word${i}`).join(' ');
  return JSON.stringify({ score: 70, gaps: [`Say more about ${label}.`], feedback });
}

/** The bench job label in a request (the concept line of the Feynman prompt), or undefined. */
export function labelOf(body: MockChatRequestBody): string | undefined {
  const text = body.messages.findLast((m) => m.role === 'user')?.content ?? '';
  return /stream-bench-job-\d+/.exec(text)?.[0];
}

/** When each token of each job's answer was written, by label. */
export class TokenClock {
  private readonly written = new Map<string, number[]>();

  /** The mock's `onToken`. */
  readonly onToken = (body: MockChatRequestBody, index: number): void => {
    const label = labelOf(body);
    if (!label) return;
    let times = this.written.get(label);
    if (!times || index === 0) this.written.set(label, (times = []));
    times[index] = performance.now();
  };

  /** When the character at `offset` of the feedback of `label`'s answer was written (undefined: not yet known). */
  writtenAt(label: string, words: number, offset: number): number | undefined {
    const content = benchAnswer(label, words);
    const start = content.indexOf(FEEDBACK_KEY) + FEEDBACK_KEY.length;
    return this.written.get(label)?.[Math.floor((start + offset) / 4)];
  }
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * `count` subscribers, each on a connection of its own, to every job of `sub` (its `/jobs/<owner>/*` channel);
 * resolves once all are live. Each keeps the `seq`s it received per job, in arrival order.
 */
export async function subscribers(httpEndpoint: string, sub: string, token: string, count: number): Promise<{ seqs: Map<string, number[]>[]; close(): void }> {
  const clients: RealtimeClient[] = [];
  const seqs = Array.from({ length: count }, () => new Map<string, number[]>());
  let live = 0;
  await new Promise<void>((resolve, reject) => {
    for (const received of seqs) {
      const client = createRealtimeClient({ httpEndpoint, getToken: () => token });
      clients.push(client);
      client.subscribe(ownerChannels(ownerSegmentOfSubjectSync(sub)), {
        onSubscribed: () => { live += 1; if (live === count) resolve(); },
        onPush: (push: StreamPush) => {
          const list = received.get(push.jobId) ?? [];
          for (const entry of push.entries) list.push(entry.seq);
          received.set(push.jobId, list);
        },
        onError: (err) => reject(err),
      });
    }
  });
  return { seqs, close: () => { for (const client of clients) client.close(); } };
}

/** Over all subscribers, against the log's `seq`s 1..n of `jobId`: complete ones, and seqs missing or received twice. */
export function tally(all: readonly Map<string, number[]>[], jobId: string, n: number): { complete: number; missing: number; duplicates: number; outOfOrder: number } {
  let complete = 0, missing = 0, duplicates = 0, outOfOrder = 0;
  for (const received of all) {
    const seqs = received.get(jobId) ?? [];
    const unique = new Set(seqs);
    duplicates += seqs.length - unique.size;
    for (let seq = 1; seq <= n; seq += 1) if (!unique.has(seq)) missing += 1;
    const ordered = seqs.every((s, i) => i === 0 || s > seqs[i - 1]!);
    if (!ordered) outOfOrder += 1;
    if (ordered && unique.size === n && seqs.length === n) complete += 1;
  }
  return { complete, missing, duplicates, outOfOrder };
}
