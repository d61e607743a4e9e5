/**
 * SHA-256 written for the APPSYNC_JS runtime, where the `jobs` namespace's onSubscribe handler computes the
 * caller's owner segment (./channel.ts) from the token's `sub`. That runtime has no crypto utility and refuses
 * much of JavaScript (https://docs.aws.amazon.com/appsync/latest/eventapi/runtime-supported-features.html: no
 * `for(;;)`, `while`, `try`/`throw`, `continue`, `++`/`--`/`~`, `in`), so this file keeps to for-of over array
 * literals, bitwise operators, `push`, `split`, `indexOf` and `charAt`, with no callbacks, classes, regular
 * expressions or `new`. The UTF-8 bytes come from the runtime's own `util.base64Encode` (UTF-8, per
 * https://docs.aws.amazon.com/appsync/latest/eventapi/built-in-util.html), decoded here; no char-code API needed.
 *
 * test/realtime/subscribe-rules.test.ts checks it against node:crypto; test/realtime/handler-code.test.ts checks
 * that the bundled handler uses none of the constructs above.
 */

const K = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
  0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
  0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
  0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
const ROUNDS = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
  32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
];
/** Block offsets: messages up to 16 blocks (1 KiB); the rules refuse longer subjects before hashing. */
const BLOCKS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
const BYTE_SHIFTS = [24, 16, 8, 0];
const NIBBLE_SHIFTS = [28, 24, 20, 16, 12, 8, 4, 0];
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const HEX = '0123456789abcdef';
/** The largest message this implementation hashes (16 blocks less the padding's 9 bytes). */
export const MAX_SHA256_MESSAGE_BYTES = 16 * 64 - 9;

/** The bytes a standard base64 string (padded or not) encodes. */
export function bytesOfBase64(text: string): number[] {
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const ch of text.split('')) {
    if (ch === '=') break;
    buffer = (buffer << 6) | BASE64.indexOf(ch);
    bits = bits + 6;
    if (bits >= 8) {
      bits = bits - 8;
      bytes.push((buffer >>> bits) & 0xff);
      buffer = buffer & ((1 << bits) - 1);
    }
  }
  return bytes;
}

function rotr(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

/** The message with SHA-256 padding: 0x80, zeros to 56 mod 64, the bit length as 64-bit big-endian. */
function padded(message: number[]): number[] {
  const bytes: number[] = [];
  for (const b of message) bytes.push(b);
  bytes.push(0x80);
  const zeros = (120 - (bytes.length % 64)) % 64;
  for (const i of ROUNDS) {
    if (i < zeros) bytes.push(0);
  }
  const bitLength = message.length * 8;
  for (const word of [Math.floor(bitLength / 4294967296), bitLength >>> 0]) {
    for (const shift of BYTE_SHIFTS) bytes.push((word >>> shift) & 0xff);
  }
  return bytes;
}

/** The message schedule of the block at `offset`. */
function schedule(bytes: number[], offset: number): number[] {
  const w: number[] = [];
  for (const t of ROUNDS) {
    if (t < 16) {
      const j = offset + t * 4;
      w.push((bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!);
    } else {
      const a = w[t - 15]!;
      const b = w[t - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w.push((w[t - 16]! + s0 + w[t - 7]! + s1) | 0);
    }
  }
  return w;
}

/** One compression of the block at `offset` into the state `h`. */
function compress(h: number[], bytes: number[], offset: number): number[] {
  const w = schedule(bytes, offset);
  let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!, f = h[5]!, g = h[6]!, k = h[7]!;
  for (const t of ROUNDS) {
    const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const choice = (e & f) ^ ((e ^ 0xffffffff) & g);
    const t1 = (k + s1 + choice + K[t]! + w[t]!) | 0;
    const s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const majority = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (s0 + majority) | 0;
    k = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  return [(h[0]! + a) | 0, (h[1]! + b) | 0, (h[2]! + c) | 0, (h[3]! + d) | 0, (h[4]! + e) | 0, (h[5]! + f) | 0, (h[6]! + g) | 0, (h[7]! + k) | 0];
}

/**
 * The first `words` 32-bit words (8 hex digits each) of SHA-256 over `message`, as lower-case hex; '' when the
 * message is longer than {@link MAX_SHA256_MESSAGE_BYTES}.
 */
export function sha256HexWords(message: number[], words: number): string {
  if (message.length > MAX_SHA256_MESSAGE_BYTES) return '';
  const bytes = padded(message);
  let h = H0;
  for (const block of BLOCKS) {
    if (block * 64 < bytes.length) h = compress(h, bytes, block * 64);
  }
  let hex = '';
  for (const i of [0, 1, 2, 3, 4, 5, 6, 7]) {
    if (i < words) {
      for (const shift of NIBBLE_SHIFTS) hex = hex + HEX.charAt((h[i]! >>> shift) & 15);
    }
  }
  return hex;
}
