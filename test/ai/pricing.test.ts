import { describe, expect, it } from 'vitest';
import { costOf, PRICE_TABLE, PRICE_TABLE_VERSION, priceOf } from '../../lib/ai/pricing.ts';

const usage = (promptTokens: number, completionTokens: number) => ({ promptTokens, completionTokens });

describe('costOf', () => {
  it('prices prompt and completion tokens separately, to 8 decimal places', () => {
    const chat = { provider: 'deepseek', model: 'deepseek-chat' };
    expect(costOf(chat, usage(1_000_000, 1_000_000))).toEqual({ costUsd: '0.70000000', priceVersion: PRICE_TABLE_VERSION, priced: true });
    // 1234 × 0.28 / 1e6 + 567 × 0.42 / 1e6 = 0.00034552 + 0.00023814
    expect(costOf(chat, usage(1234, 567)).costUsd).toBe('0.00058366');
    expect(costOf(chat, usage(0, 0)).costUsd).toBe('0.00000000');
    expect(costOf(chat, usage(3_000_000_000, 0)).costUsd).toBe('840.00000000');
  });

  it('prices every mock model at zero', () => {
    expect(costOf({ provider: 'mock', model: 'anything' }, usage(500, 500))).toMatchObject({ costUsd: '0.00000000', priced: true });
  });

  it('records an unknown model at cost zero and flags it', () => {
    expect(costOf({ provider: 'openai-compat', model: 'unlisted' }, usage(10, 10))).toEqual({
      costUsd: '0.00000000',
      priceVersion: PRICE_TABLE_VERSION,
      priced: false,
    });
  });

  it('refuses token counts that are not non-negative integers', () => {
    expect(() => costOf({ provider: 'deepseek', model: 'deepseek-chat' }, usage(-1, 0))).toThrow(RangeError);
    expect(() => costOf({ provider: 'deepseek', model: 'deepseek-chat' }, usage(1.5, 0))).toThrow(RangeError);
  });
});

describe('the price table', () => {
  it('has a version that fits the usage ledger and well-formed prices for the configured providers', () => {
    expect(PRICE_TABLE_VERSION.length).toBeLessThanOrEqual(32);
    for (const price of Object.values(PRICE_TABLE)) {
      expect(price.promptPer1M).toMatch(/^\d+(\.\d{1,6})?$/);
      expect(price.completionPer1M).toMatch(/^\d+(\.\d{1,6})?$/);
    }
    for (const model of ['deepseek-chat', 'deepseek-reasoner']) expect(priceOf({ provider: 'deepseek', model })).toBeDefined();
    expect(priceOf({ provider: 'openai-compat', model: 'gpt-4o-mini' })).toBeDefined();
  });
});
