/**
 * The per-job figures of bench/capacity.ts, derived from what a run measured, as `name=value` lines (a note in
 * parentheses after the value where the figure needs one), so docs/capacity.md can be refreshed from them.
 *
 * Lambda invocations are derived the way AWS bills them: the API function once per API request; the consumer
 * once per batch its SQS event source received (a ReceiveMessage that returned messages); the dispatcher,
 * reaper and maintenance functions once per schedule tick, whatever the jobs (the eager dispatch runs inside
 * the API invocation that created the job).
 *
 * Lambda GB-seconds are the consumer's, one job per invocation (the interactive queue's batch size): the
 * invocation's own work is at least the consumer thread's CPU per job, and deployed the provider's latency adds
 * `memory (GB) × latency (s)`, which is nearly all of it. Waits for the database and SQS are left out, and so is
 * the local run's startedAt → finishedAt, printed apart: at the offered rate on a busy machine it holds the wait
 * for a core. The API function's share is its requests × their duration × its memory (docs/capacity.md).
 */
import type { AwsCallCounts } from './aws-call-counter.ts';
import type { PathCounts } from '../peers/statement-paths.ts';
import type { DbWrites } from '../peers/db-cost.ts';

export interface CapacityMeasures {
  jobs: number;
  /** Jobs of each type in the run. */
  mix: Record<string, number>;
  offeredPerSecond: number;
  /** The statement window's totals over its own jobs. */
  statements?: { counts: PathCounts; jobs: number; complete: boolean } | undefined;
  db: { writes: DbWrites; cpuMs: number; source: string };
  /** CPU of the runtime's threads (what the API and consumer functions would run), ms in total. */
  runtimeCpuMs: number;
  sqs: AwsCallCounts;
  /** Calls to the AWS-API server (EventBridge, KMS); undefined without moto_server. */
  aws?: AwsCallCounts | undefined;
  /** Terminal-event outbox rows of the run's jobs: the events the dispatcher puts on the EventBridge bus. */
  terminalEvents: number;
  apiRequests: { creates: number; reads: number };
  /** The reads' own cost: the database's and the runtime's CPU over the read phase, ms in total. */
  reads: { dbCpuMs: number; runtimeCpuMs: number };
  /** Each job's run, startedAt → finishedAt, ms, on the local runtime. */
  runMs: number[];
  /** CPU of the runtime's consumer thread over the run, ms in total. */
  consumerCpuMs: number;
  /** The consumer function's memory the GB-seconds are priced at, MB. */
  consumerMemoryMb: number;
}

