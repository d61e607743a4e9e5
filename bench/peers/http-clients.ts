/**
 * The benches' HTTP clients of our API (and of graphile-worker-kept's, ./http-front.ts): node:http on a keep-alive
 * agent, one socket per client. The clients stand in for apps on other machines but share this machine's two cores
 * with the system under test, so they should cost little: `fetch` (undici) took about 1.4 ms of CPU per request
 * here, more than twice what this takes.
 *
 * Clock: each job's submit instant is also taken with `Date.now()` just before its request is written — the
 * clock the runtime stamps `createdAt`/`startedAt` with (`new Date()`) on the same machine — so client submit →
 * startedAt is a difference of two readings of one clock (ms resolution).
 */
import http from 'node:http';
import { offerLoad, type LoadPlan, type LoadResult } from './load.ts';
import type { OursJob } from './workload.ts';

const clientAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request on the clients' agent with a bearer token (and `extraHeaders`); resolves to its status and body. */
export function requestJson(method: 'GET' | 'POST', url: string, token: string, body?: string, extraHeaders: http.OutgoingHttpHeaders = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { authorization: `Bearer ${token}`, ...extraHeaders };
    if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    const req = http.request(url, { method, agent: clientAgent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A run's submissions: the client timings, the job ids, and each job's submit instant on `Date.now()`. */
export interface HttpSubmission {
  load: LoadResult;
  ids: string[];
  submitWallMs: number[];
}

/**
 * Every job of the run submitted through `POST <job.path>` of `baseUrl`, job i as user i % tokens.length;
 * `jobFor(i)` picks the job type of job i (a mixed workload), default `job`.
 */
export async function submitOverHttp(baseUrl: string, tokens: string[], plan: LoadPlan, runId: string, jobFor: (i: number) => OursJob): Promise<HttpSubmission> {
  const ids: string[] = [];
  const submitWallMs: number[] = [];
  const load = await offerLoad(plan, async (i) => {
    const job = jobFor(i);
    const body = JSON.stringify(job.input(runId, i));
    submitWallMs[i] = Date.now();
    const res = await requestJson('POST', `${baseUrl}${job.path}`, tokens[i % tokens.length]!, body);
    if (res.status !== 202) throw new Error(`create ${i}: HTTP ${res.status} ${res.text}`);
    ids[i] = (JSON.parse(res.text) as { jobId: string }).jobId;
  });
  return { load, ids, submitWallMs };
}

/** Reads each job's result once (`GET <job.path>/<id>`, as a client fetching what it asked for); returns how many answered 200. */
export async function readResultsOverHttp(baseUrl: string, tokens: string[], ids: string[], clients: number, jobFor: (i: number) => OursJob): Promise<number> {
  let ok = 0;
  await offerLoad({ jobs: ids.length, clients }, async (i) => {
    const res = await requestJson('GET', `${baseUrl}${jobFor(i).path}/${ids[i]}`, tokens[i % tokens.length]!);
    if (res.status === 200) ok += 1;
  });
  return ok;
}
