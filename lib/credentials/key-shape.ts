/**
 * What a submitted provider API key must look like, and the fingerprint that lets its owner recognise it.
 *
 * Fingerprint format: `<scheme prefix>…<last 4> sha256:<8 hex>`, e.g. `sk-…wxyz sha256:1a2b3c4d`.
 * - The scheme prefix is the key's leading `letters-` (2–4 letters, e.g. `sk-`), shown only when present:
 *   it is the same for every key of a provider and says nothing about this one.
 * - The last 4 characters are what provider dashboards show too; keys are at least 16 characters, so at
 *   least 12 stay hidden (a DeepSeek key has 32 random hex characters: 112 of its 128 bits stay hidden).
 * - The hash tells two keys with the same last 4 apart. It is SHA-256 over a domain tag, the owner's user id
 *   and the key, truncated to 32 bits: too short to confirm a guess of a provider-generated key (each 32-bit
 *   value matches ~2^80 keys that end in the same 4 characters), and salted per user, so the same key stored
 *   by two users does not look the same.
 * The whole fingerprint is at most 31 characters (column: 64).
 */
import { createHash } from 'node:crypto';
import { CredentialKeyFormatError } from './errors.ts';

/** Shortest key accepted; provider keys are 32+ characters, and a short one would be half shown by its last 4. */
export const MIN_KEY_LENGTH = 16;
/** Longest key accepted. */
export const MAX_KEY_LENGTH = 512;

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const SCHEME_PREFIX = /^[A-Za-z]{2,4}-/;
const SHOWN_SUFFIX = 4;
const HASH_HEX_CHARS = 8;

/**
 * Checks the shape of a submitted key: 16–512 characters of visible ASCII (no whitespace, control or
 * non-ASCII characters; a pasted key with a trailing newline is refused, not silently trimmed).
 * @throws CredentialKeyFormatError naming the rule broken; the key itself is never in the message.
 */
export function assertApiKeyShape(apiKey: string): void {
  if (apiKey.length === 0) throw new CredentialKeyFormatError('empty', 'The API key is empty');
  if (apiKey.length > MAX_KEY_LENGTH) {
    throw new CredentialKeyFormatError('too_long', `The API key is longer than ${MAX_KEY_LENGTH} characters`);
  }
  if (apiKey.length < MIN_KEY_LENGTH) {
    throw new CredentialKeyFormatError('too_short', `The API key is shorter than ${MIN_KEY_LENGTH} characters`);
  }
  if (!VISIBLE_ASCII.test(apiKey)) {
    throw new CredentialKeyFormatError('invalid_characters', 'The API key contains whitespace or characters other than visible ASCII');
  }
}

/** The fingerprint of an already validated key for `userId` (format in the module comment). */
export function fingerprintOf(userId: string, apiKey: string): string {
  const prefix = SCHEME_PREFIX.exec(apiKey)?.[0] ?? '';
  const suffix = apiKey.slice(-SHOWN_SUFFIX);
  const digest = createHash('sha256').update(`user-model-credential:v1\n${userId}\n${apiKey}`, 'utf8').digest('hex');
  return `${prefix}…${suffix} sha256:${digest.slice(0, HASH_HEX_CHARS)}`;
}
