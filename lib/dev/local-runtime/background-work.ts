/**
 * What AWS runs on its own, done locally: the scheduled dispatcher, reaper and maintenance (rollups and
 * retention) on intervals, and one poller per queue playing the Lambda SQS event source for the consumer handlers.
 */
import { createSqsClient } from '../../config/aws.ts';
import { getPrisma } from '../../db/client.ts';
import type { DispatcherDeps } from '../../outbox/dispatcher-deps.ts';
import { runDispatchCycle } from '../../outbox/dispatcher.ts';
import { consumeBatch } from '../../engine/consumer.ts';
import type { EngineDeps } from '../../engine/engine-deps.ts';
import { reaperDepsFromEnv, runReaper } from '../../engine/reaper-run.ts';
import { maintenanceDepsFromEnv, runMaintenance } from '../../maintenance/maintenance-run.ts';
import { JOB_QUEUE_NAMES } from '../../queue/queue-definitions.ts';
import type { LocalAws } from './local-aws.ts';
import { startPoller, type Poller } from './queue-poller.ts';

export interface BackgroundWork {
  stop(): Promise<void>;
}

/** How long Ctrl-C waits for in-flight jobs; later ones are left to the reaper (their lease expires). */
const SHUTDOWN_GRACE_MS = 15_000;

const CONSUMER_CONCURRENCY = { interactive: 4, background: 2 } as const;

export function startBackgroundWork(o: {
  aws: LocalAws; engine: EngineDeps; dispatcher: DispatcherDeps; dispatchIntervalMs: number; reaperIntervalMs: number;
  maintenanceIntervalMs: number; log(line: string): void;
}): BackgroundWork {
  const sqs = createSqsClient();
  const onError = (what: string) => (err: unknown) => o.log(`${what}: ${(err as Error).name}: ${(err as Error).message}`);
  const pollers: Poller[] = JOB_QUEUE_NAMES.map((name) => {
    const { queueUrl, queueArn } = o.aws.queues[name];
    return startPoller({
      sqs, queueUrl, queueArn, concurrency: CONSUMER_CONCURRENCY[name], batchSize: 10, onError: onError(`${name} consumer`),
      handle: (event) => consumeBatch(event, { queueUrl, sqs, engine: o.engine }),
    });
  });
  const reaper = { ...reaperDepsFromEnv(), db: getPrisma(), registry: o.engine.registry };
  const maintenance = { ...maintenanceDepsFromEnv(), db: getPrisma(), registry: o.engine.registry, metrics: undefined, logger: { info: () => undefined } };
  const timers = [
    every(o.dispatchIntervalMs, () => runDispatchCycle(o.dispatcher), onError('dispatcher')),
    every(o.reaperIntervalMs, () => runReaper(reaper), onError('reaper')),
    every(o.maintenanceIntervalMs, () => runMaintenance(maintenance), onError('maintenance')),
  ];
  return {
    stop: async () => {
      for (const t of timers) t.stop();
      const drained = Promise.all(pollers.map((p) => p.stop()));
      const timedOut = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), SHUTDOWN_GRACE_MS).unref());
      if ((await Promise.race([drained, timedOut])) === 'timeout') {
        o.log('some jobs were still running; their leases will expire and the reaper will hand them out again');
      }
      await Promise.all(timers.map((t) => t.idle()));
    },
  };
}

/** Runs `fn` every `ms`; a tick that finds the previous run still going is skipped. */
function every(ms: number, fn: () => Promise<unknown>, onError: (err: unknown) => void) {
  let current: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    current ??= fn().catch(onError).finally(() => (current = undefined));
  }, ms);
  return { stop: () => clearInterval(timer), idle: () => current ?? Promise.resolve() };
}
