/**
 * Where each outbox event type goes: a map from `eventType` to a route, never a `switch`. Adding an event
 * type means adding an entry here. The dispatcher refuses rows whose type has no route (fail closed).
 */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Prisma } from '../db/client.ts';
import type { SqlRunner } from '../db/sql-pool.ts';
import type { QueueName } from '../queue/queue-definitions.ts';
import { JOB_ENQUEUE_EVENT, JOB_TERMINAL_EVENTS } from './event-types.ts';
import type { DispatchRow } from './outbox-claims.ts';
import { createJobEventSender } from './eventbridge-sender.ts';
import { createJobMessageSender, failJobThatCannotBeQueued } from './sqs-sender.ts';

/** What happened to one row when its route tried to send it. */
export type SendOutcome =
  | { id: string; result: 'sent' }
  /** Transient (throttling, network, a per-entry failure): try again after a backoff. */
  | { id: string; result: 'retry'; error: string }
  /** Can never succeed as stored (bad payload, unknown queue, missing job): give up now. */
  | { id: string; result: 'reject'; code: string; error: string };

/** What a route's `send` gets besides the rows. */
export interface SendContext {
  /** Where lookups the messages need run: the dispatcher's raw pool, or the held batch's transaction. */
  sql: SqlRunner;
  /** Aborts the AWS calls in flight (eager dispatch's time budget); an aborted entry is retried later. */
  signal?: AbortSignal;
  /** Job columns the caller already knows (eager dispatch from the creating code), by job id: no lookup for them. */
  knownJobs?: ReadonlyMap<string, KnownJob>;
}

/** The two job columns an enqueue message carries besides ids. */
export interface KnownJob {
  jobType: string;
  createdAt: Date;
}

/** How one event type is delivered. */
export interface OutboxRoute {
  /**
   * Sends rows of this route's event type; returns one outcome per row. It may throw only for failures of
   * the whole call (e.g. the database lookup), which the dispatcher treats as `retry` for every row.
   */
  send(rows: readonly DispatchRow[], ctx: SendContext): Promise<SendOutcome[]>;
  /**
   * Runs in the transaction that gives a row up (`dead` or `failed`), so nothing waits forever on a message
   * that will never be sent — e.g. the job of an undeliverable enqueue row moves `queued → failed`.
   */
  onGiveUp?(tx: Prisma.TransactionClient, row: DispatchRow, reason: string): Promise<void>;
}

/** Routes by event type. */
export type OutboxRoutes = ReadonlyMap<string, OutboxRoute>;

/** The AWS side of routing: clients and destinations. */
export interface RouteTargets {
  sqs: SQSClient;
  queueUrls: Record<QueueName, string>;
  eventBridge: EventBridgeClient;
  eventBusName: string;
}

/** The engine's routes: enqueue rows to SQS, terminal job events to EventBridge. */
export function createOutboxRoutes(targets: RouteTargets): OutboxRoutes {
  const enqueue: OutboxRoute = {
    send: createJobMessageSender(targets.sqs, targets.queueUrls),
    onGiveUp: failJobThatCannotBeQueued,
  };
  const jobEvent: OutboxRoute = { send: createJobEventSender(targets.eventBridge, targets.eventBusName) };
  return new Map<string, OutboxRoute>([
    [JOB_ENQUEUE_EVENT, enqueue],
    ...Object.values(JOB_TERMINAL_EVENTS).map((type) => [type, jobEvent] as const),
  ]);
}
