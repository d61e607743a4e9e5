/**
 * The local runtime's consumers: one poller per queue playing the Lambda SQS event source for the consumer
 * handler, on a worker thread of their own ({@link startConsumerThread}; ./consumer-thread.ts runs
 * {@link startConsumers} there), as AWS runs the consumer Lambdas apart from the API Lambdas: a burst of jobs
 * does not slow the API's answers down on one event loop, and the runtime can use a second core
 * (bench:peers: 154 → 195 jobs/s through the HTTP API).
 */
import { Worker } from 'node:worker_threads';
import { Logger } from '@aws-lambda-powertools/logger';
import { createSqsClient } from '../../config/aws.ts';
import { consumeBatch } from '../../engine/consumer.ts';
import type { EngineDeps } from '../../engine/engine-deps.ts';
import type { LeaseTiming } from '../../engine/lease-keeper.ts';
import { JOB_QUEUE_NAMES, type QueueName } from '../../queue/queue-definitions.ts';
import { withStreamPublishing } from '../../realtime/handler-publishing.ts';
import { startPoller, type Poller } from './queue-poller.ts';

/**
 * How long a stop waits for in-flight jobs. A stop abandons them first (their attempts are aborted and settled
 * as the platform's failure: lease released, attempt given back), so they normally end within moments; one
 * that does not (a statement on a silent connection) is cut off with the thread, and the next run of the
 * runtime recovers it (./boot-recovery.ts), as after a crash.
 */
export const SHUTDOWN_GRACE_MS = 15_000;

/**
 * The consumer Lambdas' concurrency per queue, locally: with {@link CONSUMER_BATCH_SIZE}, how many records a queue
 * may have in flight at once (./queue-poller.ts bounds records, not batches).
 */
export const CONSUMER_CONCURRENCY = { interactive: 4, background: 2 } as const;

/** Records per batch at most, as the SQS event source's batch size. */
export const CONSUMER_BATCH_SIZE = 10;

export type QueueTargets = Record<QueueName, { queueUrl: string; queueArn: string }>;

export interface Consumers {
  /**
   * Stops receiving and abandons the deliveries in flight (their jobs are given back, ../../engine/delivery-guard.ts);
   * resolves when they are done or the grace period is over.
   */
  stop(): Promise<void>;
}

/** The pollers on this thread, feeding `engine`. */
export function startConsumers(o: { queues: QueueTargets; engine: EngineDeps; log(line: string): void }): Consumers {
  const sqs = createSqsClient();
  const stopping = new AbortController();
  const pollers: Poller[] = JOB_QUEUE_NAMES.map((name) => {
    const { queueUrl, queueArn } = o.queues[name];
    return startPoller({
      sqs, queueUrl, queueArn, concurrency: CONSUMER_CONCURRENCY[name], batchSize: CONSUMER_BATCH_SIZE,
      onError: (err) => o.log(`${name} consumer: ${(err as Error).name}: ${(err as Error).message}`),
      // As the consumer Lambda: the batch's pushes are flushed (bounded) before the batch is acknowledged.
      handle: withStreamPublishing((event) => consumeBatch(event, { queueUrl, sqs, engine: o.engine, stopping: stopping.signal })),
    });
  });
  return {
    stop: async () => {
      const drained = Promise.all(pollers.map((p) => p.stop()));
      stopping.abort();
      const timedOut = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), SHUTDOWN_GRACE_MS).unref());
      if ((await Promise.race([drained, timedOut])) === 'timeout') {
        o.log('some jobs were still running; their leases will expire and the reaper will hand them out again');
      }
    },
  };
}

/** What the consumer thread is started with (structured-cloned into it). */
export interface ConsumerThreadData {
  queues: QueueTargets;
  timing?: LeaseTiming;
}

type ThreadMessage = { kind: 'ready' } | { kind: 'log'; line: string } | { kind: 'stopped' } | { kind: 'failed'; message: string };

/**
 * The pollers on a worker thread with an engine of its own (its own database pools, built from the same
 * environment). Resolves once the thread is polling. Log lines come back to `log`.
 */
export async function startConsumerThread(data: ConsumerThreadData, log: (line: string) => void): Promise<Consumers> {
  // The thread loads TypeScript through tsx, whatever started this process (tsx itself, or a test runner).
  const inherited = workerExecArgv(process.execArgv);
  const execArgv = inherited.some((a) => a.includes('tsx')) ? inherited : [...inherited, '--import', 'tsx'];
  const worker = new Worker(new URL('./consumer-thread.ts', import.meta.url), { workerData: data, execArgv });
  let stopped: (() => void) | undefined;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (m: ThreadMessage) => {
      if (m.kind === 'ready') resolve();
      else if (m.kind === 'log') log(m.line);
      else if (m.kind === 'stopped') stopped?.();
      else reject(new Error(`consumer thread failed to start: ${m.message}`));
    });
    worker.once('error', (err) => {
      log(`consumer thread error: ${err.name}: ${err.message}`);
      reject(err);
    });
  });
  return {
    stop: async () => {
      const done = new Promise<void>((resolve) => (stopped = resolve));
      worker.postMessage('stop');
      // The thread drains within its grace period; past that (and a margin to close its pools) it is ended.
      const late = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS + 5_000).unref());
      await Promise.race([done, exited, late]);
      await worker.terminate();
    },
  };
}

/**
 * What of this process's `execArgv` the consumer thread gets: the module-loading options (`--import`,
 * `--require`, `--loader`, `--conditions`, with their values) and the per-thread profilers (`--cpu-prof*`,
 * `--heap-prof*`). V8 and process-wide options (`--max-semi-space-size`, `--title`, …) already apply to the
 * whole process, and a Worker refuses them in its own execArgv (the thread would not start).
 */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  const withValue = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader', '--conditions', '-C']);
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i += 1) {
    const arg = execArgv[i]!;
    const name = arg.split('=')[0]!;
    if (/^--(cpu|heap)-prof/.test(name)) {
      kept.push(arg);
      continue;
    }
    if (!withValue.has(name)) continue;
    kept.push(arg);
    if (!arg.includes('=') && i + 1 < execArgv.length) kept.push(execArgv[(i += 1)]!);
  }
  return kept;
}

/** The engine of a consumer thread: the consumer Lambda's defaults, with the runtime's lease timing. */
export async function consumerEngine(timing: LeaseTiming | undefined): Promise<EngineDeps> {
  const { createEngineDeps } = await import('../../engine/default-engine-deps.ts');
  return createEngineDeps({ ...(timing ? { timing } : {}), logger: new Logger({ serviceName: 'local-engine', logLevel: 'WARN' }) });
}
