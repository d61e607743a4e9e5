/**
 * A counting HTTP proxy in front of an AWS-API emulator (fauxqs for SQS, moto_server for EventBridge and KMS):
 * it forwards every request unchanged and counts, from the wire, what the AWS SDK asked — the JSON protocols'
 * `X-Amz-Target` (`AmazonSQS.ReceiveMessage`, `AWSEvents.PutEvents`, …) — with the entries of batch calls and,
 * for ReceiveMessage, whether the answer held messages (a Lambda SQS event source invokes its function once per
 * batch it received). Nothing in the engine is changed or switched: the runtime is only given the proxy's URL as
 * its endpoint, as it would be given LocalStack's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Cumulative counts since the proxy started. */
export interface AwsCallCounts {
  /** Requests by action (`SendMessageBatch`, `PutEvents`, …). */
  requests: Record<string, number>;
  /** Entries of batch requests by action (the `Entries` array of SendMessageBatch, DeleteMessageBatch, PutEvents). */
  entries: Record<string, number>;
  receivesWithMessages: number;
  messagesReceived: number;
}

export interface AwsCallCounter {
  url: string;
  /** GET it for the {@link AwsCallCounts} so far. */
  countsUrl: string;
  counts(): AwsCallCounts;
  close(): Promise<void>;
}

const COUNTS_PATH = '/__bench/aws-call-counts';

/** Records one request (its target header and body) and, for ReceiveMessage, its answer. */
export function countCall(counts: AwsCallCounts, target: string | undefined, requestBody: string, responseBody: string): void {
  const action = target?.split('.').at(-1) ?? 'unknown';
  counts.requests[action] = (counts.requests[action] ?? 0) + 1;
  const entries = parseJson(requestBody)?.Entries;
  if (Array.isArray(entries)) counts.entries[action] = (counts.entries[action] ?? 0) + entries.length;
  if (action === 'ReceiveMessage') {
    const messages = parseJson(responseBody)?.Messages;
    const n = Array.isArray(messages) ? messages.length : 0;
    counts.messagesReceived += n;
    if (n > 0) counts.receivesWithMessages += 1;
  }
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The calls between two readings. */
export function countsBetween(before: AwsCallCounts, after: AwsCallCounts): AwsCallCounts {
  const diff = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v - (a[k] ?? 0)]).filter(([, v]) => v !== 0));
  return {
    requests: diff(before.requests, after.requests), entries: diff(before.entries, after.entries),
    receivesWithMessages: after.receivesWithMessages - before.receivesWithMessages, messagesReceived: after.messagesReceived - before.messagesReceived,
  };
}

export const emptyCounts = (): AwsCallCounts => ({ requests: {}, entries: {}, receivesWithMessages: 0, messagesReceived: 0 });

/** Starts a proxy to `target` (e.g. http://127.0.0.1:4566) on a free loopback port. */
export async function startAwsCallCounter(target: string): Promise<AwsCallCounter> {
  const counts = emptyCounts();
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === COUNTS_PATH) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, agent }, (up) => {
        const answer: Buffer[] = [];
        up.on('data', (c: Buffer) => answer.push(c));
        up.on('end', () => {
          const text = Buffer.concat(answer);
          countCall(counts, req.headers['x-amz-target'] as string | undefined, body.toString('utf8'), text.toString('utf8'));
          res.writeHead(up.statusCode ?? 502, up.headers).end(text);
        });
      });
      forward.on('error', (err) => res.writeHead(502).end(err.message));
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, countsUrl: `${url}${COUNTS_PATH}`,
    counts: () => structuredClone(counts),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
