/** `watch <jobId>`: polls the job and prints each state change and a progress bar until it is terminal. */
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

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

export function progressBar(progress: number, width = 30): string {
  const filled = Math.round((Math.max(0, Math.min(100, progress)) / 100) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(progress)).padStart(3)}%`;
}

/** Returns the terminal status. `write` receives each line (stdout by default). */
export async function watchJob(
  client: ApiClient, jobId: string,
  opts: { intervalMs?: number; timeoutMs?: number; write?: (line: string) => void } = {},
): Promise<JobStatus> {
  const write = opts.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const deadline = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
  let last = '';
  for (;;) {
    const job = await client.request<JobStatus>('GET', `api/ai/jobs/${encodeURIComponent(jobId)}`);
    const line = `${new Date().toISOString()} ${job.lifecycleStatus.padEnd(9)} ${progressBar(job.progress)}`;
    if (line.slice(25) !== last) write(line);
    last = line.slice(25);
    if (TERMINAL.has(job.lifecycleStatus)) {
      if (job.errorCode) write(`error ${job.errorCode}: ${job.publicErrorMessage ?? ''}`);
      if (job.result) write(`result: ${job.result.artifactCount} artifact(s) ${job.result.artifacts.map((a) => `${a.artifactType}/${a.artifactId}`).join(', ')}`);
      return job;
    }
    if (Date.now() > deadline) throw new Error(`job ${jobId} is still ${job.lifecycleStatus} after the watch timeout`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 500));
  }
}
