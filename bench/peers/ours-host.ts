/**
 * Our local runtime (lib/dev/local-runtime/runtime.ts) in a process of its own, driven by bench/peers.ts over
 * IPC, as the API and consumer Lambdas run apart from their callers in production. It also hosts the
 * in-process creation clients (createJob called directly, no HTTP or JWT) and, on request, a CPU profile of
 * itself (node:inspector) over exactly the window the parent asks for.
 *
 * argv: <databaseUrl> <json endpoints {sqsEndpoint, mockAiUrl}>. Messages: see {@link HostRequest}.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { signLocalToken } from '../../lib/api/local-jwt.ts';
import { startLocalRuntime } from '../../lib/dev/local-runtime/runtime.ts';
import { offerLoad, type LoadPlan } from './load.ts';
import { benchInput, benchUserId, BENCH_JOB_TYPE } from './ours-workload.ts';

export type HostRequest =
  | { id: number; cmd: 'tokens'; users: number }
  | { id: number; cmd: 'inproc'; plan: LoadPlan; runId: string; users: number }
  | { id: number; cmd: 'profile-start' }
  | { id: number; cmd: 'profile-stop'; file: string }
  | { id: number; cmd: 'stop' };

const [databaseUrl, endpointsJson] = process.argv.slice(2) as [string, string];
const runtime = await startLocalRuntime({
  databaseUrl, port: 0, useMoto: false, ...(JSON.parse(endpointsJson) as { sqsEndpoint: string; mockAiUrl: string }), log: () => undefined,
});
// Imported after the runtime has completed the environment (queue URLs, DATABASE_URL), as its handlers are.
const { createJob } = await import('../../lib/jobs/create-job.ts');
const session = new Session();

async function handle(req: HostRequest): Promise<unknown> {
  switch (req.cmd) {
    case 'tokens':
      return Promise.all(Array.from({ length: req.users }, (_, u) => signLocalToken(runtime.jwtKey, { sub: benchUserId(u), ...runtime.audience, expiresIn: '6h' })));
    case 'inproc': {
      const ids: string[] = [];
      const load = await offerLoad(req.plan, async (i) => {
        const userId = benchUserId(i % req.users);
        const { job } = await createJob({ userId, jobType: BENCH_JOB_TYPE, triggerType: 'user', targetType: 'user', targetId: userId, input: benchInput(req.runId, i) });
        ids[i] = job.id;
      });
      return { load, ids };
    }
    case 'profile-start':
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      return null;
    case 'profile-stop': {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(req.file, JSON.stringify(profile));
      session.disconnect();
      return req.file;
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
process.send!({ id: 0, ok: true, result: { url: runtime.url } });
