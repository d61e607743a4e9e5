/**
 * Our local runtime (lib/dev/local-runtime/runtime.ts) in a process of its own, driven by bench/peers.ts over
 * IPC, as the API and consumer Lambdas run apart from their callers in production. It also hosts the
 * in-process creation clients (createJob called directly, no HTTP or JWT) and, on request, a CPU profile of
 * itself (node:inspector) over exactly the window the parent asks for.
 *
 * The runtime starts as `npm start` (lib/dev/start.ts) starts it — the same function, the DATABASE_URL's pool
 * sizes (no connectionLimit given: the default), the consumer thread, the scheduled intervals, the local JWT
 * key file, EventBridge and KMS on moto_server when it is installed (one the emulators started, rather than one
 * of its own), its log lines on stdout — with one difference by default: fauxqs and the mock provider run in
 * the emulators' process (bench/emulators.ts) instead of on the runtime's main thread. Deployed, SQS and the
 * provider are other machines' work; in-process their CPU could not be told apart from the runtime's (/proc
 * accounts per thread), and the peers call the same mock in that process. The mock has no latency, as
 * `npm start`'s without MOCK_AI_LATENCY_MS. Given no sqsEndpoint and no mockAiUrl, the runtime starts both in
 * its own process, exactly as `npm start` does (MOCK_AI_LATENCY_MS and MOCK_AI_FAILURE_RATE read alike).
 * Likewise the realtime hub, given `realtimeHttpEndpoint`: the runtime's publishers sign and send every push as
 * deployed functions send them to AppSync Events, and checking the signature and fanning the push out, AppSync's
 * work when deployed, happens in the emulators' process.
 *
 * argv: <databaseUrl> <json endpoints {sqsEndpoint?, mockAiUrl?, awsEndpoint?, realtimeHttpEndpoint?}>. Messages:
 * see {@link HostRequest}.
 */
import { signLocalToken } from '../../lib/api/local-jwt.ts';
import { startLocalRuntime } from '../../lib/dev/local-runtime/runtime.ts';
import { REALTIME_ENDPOINT_ENV } from '../../lib/realtime/publisher-from-env.ts';
import { offerLoad, type LoadPlan } from './load.ts';
import { benchUserId, workloadFromEnv } from './workload.ts';
import { startThreadProfiles } from './thread-profiles.ts';

/** `users` users of group `group` (ids {@link benchUserId}); job i of a run goes to user i % users. */
export interface UserGroup { group: string; users: number }

export type HostRequest =
  | { id: number; cmd: 'tokens'; users: UserGroup }
  | { id: number; cmd: 'inproc'; plan: LoadPlan; runId: string; users: UserGroup }
  | { id: number; cmd: 'profile-start' }
  | { id: number; cmd: 'profile-stop'; file: string }
  | { id: number; cmd: 'stop' };

const [databaseUrl, endpointsJson] = process.argv.slice(2) as [string, string];
const endpoints = JSON.parse(endpointsJson) as { sqsEndpoint?: string; mockAiUrl?: string; awsEndpoint?: string; realtimeHttpEndpoint?: string };
if (endpoints.realtimeHttpEndpoint) process.env[REALTIME_ENDPOINT_ENV] = endpoints.realtimeHttpEndpoint;
const workload = workloadFromEnv();
const number = (name: string) => (process.env[name]?.trim() ? Number(process.env[name]) : undefined);
const runtime = await startLocalRuntime({
  databaseUrl, port: 0,
  ...(endpoints.sqsEndpoint ? { sqsEndpoint: endpoints.sqsEndpoint } : {}),
  ...(endpoints.mockAiUrl ? { mockAiUrl: endpoints.mockAiUrl } : { mockAi: { latencyMs: number('MOCK_AI_LATENCY_MS'), failureRate: number('MOCK_AI_FAILURE_RATE') } }),
  ...(endpoints.awsEndpoint ? { awsEndpoint: endpoints.awsEndpoint } : { useMoto: false }),
  ...(endpoints.realtimeHttpEndpoint ? { realtimePort: false as const } : {}),
});
// Imported after the runtime has completed the environment (queue URLs, DATABASE_URL), as its handlers are.
const { createJob } = await import('../../lib/jobs/create-job.ts');
let profiling: Awaited<ReturnType<typeof startThreadProfiles>> | undefined;

async function handle(req: HostRequest): Promise<unknown> {
  switch (req.cmd) {
    case 'tokens':
      return Promise.all(Array.from({ length: req.users.users }, (_, u) => signLocalToken(runtime.jwtKey, { sub: benchUserId(req.users.group, u), ...runtime.audience, expiresIn: '6h' })));
    case 'inproc': {
      const ids: string[] = [];
      const load = await offerLoad(req.plan, async (i) => {
        const userId = benchUserId(req.users.group, i % req.users.users);
        const { job } = await createJob({ userId, jobType: workload.jobType, triggerType: 'user', targetType: 'user', targetId: userId, input: workload.input(req.runId, i) });
        ids[i] = job.id;
      });
      return { load, ids };
    }
    case 'profile-start':
      profiling = await startThreadProfiles();
      return null;
    case 'profile-stop': {
      const files = await profiling!.stop(req.file);
      profiling = undefined;
      return files.join(' ');
    }
    case 'stop':
      await runtime.stop();
      return null;
  }
}

process.on('message', (req: HostRequest) => {
  handle(req).then(
    (result) => process.send!({ id: req.id, ok: true, result }, () => {
      if (req.cmd === 'stop') process.exit(0);
    }),
    (err: unknown) => process.send!({ id: req.id, ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }),
  );
});
// The parent gone (finished or crashed): stop rather than run on alone.
process.once('disconnect', () => {
  void runtime.stop().finally(() => process.exit(1));
});
process.send!({ id: 0, ok: true, result: { url: runtime.url } });
