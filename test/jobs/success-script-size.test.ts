/**
 * The one-round-trip projection is a script only while its text, in bytes as the driver sends it, stays within
 * the 16 KB at which RDS Proxy pins a session (lib/jobs/lifecycle-success.ts). Counted in bytes, not UTF-16
 * units: Chinese or Japanese text costs 3 bytes a character, an emoji 4, a quote 2 (escaped). The bound itself
 * (`sentTextBytes`) is checked against what the server receives in test/db/large-statements.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AiJob } from '../../lib/db/client.ts';
import { newId } from '../../lib/db/ids.ts';
import { PROXY_PIN_STATEMENT_BYTES, sentTextBytes } from '../../lib/db/large-statements.ts';
import { atomicQuery } from '../../lib/db/sql-pool.ts';
import { successScript } from '../../lib/jobs/lifecycle-success.ts';

const now = new Date('2026-12-04T10:00:00Z');
const job = {
  id: newId(), userId: 'user-1', jobType: 'feynman_evaluation', triggerType: 'user', targetType: 'concept', targetId: 't-1',
  lifecycleStatus: 'running', queueName: 'interactive', priority: 50, attemptCount: 1, maxAttempts: 2, leaseVersion: 1,
  modelTier: 'fast', credentialMode: 'platform_key', parentJobId: null, errorCode: null, modelProvider: null, modelName: null,
  finishedAt: null, cancelRequestedAt: null, progress: 0, createdAt: now, updatedAt: now,
} as unknown as AiJob;

/** The script for a projection of one row whose text is `text`, or undefined when it is too large. */
function scriptFor(text: string) {
  const projection = { rows: [{ table: 'FeynmanEvaluation', values: { id: newId(), jobId: job.id, feedback: text } }], refs: [] };
  return successScript(job, { holder: 'worker-1', leaseVersion: 1 }, { outputHash: 'a'.repeat(64), now }, projection, { actor: 'worker-1', reason: 'attempt 1' });
}

const bytesOf = (script: NonNullable<ReturnType<typeof scriptFor>>) => {
  const { sql, values } = atomicQuery(script.statements);
  return sentTextBytes(sql, values);
};

describe('the one-round-trip projection\'s size', () => {
  it('refuses 3-byte UTF-8 text that fits in 16 KB as UTF-16 but not as sent', () => {
    // 4,800 Han characters: 9,600 bytes in UTF-16, 14,400 bytes as sent, with the claim, guard, audit row and event over 16 KB.
    expect(scriptFor('漢'.repeat(4_800))).toBeUndefined();
    const under = scriptFor('漢'.repeat(4_300));
    expect(under).toBeDefined();
    expect(bytesOf(under!)).toBeLessThanOrEqual(PROXY_PIN_STATEMENT_BYTES);
  });

  it('takes text up to the limit in bytes as sent, whatever it is made of (ASCII, emoji)', () => {
    for (const text of ['a'.repeat(13_000), '😀'.repeat(3_000), "'".repeat(6_500)]) {
      const script = scriptFor(text);
      expect(script, `${text.slice(0, 1)} × ${text.length}`).toBeDefined();
      expect(bytesOf(script!)).toBeGreaterThan(PROXY_PIN_STATEMENT_BYTES - 4_000);
      expect(bytesOf(script!)).toBeLessThanOrEqual(PROXY_PIN_STATEMENT_BYTES);
    }
  });

  it('never makes a script over 16 KB as sent', () => {
    fc.assert(fc.property(
      fc.string({ unit: fc.constantFrom('a', 'é', '漢', 'カ', '😀', "'", '\\', '\0'), minLength: 3_000, maxLength: 9_000 }),
      (text) => {
        const script = scriptFor(text);
        if (script) expect(bytesOf(script)).toBeLessThanOrEqual(PROXY_PIN_STATEMENT_BYTES);
      },
    ), { numRuns: 80 });
  });
});
