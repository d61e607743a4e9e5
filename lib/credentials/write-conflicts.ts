/**
 * Retrying a whole transaction that lost a deadlock. InnoDB picks one victim and rolls it back (error 1213);
 * the Prisma MariaDB adapter reports it as P2034. The victim did nothing, so running it again is safe.
 */
import { isDeadlock } from '../db/connection-errors.ts';

/** Attempts in all, the first included. */
const MAX_ATTEMPTS = 5;

/** Whether `err` is a transaction rolled back by a deadlock or write conflict (Prisma P2034 or the driver's 1213). */
export function isWriteConflict(err: unknown): boolean {
  return isDeadlock(err);
}

/**
 * Runs `transaction` (which must open and commit its own transaction) again when it loses a deadlock, up to
 * 5 attempts, after a random pause whose bound doubles each time (20, 40, 80, 160 ms) so the contenders
 * spread out. Other errors pass through at once.
 */
export async function withWriteConflictRetry<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !isWriteConflict(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** attempt));
    }
  }
}
