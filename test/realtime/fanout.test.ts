/**
 * Fan-out on the local hub (lib/dev/realtime-fanout.ts, the code bench/stream-fanout.ts runs with 1,000): many
 * concurrent subscribers of one job each receive every event of a sequence, with no gap and no duplicate, in order.
 */
import { describe, expect, it } from 'vitest';
import { runFanout } from '../../lib/dev/realtime-fanout.ts';

describe('local hub fan-out', () => {
  it('delivers every seq of 40 pushes once and in order to each of 60 subscribers', async () => {
    const result = await runFanout({ subscribers: 60, pushes: 40, entriesPerPush: 3 });
    expect(result).toMatchObject({ complete: 60, missing: 0, duplicates: 0, outOfOrder: 0 });
  });
});
