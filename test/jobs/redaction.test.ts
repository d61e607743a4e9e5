import { describe, expect, it } from 'vitest';
import { CanonicalJsonError, SnapshotLimitError } from '../../lib/jobs/errors.ts';
import {
  isSensitiveKey,
  MAX_SNAPSHOT_DEPTH,
  MAX_SNAPSHOT_NODES,
  REDACTED,
  REDACTION_VERSION,
  redactSnapshot,
  redactText,
} from '../../lib/jobs/redaction.ts';

const OPENAI_KEY = 'sk-proj-AbCdEf0123456789_xyz-QRS';
const DEEPSEEK_KEY = 'sk-0123456789abcdef0123456789abcdef';
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const AWS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';

describe('redactSnapshot', () => {
  it('records the redaction version and keeps a snapshot with nothing secret as it was', () => {
    const input = { prompt: 'Summarise chapter 3', options: { maxTokens: 512, keywords: ['cell', 'mitosis'] } };
    const result = redactSnapshot(input);
    expect(REDACTION_VERSION).toBe(1);
    expect(result.redactionVersion).toBe(REDACTION_VERSION);
    expect(result.content).toEqual(input);
    expect(result.redactedPaths).toEqual([]);
  });

  it('replaces the whole value of a sensitive field, whatever its type', () => {
    const result = redactSnapshot({
      apiKey: 'abc',
      password: 12345,
      credentials: { user: 'u', pass: 'p' },
      refresh_token: ['a', 'b'],
      prompt: 'hi',
    });
    expect(result.content).toEqual({
      apiKey: REDACTED,
      password: REDACTED,
      credentials: REDACTED,
      refresh_token: REDACTED,
      prompt: 'hi',
    });
    expect(result.redactedPaths).toEqual(['apiKey', 'password', 'credentials', 'refresh_token']);
  });

  it('keeps null and undefined in sensitive fields: there is nothing to hide', () => {
    expect(redactSnapshot({ token: null, apiKey: undefined }).content).toEqual({ token: null, apiKey: undefined });
  });

  it('redacts through nested objects and arrays and reports each path', () => {
    const input = {
      messages: [
        { role: 'user', content: `use ${DEEPSEEK_KEY} please` },
        { role: 'tool', headers: { Authorization: 'Basic dXNlcjpwYXNz', 'X-Api-Key': 'k1' } },
      ],
      matrix: [[{ secret: 's' }], ['plain', JWT]],
    };
    const result = redactSnapshot(input);
    expect(result.content).toEqual({
      messages: [
        { role: 'user', content: `use ${REDACTED} please` },
        { role: 'tool', headers: { Authorization: REDACTED, 'X-Api-Key': REDACTED } },
      ],
      matrix: [[{ secret: REDACTED }], ['plain', REDACTED]],
    });
    expect(result.redactedPaths).toEqual([
      'messages[0].content',
      'messages[1].headers.Authorization',
      'messages[1].headers["X-Api-Key"]',
      'matrix[0][0].secret',
      'matrix[1][1]',
    ]);
  });

  it('redacts a secret string at the root', () => {
    expect(redactSnapshot(`Bearer ${JWT}`)).toEqual({
      content: `Bearer ${REDACTED}`,
      redactionVersion: REDACTION_VERSION,
      redactedPaths: [''],
    });
  });

  it('never mutates its input and returns fresh containers', () => {
    const input = { nested: { token: 't0ken', list: [{ note: OPENAI_KEY }] }, keep: { a: 1 } };
    const before = structuredClone(input);
    const result = redactSnapshot(input);
    const content = result.content as typeof input;

    expect(input).toEqual(before);
    expect(content.keep).toEqual(input.keep);
    expect(content.keep).not.toBe(input.keep);
    expect(content.nested.list).not.toBe(input.nested.list);
  });

  it('copies a `__proto__` key as data without touching the prototype', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as object;
    const content = redactSnapshot(input).content as Record<string, unknown>;
    expect(Object.getPrototypeOf(content)).toBe(Object.prototype);
    expect(Object.keys(content)).toEqual(['__proto__', 'ok']);
    expect((content as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('leaves other leaves as they are', () => {
    expect(redactSnapshot({ n: 1.5, b: false, z: null, list: [] }).content).toEqual({ n: 1.5, b: false, z: null, list: [] });
  });

  it('accepts nesting up to the depth limit and refuses one level more', () => {
    const nested = (levels: number) => {
      let value: unknown = 'leaf';
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    expect(() => redactSnapshot(nested(MAX_SNAPSHOT_DEPTH))).not.toThrow();
    const err = catchError(() => redactSnapshot(nested(MAX_SNAPSHOT_DEPTH + 1)));
    expect(err).toBeInstanceOf(SnapshotLimitError);
    expect((err as SnapshotLimitError).code).toBe('SNAPSHOT_LIMIT_EXCEEDED');
    expect((err as SnapshotLimitError).limit).toBe('depth');
  });

  it('refuses a circular snapshot through the depth limit instead of overflowing the stack', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(catchError(() => redactSnapshot(loop))).toBeInstanceOf(SnapshotLimitError);
  });

  it('refuses a snapshot holding more values than the node limit', () => {
    const err = catchError(() => redactSnapshot(new Array(MAX_SNAPSHOT_NODES).fill(0)));
    expect(err).toBeInstanceOf(SnapshotLimitError);
    expect((err as SnapshotLimitError).limit).toBe('nodes');
    expect(() => redactSnapshot(new Array(MAX_SNAPSHOT_NODES - 1).fill(0))).not.toThrow();
  });

  it('refuses class instances whose contents it cannot inspect', () => {
    const err = catchError(() => redactSnapshot({ at: new Map([['token', 'x']]) }));
    expect(err).toBeInstanceOf(CanonicalJsonError);
    expect((err as CanonicalJsonError).path).toBe('at');
  });
});

describe('isSensitiveKey', () => {
  it.each([
    'apiKey', 'api_key', 'API_KEY', 'x-api-key', 'apikey', 'APIKey', 'key', 'Key', 'privateKey', 'private_key',
    'secretAccessKey', 'encryptionKey', 'secret', 'clientSecret', 'client_secret', 'SECRETS',
    'token', 'accessToken', 'access_token', 'refreshToken', 'idToken', 'sessionToken', 'authToken',
    'password', 'PASSWORD', 'passwd', 'passwordHash', 'db_password', 'passphrase',
    'credential', 'credentials', 'userCredentials', 'authorization', 'Authorization', 'auth', 'basicAuth', 'cookie',
  ])('treats %j as secret', (name) => {
    expect(isSensitiveKey(name)).toBe(true);
  });

  it.each([
    'idempotencyKey', 'idempotency_key', 'cacheKey', 'promptKey', 'sortKey', 'partition_key', 'publicKey', 's3Key',
    'keyword', 'keywords', 'keys', 'keyId', 'monkey', 'hotkey', 'maxTokens', 'totalTokens', 'tokenCount', 'tokenizer',
    'credentialId', 'credentialMode', 'author', 'authority', 'secretary', 'prompt', 'text', '',
  ])('keeps %j', (name) => {
    expect(isSensitiveKey(name)).toBe(false);
  });

  it('keeps the values of harmless fields in a snapshot', () => {
    const input = { idempotencyKey: 'req-42', keyword: 'osmosis', keys: ['a'], maxTokens: 100, credentialId: 'c1' };
    expect(redactSnapshot(input).content).toEqual(input);
  });
});

describe('redactText', () => {
  it.each([
    ['an OpenAI key', `key=${OPENAI_KEY};`, `key=${REDACTED};`],
    ['a DeepSeek key', `"${DEEPSEEK_KEY}"`, `"${REDACTED}"`],
    ['a JWT', `token ${JWT} end`, `token ${REDACTED} end`],
    ['a bearer token', 'Authorization: Bearer abcDEF123456789_-.~+/xyz==', `Authorization: Bearer ${REDACTED}`],
    ['a lower-case bearer JWT', `bearer ${JWT}`, `bearer ${REDACTED}`],
    ['an AWS access key id', `aws ${AWS_KEY_ID} here`, `aws ${REDACTED} here`],
    ['a temporary AWS key id', 'ASIAQWERTYUIOPASDFGH', REDACTED],
    ['several secrets', `${OPENAI_KEY} and ${AWS_KEY_ID}`, `${REDACTED} and ${REDACTED}`],
  ])('redacts %s inside the string', (_, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it.each([
    ['a short sk- word', 'the sk-learn package'],
    ['sk- inside a word', 'task-0123456789abcdefghij'],
    ['a word after Bearer', 'the Bearer of good news'],
    ['a lone base64 segment', 'eyJhbGciOiJIUzI1NiJ9'],
    ['an almost-AWS id', 'AKIA123'],
    ['ordinary prose', 'Explain photosynthesis in 3 sentences.'],
  ])('leaves %s alone', (_, text) => {
    expect(redactText(text)).toBe(text);
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return expect.unreachable('expected an error');
}
