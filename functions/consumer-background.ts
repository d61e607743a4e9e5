/** Consumer Lambda of the background FIFO queue (SQS event source, ReportBatchItemFailures). */
import { createConsumerHandler } from '../lib/engine/consumer-handler.ts';
import { withStreamPublishing } from '../lib/realtime/handler-publishing.ts';

// The batch's stream entries (status and output chunks) are pushed as they commit; flushed, bounded, before it returns.
export const handler = withStreamPublishing(createConsumerHandler('background'));
