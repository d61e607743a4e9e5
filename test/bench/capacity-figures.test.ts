/**
 * bench:capacity's per-job lines: Lambda invocations derived as AWS bills them (API per request, consumer per
 * receive that returned messages) and the consumer's GB-seconds, SQS requests by action, empty receives apart,
 * EventBridge from the outbox.
 */
import { describe, expect, it } from 'vitest';
import { capacityLines, type CapacityMeasures } from '../../bench/capacity/figures.ts';

const measures: CapacityMeasures = {
  jobs: 100,
  mix: { quiz_generation: 50, feynman_evaluation: 50 },
  offeredPerSecond: 50,
  statements: { counts: { writeTransactions: 195, readUnits: 5, statements: 1000, roundTrips: 240 }, jobs: 50, complete: true },
  db: { writes: { inserted: 1200, updated: 400, deleted: 0, commits: 2500, logBytes: 1_500_000 }, cpuMs: 500, source: 'test counters' },
  runtimeCpuMs: 1500,
  sqs: {
    requests: { SendMessageBatch: 90, ReceiveMessage: 80, DeleteMessageBatch: 40 },
    entries: { SendMessageBatch: 100, DeleteMessageBatch: 100 },
    receivesWithMessages: 60, messagesReceived: 100,
  },
  aws: { requests: { PutEvents: 10, CreateKey: 1 }, entries: { PutEvents: 100 }, receivesWithMessages: 0, messagesReceived: 0 },
  terminalEvents: 100,
  apiRequests: { creates: 100, reads: 100 },
  reads: { dbCpuMs: 80, runtimeCpuMs: 200 },
  runMs: [20, 30, 40, NaN],
  consumerCpuMs: 400,
  consumerMemoryMb: 512,
};

const value = (lines: string[], name: string) => lines.find((l) => l.startsWith(`${name}=`))?.slice(name.length + 1).split(' ')[0];

describe('the capacity bench figures', () => {
  const lines = capacityLines(measures);

  it('derives Lambda invocations per job by function', () => {
    expect(value(lines, 'lambda_api_invocations_per_job')).toBe('2.00');
    expect(value(lines, 'lambda_consumer_invocations_per_job')).toBe('0.60');
    expect(lines.find((l) => l.startsWith('lambda_consumer_invocations_per_job='))).toContain('1.67 messages each');
    expect(value(lines, 'lambda_scheduled_invocations_per_job')).toBe('0');
  });

  it('prices the consumer in GB-seconds from its CPU per job, and per second of provider latency', () => {
    expect(value(lines, 'consumer_cpu_ms_per_job')).toBe('4.00');
    // 0.004 s × 0.5 GB, one job per invocation
    expect(value(lines, 'lambda_consumer_gb_s_per_job')).toBe('0.0020');
    expect(lines.find((l) => l.startsWith('lambda_consumer_gb_s_per_job='))).toContain('+ 0.500 GB-s per second of provider latency');
    // a job without a run (NaN) is left out of the mean
    expect(value(lines, 'consumer_run_ms_per_job')).toBe('30.0');
  });

  it('counts SQS requests by action, and the empty receives apart', () => {
    expect(lines.find((l) => l.startsWith('sqs_requests_per_job='))).toBe('sqs_requests_per_job=2.10 (DeleteMessageBatch:0.400,ReceiveMessage:0.800,SendMessageBatch:0.900)');
    expect(value(lines, 'sqs_empty_receives_per_job')).toBe('0.20');
    expect(value(lines, 'sqs_requests_without_empty_receives_per_job')).toBe('1.90');
    expect(value(lines, 'sqs_messages_sent_per_job')).toBe('1.00');
  });

  it('gives the database figures per job, statements from the window’s own job count', () => {
    expect(value(lines, 'write_tx_per_job')).toBe('3.90');
    expect(value(lines, 'statements_per_job')).toBe('20.00');
    expect(value(lines, 'rows_written_per_job')).toBe('16.00');
    expect(value(lines, 'redo_bytes_per_job')).toBe('15000');
    expect(value(lines, 'db_cpu_ms_per_job')).toBe('5.00');
    expect(value(lines, 'eventbridge_events_per_job')).toBe('1.00');
    expect(value(lines, 'eventbridge_put_events_requests_per_job')).toBe('0.10');
  });
});
