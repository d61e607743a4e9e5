/**
 * One source of truth for the job queues: the stack's AWS::SQS::Queue resources, the queues the local
 * runtime and the test harness create through the SQS API (lib/queue/create-queues.ts), and the options the
 * deployed functions read from their environment all come from `jobQueueDefinitions` and agree exactly.
 */
import { GetQueueAttributesCommand, type QueueAttributeName } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_URL_ENV, createSqsClient, queueOptionsFromEnv, stageFromEnv } from '../../lib/config/aws.ts';
import { DLQ_URL_ENV } from '../../lib/api/stats.ts';
import { DEAD_LETTER_QUEUE_URL_ENV } from '../../lib/engine/reaper-run.ts';
import { PLATFORM_SECRET_ID_ENV } from '../../lib/credentials/platform-keys.ts';
import { DATABASE_SECRET_ARN_ENV } from '../../lib/config/database-secret.ts';
import { jobRegistry } from '../../lib/jobs/registry.ts';
import { createJobQueues } from '../../lib/queue/create-queues.ts';
import { JOB_QUEUE_NAMES, jobQueueDefinitions, toSqsQueueAttributes, type FifoQueueSpec } from '../../lib/queue/queue-definitions.ts';
import { requiredMaxReceiveCount } from '../../lib/queue/receive-budget.ts';
import { VISIBILITY_TO_TIMEOUT_RATIO } from '../../infra/config.ts';
import { referencedId, synthStack, type Synthesized } from './synth.ts';

type Props = Record<string, any>;

/** A queue resource's properties in SQS API attribute terms (what `toSqsQueueAttributes` produces). */
function attributesOfResource(s: Synthesized, props: Props): Record<string, string> {
  const { QueueName: _name, Tags: _tags, RedrivePolicy, ...rest } = props;
  const attributes = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, String(v)]));
  if (RedrivePolicy) {
    const dlqProps = s.template.toJSON().Resources[referencedId(RedrivePolicy.deadLetterTargetArn)].Properties as Props;
    attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: `arn-of:${dlqProps.QueueName}`, maxReceiveCount: RedrivePolicy.maxReceiveCount });
  }
  return attributes;
}

function queuesByName(s: Synthesized): Map<string, Props> {
  return new Map(Object.values(s.template.findResources('AWS::SQS::Queue')).map((r) => [r.Properties.QueueName, r.Properties]));
}

function expectedAttributes(spec: FifoQueueSpec, dlq?: { name: string; maxReceiveCount: number }): Record<string, string> {
  return toSqsQueueAttributes(spec, dlq && { deadLetterTargetArn: `arn-of:${dlq.name}`, maxReceiveCount: dlq.maxReceiveCount });
}

/** The environment the stack gives a function, with CloudFormation references left as they are. */
function envOf(s: Synthesized, name: string): Record<string, string> {
  const fn = Object.entries(s.template.findResources('AWS::Lambda::Function')).find(([id]) => id.startsWith(name))!;
  return fn[1].Properties.Environment.Variables;
}

let dev: Synthesized;
let prod: Synthesized;
beforeAll(() => {
  dev = synthStack();
  prod = synthStack({ stage: 'prod', jwtIssuer: 'https://login.example.org/', maxReceiveCount: '20' });
}, 600_000);

