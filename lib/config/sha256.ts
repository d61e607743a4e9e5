/**
 * The SHA-256 the AWS SDK's SigV4 signers use (its `sha256` setting), with HMACs keyed by a `KeyObject`.
 *
 * Why: on Node 24, `createHmac('sha256', <Buffer or Uint8Array>)` costs about five times what the same HMAC
 * keyed by a `KeyObject` costs (measured on Node 24.21: ~120 µs against ~25 µs; Node 20: ~21 µs either way):
 * the key goes through two failed brand checks (`getKeyObjectSlots`, `getSlots`) before it is taken as bytes. The
 * SDK's default (`Sha256Node` of `@smithy/core/checksum`) passes a Buffer; every signed request (an SQS call,
 * a realtime publish, the local hub's check of one) does at least one HMAC with the day's signing key.
 *
 * Same algorithm and same bytes: only how the key reaches OpenSSL differs. The last few keys are kept as
 * `KeyObject`s, looked up by their bytes (a signer reuses its signing key for a day, so this is nearly always
 * a hit); a key is never cached by its object's identity, as a caller may reuse a buffer for another key.
 */
import { createHash, createHmac, createSecretKey, type Hash, type Hmac, type KeyObject } from 'node:crypto';
import type { Checksum, SourceData } from '@smithy/types';

/** Keys kept as KeyObjects (a few signers, each with one signing key a day, and the hub's check). */
const MAX_KEYS = 32;
const keys = new Map<string, KeyObject>();

function bytesOf(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

function keyObjectOf(secret: SourceData): KeyObject {
  const bytes = bytesOf(secret);
  const id = bytes.toString('base64');
  let key = keys.get(id);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    key = createSecretKey(bytes);
    keys.set(id, key);
  }
  return key;
}

/** SHA-256, or HMAC-SHA-256 when given a secret: a drop-in for the SDK's `Sha256` (the `sha256` client setting). */
export class KeyObjectSha256 implements Checksum {
  readonly digestLength = 32;
  private hash: Hash | Hmac;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.create();
  }

  update(data: SourceData): void {
    this.hash.update(typeof data === 'string' ? data : bytesOf(data));
  }

  /** As the SDK's: a plain hash can go on after a digest (it digests a copy); an HMAC cannot. */
  async digest(): Promise<Uint8Array> {
    const out = 'copy' in this.hash ? this.hash.copy().digest() : this.hash.digest();
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  }

  reset(): void {
    this.hash = this.create();
  }

  private create(): Hash | Hmac {
    return this.secret ? createHmac('sha256', keyObjectOf(this.secret)) : createHash('sha256');
  }
}
