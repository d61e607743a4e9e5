/**
 * Rows → response bodies, as whitelists: each view names every field it returns, so a new column never
 * leaks by default. The public view is exactly ADR-003 §7.2's frozen JobStatusResponse — no input,
 * snapshot, output or output hash, credential, lease, or internal error. Admin views add internal fields.
 */
import type { AiJob, AiJobArtifact, AiJobSnapshot, AiJobTransition, AiUsageLog } from '../db/client.ts';
import type { JobWait } from '../capacity/waits-repository.ts';
import { redactSnapshot } from '../jobs/redaction.ts';
import type { AdminJobDetail, AdminJobSummary, JobStatusResponse } from './response-schemas.ts';

export type ArtifactRow = Pick<AiJobArtifact, 'artifactType' | 'artifactId' | 'ordinal'>;
export type UsageRow = Pick<AiUsageLog, 'attemptNo' | 'promptTokens' | 'completionTokens' | 'totalTokens' | 'costUsd' | 'model' | 'provider' | 'latencyMs' | 'errorCode'>;
export type SnapshotRow = Pick<AiJobSnapshot, 'content' | 'schemaVersion' | 'redactionVersion' | 'createdAt' | 'expiresAt'>;
export type TransitionRow = Pick<AiJobTransition, 'fromStatus' | 'toStatus' | 'actor' | 'reason' | 'errorCode' | 'leaseVersion' | 'createdAt'>;

/**
 * The frozen JobStatusResponse. Optional fields are omitted when empty; `result` only for a succeeded job,
 * its artifacts in projection order.
 */
export function toPublicJobView(job: AiJob, artifacts: readonly ArtifactRow[]): JobStatusResponse {
  const view: JobStatusResponse = {
    jobId: job.id,
    jobType: job.jobType,
    lifecycleStatus: job.lifecycleStatus,
    queueName: job.queueName,
    priority: job.priority,
    progress: job.progress,
    createdAt: job.createdAt.toISOString(),
  };
  if (job.startedAt) view.startedAt = job.startedAt.toISOString();
  if (job.finishedAt) view.finishedAt = job.finishedAt.toISOString();
  if (job.errorCode) view.errorCode = job.errorCode;
  if (job.publicErrorMessage) view.publicErrorMessage = job.publicErrorMessage;
  if (job.lifecycleStatus === 'succeeded') {
    const ordered = [...artifacts].sort((a, b) => a.ordinal - b.ordinal);
    view.result = {
      artifactCount: ordered.length,
      artifacts: ordered.map((a) => ({ artifactType: a.artifactType, artifactId: a.artifactId })),
    };
  }
  return view;
}

/** An admin list row: the public view plus owner, trigger, attempts and lineage. */
export function toAdminJobSummary(job: AiJob, artifacts: readonly ArtifactRow[]): AdminJobSummary {
  return {
    ...toPublicJobView(job, artifacts),
    userId: job.userId,
    triggerType: job.triggerType,
    attemptCount: job.attemptCount,
    maxAttempts: job.maxAttempts,
    parentJobId: job.parentJobId,
  };
}

/** What the admin detail reads beside the job (lib/api/job-reads.ts `adminJobRelations`). */
export interface AdminJobRelations {
  artifacts: readonly ArtifactRow[];
  transitions: readonly TransitionRow[];
  usage: readonly UsageRow[];
  snapshot: SnapshotRow | null;
  /** A succeeded job's business rows (its type's result reader), else null. */
  businessRows: Record<string, unknown> | null;
  /** Why a job parked between deliveries waits (provider capacity, a spending cap); null or absent otherwise. */
  wait?: JobWait | null;
}

/**
 * The admin detail: the summary plus internal error, model, transition history, usage per attempt (latency,
 * errors), the input snapshot, the business rows and why a parked job waits (`waitingFor`). The snapshot was
 * redacted when stored; it is redacted again here with today's rules (lib/jobs/redaction.ts), so a snapshot
 * stored under older rules shows nothing those rules missed.
 */