const fixed = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');
const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
const byAction = (o: Record<string, number>, jobs: number) =>
  Object.entries(o).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}:${fixed(v / jobs, 3)}`).join(',') || 'none';

/** The lines, in a fixed order. */
export function capacityLines(m: CapacityMeasures): string[] {
  const per = (v: number, digits = 2) => fixed(v / m.jobs, digits);
  const lines = [`jobs=${m.jobs} (${Object.entries(m.mix).map(([type, n]) => `${type} ${n}`).join(', ')}; one user per job; offered ${fixed(m.offeredPerSecond, 1)} jobs/s)`];
  const st = m.statements;
  const stPer = (v: number) => (st ? fixed(v / st.jobs) : 'n/a');
  const stNote = st ? ` (general log, ${st.jobs} jobs${st.complete ? '' : ', INCOMPLETE'})` : ' (BENCH_LOG_JOBS=0)';
  lines.push(`write_tx_per_job=${stPer(st?.counts.writeTransactions ?? NaN)}${stNote}`);
  lines.push(`read_tx_per_job=${stPer(st?.counts.readUnits ?? NaN)}`);
  lines.push(`statements_per_job=${stPer(st?.counts.statements ?? NaN)}`);
  lines.push(`db_round_trips_per_job=${stPer(st?.counts.roundTrips ?? NaN)}`);
  const w = m.db.writes;
  lines.push(`rows_written_per_job=${per(w.inserted + w.updated + w.deleted)} (inserted ${per(w.inserted)}, updated ${per(w.updated)}, deleted ${per(w.deleted)}; ${m.db.source})`);
  lines.push(`redo_bytes_per_job=${per(w.logBytes, 0)}`);
  lines.push(`db_commits_per_job=${per(w.commits)} (every committed transaction, reads and other clients' included)`);
  lines.push(`db_cpu_ms_per_job=${per(m.db.cpuMs)} (the database server's process)`);
  lines.push(`runtime_cpu_ms_per_job=${per(m.runtimeCpuMs)} (the local runtime's threads: API, dispatch and consumer work)`);
  lines.push(`sqs_requests_per_job=${per(sum(m.sqs.requests))} (${byAction(m.sqs.requests, m.jobs)})`);
  const sent = (m.sqs.entries.SendMessageBatch ?? 0) + (m.sqs.requests.SendMessage ?? 0);
  lines.push(`sqs_messages_sent_per_job=${per(sent)}`);
  const receives = m.sqs.requests.ReceiveMessage ?? 0;
  lines.push(`sqs_empty_receives_per_job=${per(receives - m.sqs.receivesWithMessages)} (the local poller: one receiver per queue, 1 s long polls; Lambda's pollers differ)`);
  lines.push(`sqs_requests_without_empty_receives_per_job=${per(sum(m.sqs.requests) - (receives - m.sqs.receivesWithMessages))}`);
  const apiRequests = m.apiRequests.creates + m.apiRequests.reads;
  lines.push(`api_requests_per_job=${per(apiRequests)} (create ${per(m.apiRequests.creates)}, result read ${per(m.apiRequests.reads)})`);
  lines.push(`api_read_db_cpu_ms_per_request=${fixed(m.reads.dbCpuMs / Math.max(1, m.apiRequests.reads))} api_read_runtime_cpu_ms_per_request=${fixed(m.reads.runtimeCpuMs / Math.max(1, m.apiRequests.reads))}`);
  lines.push(`lambda_api_invocations_per_job=${per(apiRequests)} (one per API request)`);
  lines.push(`lambda_consumer_invocations_per_job=${per(m.sqs.receivesWithMessages)} (receives that returned messages; ${fixed(m.sqs.messagesReceived / Math.max(1, m.sqs.receivesWithMessages))} messages each at ${fixed(m.offeredPerSecond, 1)} jobs/s)`);
  const runs = m.runMs.filter(Number.isFinite).sort((a, b) => a - b);
  const meanRun = runs.reduce((a, b) => a + b, 0) / Math.max(1, runs.length);
  const p50Run = runs.length ? runs[Math.floor((runs.length - 1) / 2)]! : NaN;
  const gb = m.consumerMemoryMb / 1024;
  lines.push(`consumer_cpu_ms_per_job=${per(m.consumerCpuMs)} (the runtime's consumer thread: lock, reservation, the provider call's client side, projection, the local event source's receives and deletes)`);
  lines.push(`consumer_run_ms_per_job=${fixed(meanRun, 1)} (mean; p50 ${fixed(p50Run, 1)}; startedAt → finishedAt on the local runtime at the offered rate, the mock answering at once, waits for a core included)`);
  lines.push(`lambda_consumer_gb_s_per_job=${fixed((m.consumerCpuMs / m.jobs / 1000) * gb, 4)} (one job per invocation at ${m.consumerMemoryMb} MB, its CPU only; + ${fixed(gb, 3)} GB-s per second of provider latency)`);
  lines.push('lambda_scheduled_invocations_per_job=0 (dispatcher, reaper, maintenance: one per schedule tick, whatever the jobs)');
  lines.push(`eventbridge_events_per_job=${per(m.terminalEvents)} (terminal-event outbox rows)`);
  if (m.aws) {
    lines.push(`eventbridge_put_events_requests_per_job=${per(m.aws.requests.PutEvents ?? 0)} (${per(m.aws.entries.PutEvents ?? 0)} entries)`);
    lines.push(`other_aws_requests_per_job=${per(sum(m.aws.requests) - (m.aws.requests.PutEvents ?? 0))} (${byAction(Object.fromEntries(Object.entries(m.aws.requests).filter(([k]) => k !== 'PutEvents')), m.jobs)})`);
  } else lines.push('eventbridge_put_events_requests_per_job=n/a (moto_server not installed: events were logged, not sent)');
  return lines;
}
