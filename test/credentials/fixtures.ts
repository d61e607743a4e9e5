/**
 * Fixtures for the credentials suites: real KMS keys and Secrets Manager secrets on the emulator (moto, or
 * LocalStack via AWS_ENDPOINT_URL), request recorders built from SDK middleware (observing, not replacing,
 * the real calls), and the assertion that an error leaks no secret in any of its printable forms.
 */
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { CreateKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { CreateSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { expect } from 'vitest';
import { createKmsClient, createSecretsManagerClient } from '../../lib/credentials/aws-clients.ts';
import { freePort } from '../helpers/ports.ts';

/** A DeepSeek-shaped key (`sk-` + 32 hex), different on every call. */
export function fakeDeepseekKey(): string {
  return `sk-${randomBytes(16).toString('hex')}`;
}

/** A unique name for emulator resources (moto is shared by all test workers). */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** A fresh symmetric KMS key; returns its ARN. */
export async function createTestKmsKey(kms: KMSClient = createKmsClient()): Promise<string> {
  const out = await kms.send(new CreateKeyCommand({ Description: 'credentials test key' }));
  const arn = out.KeyMetadata?.Arn;
  if (!arn) throw new Error('CreateKey returned no ARN');
  return arn;
}

/** A new secret holding `value` (a JSON object is stringified); returns its name. */
export async function createTestSecret(value: unknown, sm: SecretsManagerClient = createSecretsManagerClient()): Promise<string> {
  const name = uniqueName('platform-provider-keys');
  await sm.send(new CreateSecretCommand({ Name: name, SecretString: typeof value === 'string' ? value : JSON.stringify(value) }));
  return name;
}

interface RecordableClient {
  middlewareStack: KMSClient['middlewareStack'] | SecretsManagerClient['middlewareStack'];
}

/** Records the command name of every request the client sends, and the output of each that succeeds. */
export function recordRequests(client: RecordableClient): { commands: string[]; outputs: Record<string, unknown>[] } {
  const record = { commands: [] as string[], outputs: [] as Record<string, unknown>[] };
  (client.middlewareStack as KMSClient['middlewareStack']).add(
    (next, context) => async (args) => {
      record.commands.push(String(context.commandName));
      const result = await next(args);
      record.outputs.push(result.output as unknown as Record<string, unknown>);
      return result;
    },
    { step: 'initialize', name: 'testRequestRecorder' },
  );
  return record;
}

/** An endpoint where nothing listens, for clients that must fail to connect (one attempt, no retries). */
export async function deadEndpointEnv(): Promise<Record<string, string>> {
  return { AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: `http://127.0.0.1:${await freePort()}` };
}

/** Asserts that `secret` appears in none of the ways an error gets printed: String, JSON, inspect (with causes). */
export function expectNoSecretIn(err: unknown, secret: string): void {
  expect(err).toBeInstanceOf(Error);
  const forms = [String(err), JSON.stringify(err), inspect(err, { depth: 10 }), (err as Error).stack ?? ''];
  for (const form of forms) expect(form).not.toContain(secret);
}

export { rejectionOf } from '../helpers/assertions.ts';
