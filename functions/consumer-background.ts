/** Consumer Lambda of the background FIFO queue (SQS event source, ReportBatchItemFailures). */
import { createConsumerHandler } from '../lib/engine/consumer-handler.ts';

export const handler = createConsumerHandler('background');
