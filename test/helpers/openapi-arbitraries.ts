/**
 * fast-check arbitraries for HTTP requests driven by the OpenAPI document (docs/openapi.json): a value that a
 * JSON schema accepts, the same value broken in the ways careless clients and attackers break it, hostile
 * text (lone surrogates, U+0000, U+FFFF, emoji, combining and RTL marks), and raw query/path encodings.
 */
import fc from 'fast-check';

export type JsonSchema = {
  type?: string; enum?: unknown[]; properties?: Record<string, JsonSchema>; required?: string[]; items?: JsonSchema;
  minLength?: number; maxLength?: number; minimum?: number; maximum?: number; minItems?: number; maxItems?: number;
  pattern?: string; format?: string; $ref?: string; anyOf?: JsonSchema[];
};

/** Strings that have broken systems before, each well-formed or deliberately not. */
export const HOSTILE_TEXT = [
  'a\uD800b', '\uDC00', 'x\uDBFF', 'nul\u0000byte', '\uFFFF', '\uFEFFbom', 'emoji \u{1F600}\u{1F9D1}\u200D\u{1F4BB}',
  'e\u0301\u0302', '\u202Ertl\u200F', '\u2067iso\u2069', ' padded ', 'tab\there', 'line\nbreak', "quote' OR 1=1 --",
  '"; DROP TABLE AiJob; --', '../../etc/passwd', '%00', '${jndi:x}', '<script>alert(1)</script>', '\\u0000', 'SUPER_ADMIN',
  '[SUPER_ADMIN]', 'team, SUPER_ADMIN', '\u{10FFFF}', '?', '',
] as const;

/** Any text: hostile constants, arbitrary graphemes, or arbitrary code units (lone surrogates included). */
export function anyText(maxLength = 40): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength }) },
    { weight: 1, arbitrary: fc.string({ maxLength }) },
  );
}

/** A value `schema` accepts (patterns and formats included), resolving `#/components/schemas/…` in `doc`. */
export function validValue(schema: JsonSchema, doc: { components: { schemas: Record<string, JsonSchema> } }): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.anyOf) return fc.oneof(...s.anyOf.map((x) => validValue(x, doc)));
  switch (s.type) {
    case 'string':
      if (s.format === 'date-time') return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
      if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity));
      return fc.string({ unit: 'grapheme', minLength: Math.max(1, s.minLength ?? 0), maxLength: Math.min(s.maxLength ?? 60, 60) })
        .filter((v) => v.trim().length >= (s.minLength ?? 0));
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1000, max: s.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(validValue(s.items ?? {}, doc), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 5, 5) });
    case 'object': {
      const shape = Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, validValue(v, doc)]));
      return fc.record(shape, { requiredKeys: s.required ?? [] });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A valid value broken one way: a field dropped, retyped, made hostile, or an unknown field added. */
export function brokenValue(schema: JsonSchema, doc: { components: { schemas: Record<string, JsonSchema> } }): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  const keys = Object.keys(s.properties ?? {});
  if (s.type !== 'object' || keys.length === 0) return fc.jsonValue({ maxDepth: 3 });
  return fc.tuple(validValue(s, doc), fc.constantFrom(...keys), fc.nat(4), anyText(), fc.jsonValue({ maxDepth: 2 })).map(([valid, key, how, text, json]) => {
    const value = { ...(valid as Record<string, unknown>) };
    if (how === 0) delete value[key];
    else if (how === 1) value[key] = json;
    else if (how === 2) value[key] = text;
    else if (how === 3) value[text] = 1;
    else value[key] = `${String(value[key] ?? '')}${text}`;
    return value;
  });
}

function resolve(schema: JsonSchema, doc: { components: { schemas: Record<string, JsonSchema> } }): JsonSchema {
  if (!schema.$ref) return schema;
  const id = schema.$ref.replace('#/components/schemas/', '');
  const target = doc.components.schemas[id];
  if (!target) throw new RangeError(`unresolved ${schema.$ref}`);
  return target;
}

/** Percent-encodes text for a URL; ill-formed text as the raw bytes a client might send (`%ED%A0%80`). */
export function encodeComponent(text: string): string {
  if (text.isWellFormed()) return encodeURIComponent(text);
  return [...text].map((ch) => (ch.isWellFormed() ? encodeURIComponent(ch) : wtf8(ch))).join('');
}

/** A lone surrogate's WTF-8 bytes, percent-encoded: what a sloppy encoder produces. */
function wtf8(ch: string): string {
  const c = ch.charCodeAt(0);
  return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
}

/** Raw path segments and query pieces no encoder would produce. */
export const RAW_PIECES = ['%ED%A0%80', '%FF', '%00', '%', '%2F', '..', '%2e%2e', '+', '%C0%AF'] as const;
