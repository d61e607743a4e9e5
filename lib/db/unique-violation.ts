/**
 * Recognises a unique-key violation from Prisma 7 on the MariaDB adapter. `meta.target` is absent there;
 * the index name sits at `meta.driverAdapterError.cause.constraint.index` (measured, see TOOLCHAIN.md).
 */
import { Prisma } from './generated/client.ts';

/** True when `err` is a P2002 on `indexName` (or on any unique index when no name is given). */
export function isUniqueViolation(err: unknown, indexName?: string): boolean {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError) || err.code !== 'P2002') return false;
  if (indexName === undefined) return true;
  const meta = err.meta as { driverAdapterError?: { cause?: { constraint?: { index?: string } } } } | undefined;
  const index = meta?.driverAdapterError?.cause?.constraint?.index;
  // If the driver did not say which index, do not guess: treat as a match only when unnamed.
  return index === undefined || index === indexName;
}
