/**
 * Watermarks of the bounded incremental aggregations (lib/rollups/): every source row with a time before a
 * rollup's `coveredUntil` is counted in its tables; rows at or after it are read live by the reports.
 *
 * Invariant: a watermark only moves forward, and only in the transaction that wrote the rollup rows for the
 * span it moves over, with its row locked (FOR UPDATE), so two concurrent maintenance runs cannot count a
 * span twice: the second finds the watermark moved and writes nothing.
 */
import type { Db, Prisma } from '../db/client.ts';

/** The rollups that keep a watermark. */
export type RollupName = 'finished_jobs' | 'usage';

/** Thrown inside an aggregation transaction when another run advanced the watermark first; it rolls back. */
export class WatermarkMovedError extends Error {
  override readonly name = 'WatermarkMovedError';
  constructor(readonly rollup: RollupName, expected: Date, found: Date | null) {
    super(`rollup ${rollup}: watermark is ${found?.toISOString() ?? 'missing'}, expected ${expected.toISOString()}`);
  }
}

/** The watermark, or null before the first aggregation. */
export async function readWatermark(db: Db, name: RollupName): Promise<Date | null> {
  const row = await db.aiRollupWatermark.findUnique({ where: { name }, select: { coveredUntil: true } });
  return row?.coveredUntil ?? null;
}

/** Creates the watermark at `initial` unless it exists; returns the stored one. */
export async function ensureWatermark(db: Db, name: RollupName, initial: Date, now: Date): Promise<Date> {
  await db.$executeRawUnsafe(
    'INSERT IGNORE INTO `AiRollupWatermark` (name, coveredUntil, updatedAt) VALUES (?, ?, ?)', name, initial, now,
  );
  return (await readWatermark(db, name)) as Date;
}

/**
 * Inside the caller's transaction: locks the watermark row and moves it from `from` to `to`.
 * @throws WatermarkMovedError when it is no longer at `from` (another run got there first)
 */
export async function advanceWatermark(
  tx: Prisma.TransactionClient, name: RollupName, from: Date, to: Date, now: Date,
): Promise<void> {
  const rows = await tx.$queryRawUnsafe<{ coveredUntil: Date }[]>(
    'SELECT coveredUntil FROM `AiRollupWatermark` WHERE name = ? FOR UPDATE', name,
  );
  const found = rows[0]?.coveredUntil ?? null;
  if (found?.getTime() !== from.getTime()) throw new WatermarkMovedError(name, from, found);
  await tx.$executeRawUnsafe('UPDATE `AiRollupWatermark` SET coveredUntil = ?, updatedAt = ? WHERE name = ?', to, now, name);
}
