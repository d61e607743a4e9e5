/** Consumer Lambda of the interactive FIFO queue (SQS event source, ReportBatchItemFailures). */
import { createConsumerHandler } from '../lib/engine/consumer-handler.ts';

export const handler = createConsumerHandler('interactive');
