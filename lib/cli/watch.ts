/**
 * `watch <jobId>` and `create … --watch`: a job followed to its end in a terminal, through the project's
 * watcher (lib/client/watch-job.ts: realtime push when the stage has it, the stream log always). Prints:
 * - each status change as a line with a progress bar (the job's own progress; for a type that streams nothing
 *   this is all there is to see), a scheduled retry with when and why, the public error of a failure;
 * - the model's text as it is written (`feedback: Mock feedback on …`, growing on one line);
 * - each complete item of an array field on a line of its own (`questions[1]: {…}`), one by one;
 * - when a new attempt begins after text was shown, a line saying the text above is superseded;
 * - at the end, the result's artifacts.
 */
import { watchJob as watchStream } from '../client/watch-job.ts';
import type { StatusEntry } from '../stream/protocol.ts';
import type { ApiClient } from './api-client.ts';

export interface JobStatus {
  jobId: string;
  jobType: string;
  lifecycleStatus: string;
  progress: number;
  errorCode?: string;
  publicErrorMessage?: string;
  result?: { artifactCount: number; artifacts: { artifactType: string; artifactId: string }[] };
}

export function progressBar(progress: number, width = 30): string {
  const filled = Math.round((Math.max(0, Math.min(100, progress)) / 100) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(progress)).padStart(3)}%`;
}

/** Follows `jobId` to its end, printing to `out` (stdout by default); returns its final status. */
export async function watchJob(client: ApiClient, jobId: string, opts: { out?: (text: string) => void; signal?: AbortSignal } = {}): Promise<JobStatus> {
  const printer = new TerminalPrinter(opts.out ?? ((text: string) => void process.stdout.write(text)));
  const readJob = () => client.request<JobStatus>('GET', `api/ai/jobs/${encodeURIComponent(jobId)}`);
  // Everything prints through one chain, so a status line waiting for the job's progress keeps its place.
  let chain: Promise<void> = Promise.resolve();
  const then = (step: () => void | Promise<void>) => (chain = chain.then(step));
  await watchStream(jobId, {
    ...client.access(),
    ...(opts.signal ? { signal: opts.signal } : {}),
    onStatus: (status) => then(async () => printer.status(status, (await readJob()).progress)),
    onText: (delta, field) => then(() => printer.text(delta, field)),
    onItem: (item, index, field) => then(() => printer.item(item, index, field)),
    onAttempt: (attempt) => then(() => printer.attempt(attempt)),
  });
  await chain;
  const job = await readJob();
  printer.end(job);
  return job;
}

/** Lines and growing text on a terminal: a line never starts in the middle of text. */
class TerminalPrinter {
  private field: string | undefined;
  private shown = false;

  constructor(private readonly out: (text: string) => void) {}

  status(s: StatusEntry, progress: number): void {
    const detail = [
      s.status === 'running' ? `attempt ${s.attempt}` : '',
      s.waitingFor ? `waiting for ${s.waitingFor.reason.replace('_', ' ')} until ${s.waitingFor.until}` : s.retryAt ? `retry at ${s.retryAt}` : '',
      s.error ? `after ${s.error.code}: ${s.error.message}` : '',
    ].filter(Boolean).join(' ');
    this.line(`${s.at} ${s.status.padEnd(9)} ${progressBar(progress)}${detail ? ` ${detail}` : ''}`);
  }

  text(delta: string, field: string): void {
    if (this.field !== field) {
      this.endText();
      this.out(`${field}: `);
      this.field = field;
    }
    this.out(delta);
    this.shown = true;
  }

  item(item: unknown, index: number, field: string): void {
    this.line(`${field}[${index}]: ${JSON.stringify(item)}`);
    this.shown = true;
  }

  attempt(attempt: number): void {
    if (!this.shown) return;
    this.line(`--- attempt ${attempt} began: the output above was from an earlier attempt and is superseded ---`);
    this.shown = false;
  }

  end(job: JobStatus): void {
    if (job.errorCode) this.line(`error ${job.errorCode}: ${job.publicErrorMessage ?? ''}`);
    if (job.result) this.line(`result: ${job.result.artifactCount} artifact(s) ${job.result.artifacts.map((a) => `${a.artifactType}/${a.artifactId}`).join(', ')}`);
  }

  private line(text: string): void {
    this.endText();
    this.out(`${text}\n`);
  }

  private endText(): void {
    if (this.field === undefined) return;
    this.out('\n');
    this.field = undefined;
  }
}
