/** Writes and reads `AiJobSnapshot`, the redacted input a job runs on (ADR-003 §8.4). */
import type { AiJobSnapshot, Db } from '../db/client.ts';
import { newId } from '../db/ids.ts';
import { insertStatement, type SqlStatement } from '../db/sql.ts';

export interface NewSnapshot {
  jobId: string;
  schemaVersion: string;
  /** Already redacted. */
  content: unknown;
  contentHash: string;
  redactionVersion: number;
  expiresAt?: Date | null;
}

export function snapshotInsert(s: NewSnapshot, now = new Date()): SqlStatement {
  return insertStatement('AiJobSnapshot', {
    id: newId(), jobId: s.jobId, schemaVersion: s.schemaVersion, content: JSON.stringify(s.content),
    contentHash: s.contentHash, redactionVersion: s.redactionVersion, expiresAt: s.expiresAt ?? null, createdAt: now,
  });
}

export async function findSnapshot(db: Db, jobId: string): Promise<AiJobSnapshot | null> {
  return db.aiJobSnapshot.findUnique({ where: { jobId } });
}
