/**
 * Entry of the local runtime's consumer thread (./consumers.ts): polls the job queues with an engine and a
 * realtime publisher of its own until the parent posts `stop`, then drains (bounded), closes its database pools
 * and says `stopped`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { closePrisma } from '../../db/client.ts';
import { closeSqlPool } from '../../db/sql-pool.ts';
import { consumerEngine, startConsumers, type ConsumerThreadData } from './consumers.ts';
import { registerLocalPublisher } from './local-publisher.ts';

const port = parentPort;
if (!port) throw new Error('consumer-thread.ts runs only as a worker thread');
const data = workerData as ConsumerThreadData;
const log = (line: string) => port.postMessage({ kind: 'log', line });
try {
  // The thread's own publisher, from its copy of the environment (the hub's endpoint was set before it started).
  const publishing = registerLocalPublisher(process.env, log);
  const consumers = startConsumers({ queues: data.queues, engine: await consumerEngine(data.timing), log });
  port.on('message', (m: unknown) => {
    if (m !== 'stop') return;
    void (async () => {
      await consumers.stop();
      await publishing.unregister();
      await closePrisma().catch(() => undefined);
      await closeSqlPool().catch(() => undefined);
      port.postMessage({ kind: 'stopped' });
    })();
  });
  port.postMessage({ kind: 'ready' });
} catch (err) {
  port.postMessage({ kind: 'failed', message: err instanceof Error ? err.message : String(err) });
}
