/**
 * What AWS runs on its own, done locally: the scheduled dispatcher, reaper and maintenance (rollups and
 * retention) on intervals, and the consumers (./consumers.ts: one poller per queue playing the Lambda SQS event
 * source for the consumer handler) on a worker thread of their own.
 */
import { getPrisma } from '../../db/client.ts';
import type { DispatcherDeps } from '../../outbox/dispatcher-deps.ts';
import { runDispatchCycle } from '../../outbox/dispatcher.ts';
import type { EngineDeps } from '../../engine/engine-deps.ts';
import { reaperDepsFromEnv, runReaper } from '../../engine/reaper-run.ts';
import { maintenanceDepsFromEnv, runMaintenance } from '../../maintenance/maintenance-run.ts';
import type { LocalAws } from './local-aws.ts';
import type { LeaseTiming } from '../../engine/lease-keeper.ts';
import { startConsumerThread, type Consumers } from './consumers.ts';

export interface BackgroundWork {
  stop(): Promise<void>;
}

/** Starts the timers (dispatcher, reaper, maintenance) on this thread and the consumers on a worker thread. */
export async function startBackgroundWork(o: {
  aws: LocalAws; dispatcher: DispatcherDeps; registry: EngineDeps['registry']; dispatchIntervalMs: number; reaperIntervalMs: number;
  maintenanceIntervalMs: number; log(line: string): void;
  consumerThread: { timing?: LeaseTiming };
}): Promise<BackgroundWork> {
  const onError = (what: string) => (err: unknown) => o.log(`${what}: ${(err as Error).name}: ${(err as Error).message}`);
  const queues = { interactive: o.aws.queues.interactive, background: o.aws.queues.background };
  const consumers: Consumers = await startConsumerThread({ queues, ...o.consumerThread }, o.log);
  const reaper = { ...reaperDepsFromEnv(), db: getPrisma(), registry: o.registry };
  const maintenance = { ...maintenanceDepsFromEnv(), db: getPrisma(), registry: o.registry, metrics: undefined, logger: { info: () => undefined } };
  const timers = [
    every(o.dispatchIntervalMs, () => runDispatchCycle(o.dispatcher), onError('dispatcher')),
    every(o.reaperIntervalMs, () => runReaper(reaper), onError('reaper')),
    every(o.maintenanceIntervalMs, () => runMaintenance(maintenance), onError('maintenance')),
  ];
  return {
    stop: async () => {
      for (const t of timers) t.stop();
      await consumers.stop();
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
