import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, hashCanonical, MAX_CANONICAL_DEPTH, sha256Hex } from '../../lib/jobs/canonical-json.ts';
import { CanonicalJsonError, type CanonicalJsonProblem } from '../../lib/jobs/errors.ts';

function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = { n: value };
  return value;
}

describe('canonicalJson', () => {
  it('writes the same text whatever the key order', () => {
    const a = { b: 1, a: 2, c: { z: true, y: null } };
    const b = { c: { y: null, z: true }, a: 2, b: 1 };
    expect(canonicalJson(a)).toBe('{"a":2,"b":1,"c":{"y":null,"z":true}}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it('sorts keys inside arrays of objects but keeps array order', () => {
    expect(canonicalJson([{ b: 1, a: 2 }, 3, 'x'])).toBe('[{"a":2,"b":1},3,"x"]');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it('sorts keys by UTF-16 code units, as RFC 8785 does', () => {
    expect(canonicalJson({ b: 0, B: 0, a: 0, '10': 0, '9': 0, é: 0 })).toBe('{"10":0,"9":0,"B":0,"a":0,"b":0,"é":0}');
  });

  it('writes no whitespace and escapes strings as JSON does', () => {
    expect(canonicalJson({ text: 'line\n"quoted" \u0001' })).toBe('{"text":"line\\n\\"quoted\\" \\u0001"}');
    expect(canonicalJson({ empty: {}, none: [] })).toBe('{"empty":{},"none":[]}');
  });

  it('writes numbers in their shortest form and -0 as 0', () => {
    expect(canonicalJson([1.0, 0.1, 1e21, -0, 1e-7])).toBe('[1,0.1,1e+21,0,1e-7]');
  });

  it('omits object properties that are undefined, as the stored JSON does', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
  });

  it('accepts objects without a prototype and a shared (non-circular) reference', () => {
    const bare = Object.assign(Object.create(null) as object, { k: 'v' });
    const shared = { s: 1 };
    expect(canonicalJson({ bare, x: shared, y: shared })).toBe('{"bare":{"k":"v"},"x":{"s":1},"y":{"s":1}}');
  });

  it('accepts nesting up to the depth limit', () => {
    expect(() => canonicalJson(nested(MAX_CANONICAL_DEPTH))).not.toThrow();
  });

  const circular: Record<string, unknown> = { a: 1 };
  circular.self = { back: circular };

  const unsupported: [string, unknown, CanonicalJsonProblem, string][] = [
    ['undefined at the root', undefined, 'undefined', ''],
    ['undefined in an array', [1, undefined], 'undefined', '[1]'],
    ['a hole in a sparse array', [1, , 3], 'undefined', '[1]'],
    ['a function', { f: () => 1 }, 'function', 'f'],
    ['a symbol', { s: Symbol('x') }, 'symbol', 's'],
    ['a bigint', { n: { big: 10n } }, 'bigint', 'n.big'],
    ['NaN', { x: NaN }, 'non-finite number', 'x'],
    ['Infinity', [[-Infinity]], 'non-finite number', '[0][0]'],
    ['a Date', { at: new Date(0) }, 'non-plain object', 'at'],
    ['a Map', { m: new Map() }, 'non-plain object', 'm'],
    ['a typed array', { bytes: new Uint8Array(2) }, 'non-plain object', 'bytes'],
    ['a circular reference', circular, 'circular reference', 'self.back'],
    ['nesting beyond the limit', nested(MAX_CANONICAL_DEPTH + 1), 'too deep', Array(MAX_CANONICAL_DEPTH).fill('n').join('.')],
  ];

  it.each(unsupported)('refuses %s with a typed error naming the path', (_, value, problem, path) => {
    let caught: unknown;
    try {
      canonicalJson(value);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CanonicalJsonError);
    const err = caught as CanonicalJsonError;
    expect(err.code).toBe('INVALID_JSON_VALUE');
    expect(err.problem).toBe(problem);
    expect(err.path).toBe(path);
  });

  it('names awkward keys unambiguously in the error path', () => {
    expect(() => canonicalJson({ 'a.b': { 'x y': NaN } })).toThrow('["a.b"]["x y"]');
  });
});

describe('hashing', () => {
  it('sha256Hex is the SHA-256 of the UTF-8 bytes, in lower-case hex', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('é')).toBe(createHash('sha256').update(Buffer.from([0xc3, 0xa9])).digest('hex'));
  });

  it('hashCanonical is the SHA-256 of the canonical text', () => {
    const value = { prompt: 'hi', options: { b: [1, 2], a: null } };
    expect(hashCanonical(value)).toBe(sha256Hex('{"options":{"a":null,"b":[1,2]},"prompt":"hi"}'));
    expect(hashCanonical(value)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives equal hashes for equal JSON in any key order and different hashes otherwise', () => {
    const hash = hashCanonical({ a: 1, b: { c: 'x', d: [true] } });
    expect(hashCanonical({ b: { d: [true], c: 'x' }, a: 1 })).toBe(hash);
    expect(hashCanonical(JSON.parse('{"b":{"c":"x","d":[true]},"a":1}'))).toBe(hash);
    expect(hashCanonical({ a: 1, b: { c: 'x', d: [false] } })).not.toBe(hash);
    expect(hashCanonical({ a: '1', b: { c: 'x', d: [true] } })).not.toBe(hash);
  });

  it('is stable across releases for a fixed value', () => {
    // Stored hashes must keep matching: if this changes, every inputHash/contentHash changes with it.
    // The expected value is `printf '%s' '{"prompt":"hello","sleepMs":0}' | sha256sum`.
    expect(hashCanonical({ sleepMs: 0, prompt: 'hello' })).toBe('41c5f762e12442ca7261656c742d1236c03635b0e36ac72389e1fedc1f3887de');
  });

  it('refuses to hash values canonical JSON refuses', () => {
    expect(() => hashCanonical({ n: 1n })).toThrow(CanonicalJsonError);
  });
});