describe('job queue parity', () => {
  it('gives the stack exactly the queues and attributes jobQueueDefinitions defines, in every stage', () => {
    for (const s of [dev, prod]) {
      const env = envOf(s, 'Dispatcher');
      const definitions = jobQueueDefinitions(s.config.stage, queueOptionsFromEnv(env));
      const stackQueues = queuesByName(s);
      expect(stackQueues.size).toBe(2 * JOB_QUEUE_NAMES.length);
      for (const name of JOB_QUEUE_NAMES) {
        const d = definitions[name];
        expect(attributesOfResource(s, stackQueues.get(d.deadLetterQueue.name)!)).toEqual(expectedAttributes(d.deadLetterQueue));
        expect(attributesOfResource(s, stackQueues.get(d.queue.name)!))
          .toEqual(expectedAttributes(d.queue, { name: d.deadLetterQueue.name, maxReceiveCount: d.maxReceiveCount }));
      }
    }
    expect(jobQueueDefinitions('prod', queueOptionsFromEnv(envOf(prod, 'Dispatcher'))).interactive.maxReceiveCount).toBe(20);
  });

  it('writes the environment from which every queue-using function derives the same definitions', () => {
    for (const fn of ['ApiUser', 'ApiAdmin', 'ConsumerInteractive', 'ConsumerBackground', 'Dispatcher']) {
      const env = envOf(dev, fn);
      expect(stageFromEnv(env)).toBe('dev');
      expect(jobQueueDefinitions(stageFromEnv(env), queueOptionsFromEnv(env)), fn)
        .toEqual(jobQueueDefinitions('dev', { maxReceiveCount: requiredMaxReceiveCount(jobRegistry.getAll()), visibilityTimeoutSeconds: visibilityOf(dev) }));
    }
  });

  it('creates through the SQS API (the local runtime and harness path) queues with the attributes the stack declares', async () => {
    const env = envOf(dev, 'Dispatcher');
    const stage = `parity-${Date.now().toString(36)}`;
    const sqs = createSqsClient();
    const created = await createJobQueues(sqs, stage, queueOptionsFromEnv(env));
    const definitions = jobQueueDefinitions(stage, queueOptionsFromEnv(env));
    for (const name of JOB_QUEUE_NAMES) {
      const url = created[name].queueUrl;
      const names = Object.keys(toSqsQueueAttributes(definitions[name].queue)) as QueueAttributeName[];
      const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...names, 'RedrivePolicy'] }));
      const declared = attributesOfResource(dev, queuesByName(dev).get(jobQueueDefinitions('dev', queueOptionsFromEnv(env))[name].queue.name)!);
      for (const attribute of names) expect(Attributes[attribute], attribute).toBe(declared[attribute]);
      expect(JSON.parse(Attributes.RedrivePolicy!).maxReceiveCount).toBe(Number(JSON.parse(declared.RedrivePolicy!).maxReceiveCount));
    }
    sqs.destroy();
  });

  it("sets each queue's visibility timeout to six times its consumer's timeout, which covers the queue's longest job", () => {
    for (const name of JOB_QUEUE_NAMES) {
      const consumer = dev.config.consumers[name];
      expect(visibilityOf(dev)[name]).toBe(consumer.timeoutSeconds * VISIBILITY_TO_TIMEOUT_RATIO);
      const longestJobMs = Math.max(...jobRegistry.getAll().filter((d) => d.queue.queueName === name).map((d) => d.execution.timeoutMs));
      // Room for the provider call's timeout plus preparing and projecting the job.
      expect(consumer.timeoutSeconds * 1000, name).toBeGreaterThanOrEqual(longestJobMs + 15_000);
    }
  });

  it('names the environment variables exactly as the code reads them', () => {
    const dispatcher = envOf(dev, 'Dispatcher');
    for (const name of JOB_QUEUE_NAMES) expect(dispatcher[QUEUE_URL_ENV[name]], name).toBeDefined();
    const reaper = envOf(dev, 'Reaper');
    for (const name of DEAD_LETTER_QUEUE_URL_ENV) expect(reaper[name], name).toBeDefined();
    const admin = envOf(dev, 'ApiAdmin');
    for (const name of JOB_QUEUE_NAMES) expect(admin[DLQ_URL_ENV[name]], name).toBeDefined();
    expect(envOf(dev, 'ConsumerInteractive')[PLATFORM_SECRET_ID_ENV]).toBeDefined();
    expect(envOf(dev, 'ApiUser').CREDENTIALS_KMS_KEY_ID).toBeDefined();
    expect(envOf(dev, 'Migrate')[DATABASE_SECRET_ARN_ENV]).toBeDefined();
  });
});

function visibilityOf(s: Synthesized): Record<string, number> {
  return Object.fromEntries(JOB_QUEUE_NAMES.map((name) => [name, s.config.consumers[name].timeoutSeconds * VISIBILITY_TO_TIMEOUT_RATIO]));
}
