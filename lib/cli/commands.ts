/**
 * The CLI's commands as a table. Creation maps a kind to its business route and builds that job type's
 * input from flags or a file — data, not branches.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ApiRequestError, type ApiClient } from './api-client.ts';
import { watchJob, type JobStatus } from './watch.ts';

export type Flags = Record<string, string | boolean | undefined>;

export interface Command {
  usage: string;
  run(client: ApiClient, args: string[], flags: Flags): Promise<number>;
}

interface CreateKind {
  path: string;
  /** Builds the request body; `text` is --text or the content of --file. */
  input(text: string | undefined, flags: Flags): Record<string, unknown>;
}

const CREATE_KINDS: Record<string, CreateKind> = {
  feynman: {
    path: 'api/ai/feynman-evaluations',
    input: (text, f) => ({ concept: required(f.concept, '--concept'), explanation: required(text, '--text or --file') }),
  },
  quiz: {
    path: 'api/ai/quiz-generations',
    input: (text, f) => ({ sourceText: required(text, '--text or --file'), count: Number(f.count ?? 5), difficulty: String(f.difficulty ?? 'medium') }),
  },
  flashcards: {
    path: 'api/ai/flashcard-generations',
    input: (text, f) => ({ sourceText: required(text, '--text or --file'), ...(f['max-cards'] ? { maxCards: Number(f['max-cards']) } : {}) }),
  },
};

function required(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`${name} is required`);
  return value;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Attempts of a create when the API is unreachable or answers 502/503/504 (same idempotency key each time). */
const CREATE_ATTEMPTS = 3;
const MAX_RETRY_WAIT_MS = 5_000;

/**
 * POST with `Idempotency-Key: key`, retried on a cut connection or a 502/503/504 after the server's
 * `Retry-After` (capped) — safe because every attempt carries the same key. Prints the key when it gives up,
 * so the user can retry by hand without creating a second job.
 */
async function createWithRetries<T>(client: ApiClient, path: string, body: unknown, key: string): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await client.request<T>('POST', path, body, { 'idempotency-key': key });
    } catch (err) {
      const transient = err instanceof ApiRequestError && (err.status === 0 || [502, 503, 504].includes(err.status));
      if (!transient || attempt >= CREATE_ATTEMPTS) {
        if (transient) process.stderr.write(`the job may or may not have been created; rerun with --idempotency-key ${key}\n`);
        throw err;
      }
      const waitMs = Math.min(MAX_RETRY_WAIT_MS, (err.retryAfterSeconds ?? attempt) * 1000);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
const exitFor = (job: JobStatus) => (job.lifecycleStatus === 'succeeded' ? 0 : 1);

export const COMMANDS: Record<string, Command> = {
  create: {
    usage: `create <${Object.keys(CREATE_KINDS).join('|')}> (--text T | --file F | --input-file JSON) [--concept C] [--count N] [--difficulty D] [--max-cards N] [--idempotency-key K] [--watch]`,
    async run(client, [kind], flags) {
      const spec = kind ? CREATE_KINDS[kind] : undefined;
      if (!spec) throw new UsageError(`unknown kind "${kind ?? ''}"; one of ${Object.keys(CREATE_KINDS).join(', ')}`);
      const body = typeof flags['input-file'] === 'string'
        ? JSON.parse(await readFile(flags['input-file'], 'utf8'))
        : spec.input(typeof flags.file === 'string' ? await readFile(flags.file, 'utf8') : (flags.text as string | undefined), flags);
      // Always an idempotency key, one per invocation: a 5xx or a cut connection does not mean the job was not
      // created, so the retries below (and a manual rerun with --idempotency-key) can never create a second job.
      const key = typeof flags['idempotency-key'] === 'string' ? flags['idempotency-key'] : `cli-${randomUUID()}`;
      const job = await createWithRetries<JobStatus>(client, spec.path, body, key);
      if (!flags.watch) {
        print(job);
        return 0;
      }
      process.stdout.write(`created ${job.jobId}\n`);
      return exitFor(await watchJob(client, job.jobId));
    },
  },
  watch: {
    usage: 'watch <jobId>',
    run: async (client, [jobId]) => exitFor(await watchJob(client, required(jobId, 'jobId'))),
  },
  get: {
    usage: 'get <jobId>',
    run: async (client, [jobId]) => (print(await client.request('GET', `api/ai/jobs/${encodeURIComponent(required(jobId, 'jobId'))}`)), 0),
  },
  list: {
    usage: 'list [--status S] [--type T] [--limit N] [--cursor C]',
    async run(client, _args, f) {
      const query = new URLSearchParams();
      for (const [flag, param] of [['status', 'status'], ['type', 'jobType'], ['limit', 'limit'], ['cursor', 'cursor']] as const) {
        if (typeof f[flag] === 'string') query.set(param, f[flag]);
      }
      print(await client.request('GET', `api/ai/jobs${query.size ? `?${query}` : ''}`));
      return 0;
    },
  },
  cancel: {
    usage: 'cancel <jobId>',
    run: async (client, [jobId]) => (print(await client.request('POST', `api/ai/jobs/${encodeURIComponent(required(jobId, 'jobId'))}/cancel`)), 0),
  },
  'admin-cancel': {
    usage: 'admin-cancel <jobId>   (admin: any user\'s job)',
    run: async (client, [jobId]) => (print(await client.request('POST', `admin-api/ai/jobs/${encodeURIComponent(required(jobId, 'jobId'))}/cancel`)), 0),
  },
  retry: {
    usage: 'retry <jobId>   (admin)',
    run: async (client, [jobId]) => (print(await client.request('POST', `admin-api/ai/jobs/${encodeURIComponent(required(jobId, 'jobId'))}/retry`)), 0),
  },
  stats: {
    usage: 'stats   (admin)',
    run: async (client) => (print(await client.request('GET', 'admin-api/ai/stats')), 0),
  },
  usage: {
    usage: 'usage [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--type T] [--model M] [--user U] [--by-user [--top N]]   (admin; --top: the N users with the highest cost, default 100)',
    async run(client, _args, f) {
      const query = new URLSearchParams();
      for (const [flag, param] of [['from', 'from'], ['to', 'to'], ['type', 'jobType'], ['model', 'model'], ['user', 'userId'], ['top', 'limit']] as const) {
        if (typeof f[flag] === 'string') query.set(param, f[flag]);
      }
      if (typeof f.top === 'string' && !f['by-user']) throw new UsageError('--top lists users: use it with --by-user');
      const path = f['by-user'] ? 'admin-api/ai/usage/users' : 'admin-api/ai/usage';
      print(await client.request('GET', `${path}${query.size ? `?${query}` : ''}`));
      return 0;
    },
  },
};
