/**
 * The process-wide KMS and Secrets Manager clients give up on an endpoint that accepts connections and never
 * answers, so a credential lookup cannot hold a job's attempt past its abort (lib/engine/delivery-guard.ts).
 */
import { ListKeysCommand } from '@aws-sdk/client-kms';
import { ListSecretsCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKmsClient, getSecretsManagerClient, isTransientAwsError } from '../../lib/credentials/aws-clients.ts';
import { silentEndpoint } from '../helpers/ports.ts';

let silent: Awaited<ReturnType<typeof silentEndpoint>>;
beforeAll(async () => {
  silent = await silentEndpoint();
  // Read by the clients on their first use, in this test file's process.
  process.env.AWS_ENDPOINT_URL_KMS = silent.url;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = silent.url;
});
afterAll(async () => {
  delete process.env.AWS_ENDPOINT_URL_KMS;
  delete process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
  await silent.close();
});

describe('the process-wide AWS clients of the credentials capability', () => {
  it.each([
    ['KMS', () => getKmsClient().send(new ListKeysCommand({}))],
    ['Secrets Manager', () => getSecretsManagerClient().send(new ListSecretsCommand({}))],
  ])('%s: a hung endpoint is a transient timeout, not a wait without end', async (_, call) => {
    const err = await call().then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ name: 'TimeoutError' });
    expect(isTransientAwsError(err)).toBe(true);
  }, 40_000);
});
