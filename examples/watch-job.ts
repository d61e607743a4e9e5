/**
 * Watching a job as it runs, for API users (docs/streaming.md "Watching a job"):
 *
 *   npm start                                              # another terminal: the engine on 127.0.0.1:3000
 *   export AI_JOBS_TOKEN=$(npm run -s token -- --user alice)
 *   npm run example:watch                                  # creates a Feynman evaluation and watches it
 *   npm run example:watch -- <jobId>                       # or watches one of yours
 *
 * AI_JOBS_API_URL points it at a deployed stage instead (its JWT in AI_JOBS_TOKEN). The watcher asks the API where
 * the realtime service is (GET /api/ai/realtime), subscribes to the job's channel, reads the job's stream log after
 * every (re)subscribe, and long-polls the log whenever it has no live subscription; it de-duplicates by `seq`, so
 * what it prints is the log exactly once, whatever the network does.
 */
import { watchJob } from '../lib/client/watch-job.ts';

const apiUrl = process.env.AI_JOBS_API_URL ?? 'http://127.0.0.1:3000';
const token = process.env.AI_JOBS_TOKEN;
if (!token) {
  console.error('Set AI_JOBS_TOKEN to your JWT (locally: export AI_JOBS_TOKEN=$(npm run -s token -- --user alice)).');
  process.exit(2);
}

/** Creates a Feynman evaluation when no job id is given, so the example shows a job from its start. */
async function jobToWatch(): Promise<string> {
  const given = process.argv[2];
  if (given) return given;
  const res = await fetch(`${apiUrl}/api/ai/feynman-evaluations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ concept: 'Photosynthesis', explanation: 'Plants turn light, water and carbon dioxide into sugar and oxygen.' }),
  });
  const body = (await res.json()) as { jobId?: string; error?: { code: string } };
  if (!body.jobId) throw new Error(`could not create a job: HTTP ${res.status} ${body.error?.code ?? ''}`);
  console.log(`created ${body.jobId}`);
  return body.jobId;
}

const jobId = await jobToWatch();
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
let inText = false;
const line = (text: string) => {
  if (inText) process.stdout.write('\n');
  inText = false;
  console.log(text);
};

try {
  const { status, state } = await watchJob(jobId, {
    apiUrl,
    getToken: () => token,
    signal: stop.signal,
    onTransport: (how, reason) => line(`[${how === 'realtime' ? 'live: realtime push' : `reading the log (long-poll)${reason ? `: ${reason.errorType}` : ''}`}]`),
    onStatus: (s) => line(`[${s.status}${s.status === 'running' ? `, attempt ${s.attempt}` : ''}${s.error ? `: ${s.error.code}` : ''}]`),
    onAttempt: (attempt) => attempt > 1 && line(`[attempt ${attempt}: drop what was shown above]`),
    onText: (delta) => {
      inText = true;
      process.stdout.write(delta);
    },
    onItem: (item, index, field) => line(`${field}[${index}]: ${JSON.stringify(item)}`),
  });
  line(`done: ${status.status}${status.resultUrl ? ` — the result: GET ${status.resultUrl}` : ''} (${state.lastSeq} log entries)`);
  process.exitCode = status.status === 'succeeded' ? 0 : 1;
} catch (err) {
  line(stop.signal.aborted ? 'stopped' : `watch failed: ${(err as Error).message}`);
  process.exitCode = 1;
}
