/**
 * Each function's database pool size (DATABASE_CONNECTION_LIMIT, per pool) is what it can use at once, not a
 * blanket default: API 2, dispatcher 3 (one per batch in flight), reaper 2, consumers their batch size + 1.
 * Why: docs/deploy.md, "RDS Proxy: what the application sends".
 */
import { describe, expect, it } from 'vitest';
import { DB_POOL } from '../../infra/app-functions.ts';
import { synthStack } from './synth.ts';

describe('database pool sizes per function', () => {
  it('sets DATABASE_CONNECTION_LIMIT from what each function does at once', { timeout: 180_000 }, () => {
    const s = synthStack();
    const fns = s.template.findResources('AWS::Lambda::Function');
    const limitOf = (name: string) => {
      const entry = Object.entries(fns).find(([id]) => id.startsWith(name));
      expect(entry, name).toBeDefined();
      return entry?.[1].Properties.Environment.Variables.DATABASE_CONNECTION_LIMIT as string | undefined;
    };
    expect(limitOf('ApiUser')).toBe(String(DB_POOL.api));
    expect(limitOf('ApiAdmin')).toBe(String(DB_POOL.api));
    expect(limitOf('Dispatcher')).toBe(String(DB_POOL.dispatcher));
    expect(limitOf('Reaper')).toBe(String(DB_POOL.reaper));
    expect(limitOf('ConsumerInteractive')).toBe(String(s.config.consumers.interactive.batchSize + 1));
    expect(limitOf('ConsumerBackground')).toBe(String(s.config.consumers.background.batchSize + 1));
    expect(DB_POOL.api).toBeLessThanOrEqual(2);
  });
});
