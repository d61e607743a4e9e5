/**
 * The client's zod-free check of a realtime push (lib/stream/push-guard.ts) accepts exactly what the protocol's
 * zod schemas accept (lib/stream/protocol.ts), on arbitrary near-valid values: every field valid, missing, of
 * the wrong type or out of range, extra keys, odd timestamps.
 */
import fc from 'fast-check';
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { streamEntrySchema } from '../../lib/stream/protocol.ts';
import { isStreamEntry, isStreamPush } from '../../lib/stream/push-guard.ts';

const pushSchema = z.strictObject({ userId: z.string(), jobId: z.string(), entries: z.array(streamEntrySchema) });

const MISSING = Symbol('missing');
/** A field's value: valid ones mostly, sometimes missing or wrong. */
const field = (valid: fc.Arbitrary<unknown>, weight = 6) => fc.oneof(
  { arbitrary: valid, weight },
  { arbitrary: fc.constantFrom<unknown>(MISSING, null, '', -1, 0, 1.5, 'x', [], {}, true), weight: 1 },
);
const instant = fc.oneof(
  fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-12-05T10:00:00Z', '2026-12-05T10:00Z', '2026-12-05T10:00:00+01:00', '2026-02-30T00:00:00Z', '2026-12-05T24:00:00Z', '2026-12-05 10:00:00Z', '2026-12-05T10:00:00.1234567Z'),
);
const common = { seq: field(fc.integer({ min: -2, max: 1e6 })), attempt: field(fc.integer({ min: -1, max: 20 })), at: field(instant) };
const status = fc.record({
  ...common, type: fc.constant('status'), status: field(fc.constantFrom('queued', 'running', 'succeeded', 'failed', 'cancelled', 'paused')),
  retryAt: field(instant, 1), resultUrl: field(fc.string(), 1),
  error: field(fc.oneof(fc.record({ code: fc.string(), message: fc.string() }), fc.record({ code: fc.string() }), fc.record({ code: fc.string(), message: fc.string(), stack: fc.string() })), 1),
  waitingFor: field(fc.record({ reason: fc.constantFrom('provider_capacity', 'spend_cap', 'other'), until: instant }), 1),
});
const text = fc.record({ ...common, type: fc.constant('text'), field: field(fc.string()), delta: field(fc.string()) });
const item = fc.record({ ...common, type: fc.constant('item'), field: field(fc.string()), index: field(fc.integer({ min: -1, max: 50 })), item: field(fc.jsonValue()) });
const extra = fc.option(fc.constantFrom('extra', 'userId', 'delta', 'status'), { nil: undefined });
const entry = fc.tuple(fc.oneof(status, text, item, fc.record({ ...common, type: fc.constantFrom('chunk', 7) })), extra).map(([e, key]) => {
  const value = Object.fromEntries(Object.entries(e).filter(([, v]) => v !== MISSING));
  return key === undefined || key in value ? value : { ...value, [key]: 'x' };
});

describe('the client push guard', () => {
  it('accepts an entry exactly when the protocol schema does', () => {
    let valid = 0;
    fc.assert(fc.property(entry, (e) => {
      if (streamEntrySchema.safeParse(e).success) valid += 1;
      expect(isStreamEntry(e)).toBe(streamEntrySchema.safeParse(e).success);
    }), { numRuns: 5_000 });
    expect(valid, 'valid entries among the generated ones').toBeGreaterThan(50);
  });

  it('accepts a push exactly when the protocol schema does', () => {
    const push = fc.record({ userId: field(fc.string()), jobId: field(fc.string()), entries: field(fc.array(entry, { maxLength: 4 })) }, { requiredKeys: [] })
      .map((p) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== MISSING)));
    fc.assert(fc.property(push, (p) => {
      expect(isStreamPush(p)).toBe(pushSchema.safeParse(p).success);
    }), { numRuns: 2_000 });
  });
});
