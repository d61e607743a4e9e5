/** Multi-row `INSERT … ON DUPLICATE KEY UPDATE` in chunks, so every statement stays far below 16 KB. */
import type { Prisma } from '../db/client.ts';
import type { SqlValue } from '../db/sql.ts';

/** Rows per statement: a few KB of SQL text at most (values are bound, not inlined). */
export const ROWS_PER_STATEMENT = 100;

/**
 * Runs `${insertHead} VALUES (…), (…) ON DUPLICATE KEY UPDATE ${onDuplicate}` for `rows`, chunked.
 * `insertHead` is `INSERT INTO \`T\` (c1, c2, …)`; every row has one value per column.
 */
export async function upsertRows(
  tx: Prisma.TransactionClient, insertHead: string, onDuplicate: string, rows: readonly SqlValue[][],
): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
    const tuple = `(${chunk[0]?.map(() => '?').join(', ')})`;
    await tx.$executeRawUnsafe(
      `${insertHead} VALUES ${chunk.map(() => tuple).join(', ')} ON DUPLICATE KEY UPDATE ${onDuplicate}`,
      ...chunk.flat(),
    );
  }
}
