/** maxReceiveCount is derived from the job registry, and synth refuses queues that would dead-letter a job with attempts left. */
import { beforeAll, describe, expect, it } from 'vitest';
import { jobRegistry } from '../../lib/jobs/registry.ts';
import { DEFAULT_MAX_RECEIVE_COUNT, InvalidQueueDefinitionError, JOB_QUEUE_NAMES } from '../../lib/queue/queue-definitions.ts';
import { assertReceiveBudget, requiredMaxReceiveCount, requiredReceives } from '../../lib/queue/receive-budget.ts';
import { syntheticJob } from '../../lib/job-types/synthetic-job.ts';
import { synthStack, type Synthesized } from './synth.ts';

let dev: Synthesized;
beforeAll(() => {
  dev = synthStack();
}, 600_000);

const maxReceiveCountOf = (template: Synthesized['template'], queueName: string): number => {
  const [queue] = Object.values(template.findResources('AWS::SQS::Queue', { Properties: { QueueName: queueName } }));
  return (queue as { Properties: { RedrivePolicy: { maxReceiveCount: number } } }).Properties.RedrivePolicy.maxReceiveCount;
};

describe('maxReceiveCount', () => {
  it('needs attempts × 2 + 3 infrastructure refunds + 5 + 4 capacity waits per definition: 18 for a job with 3 attempts, 34 for the 11 the schema allows', () => {
    expect(requiredReceives({ execution: { ...syntheticJob.execution, maxRetries: 2 } } as never)).toBe(18);
    expect(requiredReceives({ execution: { ...syntheticJob.execution, maxRetries: 10 } } as never)).toBe(34);
  });

  it('is derived from the registry when the stage does not set it, and covers every definition of each queue', () => {
    const { template } = dev;
    const required = requiredMaxReceiveCount(jobRegistry.getAll());
    for (const name of JOB_QUEUE_NAMES) {
      const count = maxReceiveCountOf(template, `ai-jobs-dev-${name}.fifo`);
      expect(count, name).toBe(required);
      for (const def of jobRegistry.getAll().filter((d) => d.queue.queueName === name)) {
        expect(count, def.jobType).toBeGreaterThanOrEqual(requiredReceives(def));
      }
    }
  });

  it('fails synth when the stage sets a maxReceiveCount a definition outgrows (the old 5)', { timeout: 600_000 }, () => {
    let error: unknown;
    try {
      synthStack({ maxReceiveCount: 5 });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidQueueDefinitionError);
    expect((error as Error).message).toMatch(/synthetic_job needs 18 receives/);
  });

  it('refuses a definition that needs more than its own queue allows, whatever the other queue allows', () => {
    const long = { jobType: 'long_job', execution: { ...syntheticJob.execution, maxRetries: 10 }, queue: { queueName: 'background' as const } };
    expect(() => assertReceiveBudget([long], { interactive: 100, background: 33 })).toThrow(/long_job needs 34 receives/);
    expect(() => assertReceiveBudget([long], { interactive: 5, background: 34 })).not.toThrow();
  });

  it('gives the local runtime and tests (no QUEUE_MAX_RECEIVE_COUNT) a default that covers the registry', () => {
    expect(DEFAULT_MAX_RECEIVE_COUNT).toBeGreaterThanOrEqual(requiredMaxReceiveCount(jobRegistry.getAll()));
  });
});
