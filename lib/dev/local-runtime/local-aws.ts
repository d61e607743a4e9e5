/**
 * The AWS side of the local runtime: fauxqs in-process with the same queues and DLQs as the stack (from
 * lib/queue/queue-definitions.ts), and — when `moto_server` is installed — EventBridge and KMS on moto so
 * domain events and user keys work too. Everything is exported to the environment the Lambda code reads.
 */
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { CreateEventBusCommand, EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { createSqsClient } from '../../config/aws.ts';
import { createJobQueues, type CreatedJobQueue } from '../../queue/create-queues.ts';
import type { QueueName } from '../../queue/queue-definitions.ts';
import { MotoUnavailableError, startMoto, type MotoServer } from '../moto.ts';
import { freePort } from '../ports.ts';

export const LOCAL_STAGE = 'local';
export const LOCAL_EVENT_BUS = 'ai-jobs-local';

export interface LocalAws {
  sqsEndpoint: string;
  queues: Record<QueueName, CreatedJobQueue>;
  /** undefined when moto_server is not installed: job events are then only logged, user keys unavailable. */
  motoEndpoint?: string;
  stop(): Promise<void>;
}

export interface LocalAwsOptions {
  sqsPort?: number;
  /** An SQS-API server already running (fauxqs elsewhere, LocalStack): used instead of starting fauxqs. */
  sqsEndpoint?: string;
  /** Start moto_server when installed. */
  useMoto: boolean;
  /** An AWS-API server already running for EventBridge and KMS (e.g. the test harness's moto). */
  awsEndpoint?: string;
  log(msg: string): void;
}

export async function startLocalAws(env: NodeJS.ProcessEnv, opts: LocalAwsOptions): Promise<LocalAws> {
  env.AWS_REGION ??= 'us-east-1';
  env.AWS_ACCESS_KEY_ID ??= 'local';
  env.AWS_SECRET_ACCESS_KEY ??= 'local';
  const fauxqs: FauxqsServer | undefined = opts.sqsEndpoint
    ? undefined
    : await startFauxqs({ port: opts.sqsPort ?? (await freePort()), host: '127.0.0.1', logger: false } as Parameters<typeof startFauxqs>[0]);
  const sqsEndpoint = opts.sqsEndpoint ?? `http://127.0.0.1:${fauxqs?.port}`;
  env.AWS_ENDPOINT_URL_SQS = sqsEndpoint;
  env.STAGE = LOCAL_STAGE;
  const queues = await createJobQueues(createSqsClient(env), LOCAL_STAGE);
  env.INTERACTIVE_QUEUE_URL = queues.interactive.queueUrl;
  env.BACKGROUND_QUEUE_URL = queues.background.queueUrl;
  env.INTERACTIVE_DLQ_URL = queues.interactive.deadLetterQueueUrl;
  env.BACKGROUND_DLQ_URL = queues.background.deadLetterQueueUrl;
  env.EVENT_BUS_NAME = LOCAL_EVENT_BUS;
  const moto = opts.awsEndpoint || !opts.useMoto ? undefined : await startOptionalMoto(opts.log);
  const awsEndpoint = opts.awsEndpoint ?? moto?.endpoint;
  if (awsEndpoint) await useAwsEndpoint(env, awsEndpoint);
  return {
    sqsEndpoint, queues, ...(awsEndpoint ? { motoEndpoint: awsEndpoint } : {}),
    stop: async () => {
      await fauxqs?.stop();
      await moto?.stop();
    },
  };
}

async function startOptionalMoto(log: (msg: string) => void): Promise<MotoServer | undefined> {
  try {
    return await startMoto();
  } catch (err) {
    if (!(err instanceof MotoUnavailableError)) throw err;
    log(`moto_server not available (${err.message}): job events are logged only, and storing user keys answers 503`);
    return undefined;
  }
}

/** EventBridge and KMS on `endpoint`: the local bus and a key for user credentials. */
async function useAwsEndpoint(env: NodeJS.ProcessEnv, endpoint: string): Promise<void> {
  env.AWS_ENDPOINT_URL_EVENTBRIDGE = endpoint;
  env.AWS_ENDPOINT_URL_KMS = endpoint;
  env.AWS_ENDPOINT_URL_SECRETS_MANAGER = endpoint;
  const region = env.AWS_REGION;
  await new EventBridgeClient({ endpoint, region }).send(new CreateEventBusCommand({ Name: LOCAL_EVENT_BUS })).catch((err: unknown) => {
    if ((err as Error).name !== 'ResourceAlreadyExistsException') throw err;
  });
  const key = await new KMSClient({ endpoint, region }).send(new CreateKeyCommand({ Description: 'local user credential key' }));
  env.CREDENTIALS_KMS_KEY_ID ??= key.KeyMetadata?.KeyId;
}
