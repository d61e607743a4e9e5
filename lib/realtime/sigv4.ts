/**
 * SigV4 for the Event API's HTTP publish (service `appsync`), with the AWS SDK's own signer: the publisher signs
 * with the function's credentials (the default Node provider chain: the Lambda role, or AWS_ACCESS_KEY_ID locally),
 * and the local hub verifies by re-signing the received request with the one key pair it accepts, so an unsigned,
 * mis-scoped or altered publish is refused locally as AppSync's IAM mode refuses it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { KeyObjectSha256 as sha256 } from '../config/sha256.ts';

export const EVENTS_SIGNING_SERVICE = 'appsync';
/** SigV4 refuses a request dated more than 15 minutes from the server's clock. */
const MAX_CLOCK_SKEW_MS = 15 * 60_000;

/** A POST as it goes on the wire. */
export interface SignedPost {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/** Signs JSON POSTs to an Event API endpoint. */
export type EventsSigner = (url: URL, body: string) => Promise<SignedPost>;

/** A signer for `region` with `credentials` (default: the AWS SDK's Node provider chain). */
export function createEventsSigner(region: string, credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider): EventsSigner {
  const signer = new SignatureV4({ service: EVENTS_SIGNING_SERVICE, region, credentials: credentials ?? defaultProvider(), sha256 });
  return async (url, body) => {
    const signed = await signer.sign({
      method: 'POST', protocol: url.protocol, hostname: url.hostname, ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname, query: {}, headers: { host: url.host, 'content-type': 'application/json' }, body,
    });
    return { url, headers: signed.headers, body };
  };
}

/** What a verifier needs of a received request. */
export interface ReceivedRequest {
  method: string;
  host: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;

/**
 * True when the request carries a valid SigV4 signature by `credentials` for `region` and service `appsync`,
 * dated within 15 minutes, over the exact body received.
 */
export async function verifyEventsSignature(req: ReceivedRequest, region: string, credentials: AwsCredentialIdentity, now = Date.now()): Promise<boolean> {
  const header = (name: string) => { const v = req.headers[name]; return Array.isArray(v) ? v.join(',') : v; };
  const match = AUTHORIZATION.exec(header('authorization') ?? '');
  const amzDate = header('x-amz-date') ?? '';
  if (!match || match[1] !== credentials.accessKeyId || match[3] !== region || match[4] !== EVENTS_SIGNING_SERVICE) return false;
  const signedAt = parseAmzDate(amzDate);
  if (signedAt === undefined || match[2] !== amzDate.slice(0, 8) || Math.abs(now - signedAt.getTime()) > MAX_CLOCK_SKEW_MS) return false;
  const contentHash = header('x-amz-content-sha256');
  if (contentHash !== undefined && contentHash !== createHash('sha256').update(req.body, 'utf8').digest('hex')) return false;
  const signedNames = match[5]!.split(';');
  const headers: Record<string, string> = {};
  for (const name of signedNames) {
    const value = name === 'host' ? req.host : header(name);
    if (value === undefined) return false;
    headers[name] = value;
  }
  const signer = new SignatureV4({ service: EVENTS_SIGNING_SERVICE, region, credentials, sha256, applyChecksum: contentHash !== undefined });
  const [path, query] = splitPath(req.path);
  const expected = await signer.sign(
    { method: req.method, protocol: 'http:', hostname: req.host, path, query, headers, body: req.body },
    { signingDate: signedAt, unsignableHeaders: new Set(), signableHeaders: new Set(signedNames) },
  );
  const expectedSignature = /Signature=([0-9a-f]{64})$/.exec(expected.headers.authorization ?? '')?.[1] ?? '';
  return expectedSignature.length === 64 && timingSafeEqual(Buffer.from(expectedSignature), Buffer.from(match[6]!));
}

function parseAmzDate(text: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : undefined;
}

function splitPath(raw: string): [string, Record<string, string>] {
  const url = new URL(raw, 'http://local');
  return [url.pathname, Object.fromEntries(url.searchParams)];
}