export function toAdminJobView(job: AiJob, related: AdminJobRelations): AdminJobDetail {
  return {
    ...toAdminJobSummary(job, related.artifacts),
    targetType: job.targetType,
    targetId: job.targetId,
    credentialMode: job.credentialMode,
    modelProvider: job.modelProvider,
    modelName: job.modelName,
    cancelRequestedAt: job.cancelRequestedAt?.toISOString() ?? null,
    internalErrorMessage: job.internalErrorMessage,
    transitions: related.transitions.map((t) => ({
      fromStatus: t.fromStatus,
      toStatus: t.toStatus,
      actor: t.actor,
      reason: t.reason,
      errorCode: t.errorCode,
      leaseVersion: t.leaseVersion,
      createdAt: t.createdAt.toISOString(),
    })),
    usage: summarizeUsage(related.usage),
    inputSnapshot: related.snapshot && {
      content: redactSnapshot(related.snapshot.content).content,
      schemaVersion: related.snapshot.schemaVersion,
      redactionVersion: related.snapshot.redactionVersion,
      createdAt: related.snapshot.createdAt.toISOString(),
      expiresAt: related.snapshot.expiresAt?.toISOString() ?? null,
    },
    businessRows: related.businessRows,
    waitingFor: related.wait ? {
      reason: related.wait.waitingFor, until: related.wait.until.toISOString(), since: related.wait.since.toISOString(),
      provider: related.wait.route?.provider ?? null, model: related.wait.route?.model ?? null,
    } : null,
  };
}

type UsageTotals = AdminJobDetail['usage']['total'];

/** Provider calls summed per attempt (ascending) and overall. Costs are added in integer units of 1e-8 USD. */
export function summarizeUsage(rows: readonly UsageRow[]): AdminJobDetail['usage'] {
  const perAttempt = new Map<number, { sums: Sums; models: Set<string>; latencyMs: number; errorCodes: Set<string> }>();
  const total = newSums();
  for (const row of rows) {
    let entry = perAttempt.get(row.attemptNo);
    if (!entry) perAttempt.set(row.attemptNo, (entry = { sums: newSums(), models: new Set(), latencyMs: 0, errorCodes: new Set() }));
    add(entry.sums, row);
    add(total, row);
    entry.models.add(`${row.provider}/${row.model}`);
    entry.latencyMs += row.latencyMs;
    if (row.errorCode) entry.errorCodes.add(row.errorCode);
  }
  const attempts = [...perAttempt.entries()]
    .sort(([a], [b]) => a - b)
    .map(([attemptNo, { sums, models, latencyMs, errorCodes }]) => ({
      attemptNo, ...totalsOf(sums), models: [...models].sort(), latencyMs, errorCodes: [...errorCodes],
    }));
  return { attempts, total: totalsOf(total) };
}

interface Sums {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** In units of 1e-8 USD (the column's scale), so additions are exact. */
  costUnits: bigint;
}

function newSums(): Sums {
  return { calls: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, costUnits: 0n };
}

function add(sums: Sums, row: UsageRow): void {
  sums.calls += 1;
  sums.promptTokens += row.promptTokens;
  sums.completionTokens += row.completionTokens;
  sums.totalTokens += row.totalTokens;
  sums.costUnits += costUnitsOf(row.costUsd.toFixed(8));
}

/** `"0.00012"` → 12000n (1e-8 units); the column is DECIMAL(14,8) and never negative. */
function costUnitsOf(decimal: string): bigint {
  const [whole = '0', fraction = ''] = decimal.split('.');
  return BigInt(whole) * 100_000_000n + BigInt(fraction.padEnd(8, '0').slice(0, 8));
}

function totalsOf(sums: Sums): UsageTotals {
  const whole = sums.costUnits / 100_000_000n;
  const fraction = (sums.costUnits % 100_000_000n).toString().padStart(8, '0');
  const { calls, promptTokens, completionTokens, totalTokens } = sums;
  return { calls, promptTokens, completionTokens, totalTokens, costUsd: `${whole}.${fraction}` };
}
