/**
 * The publisher's transport: one JSON POST over node:http or node:https with a keep-alive agent per process.
 *
 * Why not `fetch`: a publish is a small request a job makes two or three times (its status changes and its
 * stream's batches), and undici's fetch cost several times node:http's client CPU per request (WHATWG Request and
 * Response objects, header guards, a body stream) — in bench:peers the largest part of a job's publishing cost.
 * The answer is read whole as text (AppSync answers a few hundred bytes; more than {@link MAX_ANSWER_BYTES} is cut
 * off and fails to parse, which the publisher counts as a failed request).
 */
import http from 'node:http';
import https from 'node:https';

/** What the publisher reads of an answer. */
export interface PostAnswer {
  status: number;
  body: string;
}

/** POSTs `body` to `url` with `headers`; rejects on a network error or when `signal` aborts. */
export type JsonPost = (url: URL, request: { headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<PostAnswer>;

/** An answer longer than this is not read further. */
export const MAX_ANSWER_BYTES = 64 * 1024;

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 16 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 16 }),
};

/** {@link JsonPost} on this process's keep-alive agents. */
export const keepAlivePost: JsonPost = (url, { headers, body, signal }) => new Promise<PostAnswer>((resolve, reject) => {
  if (signal.aborted) {
    reject(signal.reason);
    return;
  }
  const client = url.protocol === 'https:' ? https : http;
  const req = client.request(url, {
    method: 'POST', agent: agents[url.protocol as keyof typeof agents], signal,
    headers: { ...headers, 'content-length': Buffer.byteLength(body) },
  }, (res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (size < MAX_ANSWER_BYTES) chunks.push(chunk);
      size += chunk.length;
    });
    res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    res.on('error', reject);
    res.on('close', () => {
      if (!res.complete) reject(new Error('the answer was cut off'));
    });
  });
  req.on('error', reject);
  req.end(body);
});
