/**
 * The local runtime's realtime publisher, per thread: built from the environment as a deployed function builds
 * it (REALTIME_HTTP_ENDPOINT: the runtime's hub, or whatever it was set to; unset: none) and registered as the
 * thread's publisher (lib/stream/publisher-registry.ts), with its problem lines sent to the runtime's log
 * instead of stdout. Unregistering flushes it (bounded) and puts back the publisher it replaced.
 */
import { HANDLER_FLUSH_MS } from '../../realtime/handler-publishing.ts';
import { streamPublisherFromEnv } from '../../realtime/publisher-from-env.ts';
import { registerStreamPublisher } from '../../stream/publisher-registry.ts';

export interface LocalPublisher {
  unregister(): Promise<void>;
}

export function registerLocalPublisher(env: Readonly<Record<string, string | undefined>>, log: (line: string) => void): LocalPublisher {
  // Metrics stay Powertools' (the runtime disables them: POWERTOOLS_METRICS_DISABLED).
  const publisher = streamPublisherFromEnv(env, {
    logger: { warn: (message, ...extra) => log(`realtime publisher: ${typeof message === 'string' ? message : JSON.stringify(message)} ${JSON.stringify(extra)}`) },
  });
  const previous = registerStreamPublisher(publisher);
  return {
    unregister: async () => {
      await publisher.flush(HANDLER_FLUSH_MS);
      registerStreamPublisher(previous);
    },
  };
}
