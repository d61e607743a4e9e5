/**
 * The route of terminal job events (`ai.job.succeeded|failed|cancelled`): EventBridge `PutEvents`, ≤ 10
 * entries per call, judged entry by entry like SQS batches. Source `ai.jobs`, detail-type = event type,
 * detail = the stored payload after re-validation (see ./job-events.ts and docs/events.md).
 *
 * EventBridge has no deduplication: a row re-sent after a crash between send and settle is delivered twice.
 * Consumers drop repeats by `detail.eventId`.
 */
import { PutEventsCommand, type EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { JOB_EVENT_SOURCE, jobEventDetailSchema, jobEventTypeFor } from './job-events.ts';
import type { DispatchRow } from './outbox-claims.ts';
import { chunk, describeError } from './send-helpers.ts';
import type { SendContext, SendOutcome } from './routes.ts';

/** EventBridge's limit on entries per `PutEvents`. */
const PUT_EVENTS_LIMIT = 10;

/** Builds the `send` of the job-event route for this bus. */
export function createJobEventSender(eventBridge: EventBridgeClient, eventBusName: string) {
  return async (rows: readonly DispatchRow[], ctx?: SendContext): Promise<SendOutcome[]> => {
    const outcomes: SendOutcome[] = [];
    const entries: { id: string; entry: PutEventsRequestEntry }[] = [];
    for (const row of rows) {
      const prepared = prepareEntry(row, eventBusName);
      if ('result' in prepared) outcomes.push(prepared);
      else entries.push(prepared);
    }
    const sent = await Promise.all(chunk(entries, PUT_EVENTS_LIMIT).map((c) => putEvents(eventBridge, c, ctx?.signal)));
    for (const s of sent) outcomes.push(...s);
    return outcomes;
  };
}

function prepareEntry(row: DispatchRow, eventBusName: string): { id: string; entry: PutEventsRequestEntry } | SendOutcome {
  const detail = jobEventDetailSchema.safeParse(row.payload);
  // Fail closed: a payload that is not exactly the documented detail is never published.
  if (!detail.success || jobEventTypeFor(detail.data.status) !== row.eventType || detail.data.jobId !== row.aggregateId) {
    return { id: row.id, result: 'reject', code: 'INVALID_EVENT_DETAIL', error: 'payload is not a valid detail for this event type' };
  }
  return {
    id: row.id,
    entry: {
      EventBusName: eventBusName,
      Source: JOB_EVENT_SOURCE,
      DetailType: row.eventType,
      Detail: JSON.stringify(detail.data),
      Time: new Date(detail.data.occurredAt),
    },
  };
}

async function putEvents(
  eventBridge: EventBridgeClient, batch: { id: string; entry: PutEventsRequestEntry }[], signal: AbortSignal | undefined,
): Promise<SendOutcome[]> {
  let response;
  try {
    response = await eventBridge.send(new PutEventsCommand({ Entries: batch.map((b) => b.entry) }), signal ? { abortSignal: signal } : {});
  } catch (err) {
    const error = describeError(err);
    return batch.map((b) => ({ id: b.id, result: 'retry', error }));
  }
  // Result entries are in request order; an entry with an ErrorCode failed, the others were accepted.
  return batch.map((b, i): SendOutcome => {
    const result = response.Entries?.[i];
    if (result?.EventId && !result.ErrorCode) return { id: b.id, result: 'sent' };
    return { id: b.id, result: 'retry', error: `${result?.ErrorCode ?? 'NoResult'}: ${result?.ErrorMessage ?? ''}` };
  });
}
