import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { KeyObjectSha256 } from '../../lib/config/sha256.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bytes = (s: string) => new TextEncoder().encode(s);

async function digestOf(Ctor: typeof Sha256 | typeof KeyObjectSha256, secret: string | Uint8Array | undefined, parts: (string | Uint8Array)[]) {
  const h = new Ctor(secret);
  for (const p of parts) h.update(typeof p === 'string' ? bytes(p) : p);
  return hex(await h.digest());
}

describe('KeyObjectSha256, the SigV4 signers\' hash', () => {
  it('gives the SDK default\'s hashes and HMACs, for string and byte keys, byte views included', async () => {
    const backing = new Uint8Array([9, 9, ...bytes('a signing key, 32 bytes long...!'), 9]);
    const view = backing.subarray(2, 34);
    for (const secret of [undefined, 'AWS4secret', bytes('k'), view, new Uint8Array(0)]) {
      const parts = ['canonical request\n', bytes('body ü')];
      expect(await digestOf(KeyObjectSha256, secret, parts)).toBe(await digestOf(Sha256, secret, parts));
    }
  });

  it('lets a plain hash go on after a digest, and reset() start over, as the SDK default does', async () => {
    const ours = new KeyObjectSha256();
    const theirs = new Sha256();
    for (const h of [ours, theirs]) h.update(bytes('a'));
    expect(hex(await ours.digest())).toBe(hex(await theirs.digest()));
    for (const h of [ours, theirs]) h.update(bytes('b'));
    expect(hex(await ours.digest())).toBe(hex(await theirs.digest()));
    ours.reset();
    ours.update(bytes('ab'));
    expect(hex(await ours.digest())).toBe(hex(await theirs.digest()));
  });

  it('uses a key by its bytes: a buffer reused for another key gives that key\'s HMAC', async () => {
    const key = new Uint8Array(32).fill(1);
    const first = await digestOf(KeyObjectSha256, key, ['x']);
    key.fill(2);
    expect(await digestOf(KeyObjectSha256, key, ['x'])).toBe(await digestOf(Sha256, key, ['x']));
    expect(await digestOf(KeyObjectSha256, key, ['x'])).not.toBe(first);
  });

  it('signs a request exactly as the SDK default does', async () => {
    const init = { service: 'appsync', region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' } };
    const request = {
      method: 'POST', protocol: 'https:', hostname: 'x.appsync-api.eu-west-1.amazonaws.com', path: '/event', query: {},
      headers: { host: 'x.appsync-api.eu-west-1.amazonaws.com', 'content-type': 'application/json' }, body: '{"channel":"a/b","events":["1"]}',
    };
    const signingDate = new Date('2026-01-02T03:04:05Z');
    const ours = await new SignatureV4({ ...init, sha256: KeyObjectSha256 }).sign(request, { signingDate });
    const theirs = await new SignatureV4({ ...init, sha256: Sha256 }).sign(request, { signingDate });
    expect(ours.headers.authorization).toBe(theirs.headers.authorization);
  });
});
