/**
 * CPU profiles of every thread of this process over a window: the main thread through its own inspector
 * session, each worker thread (the local runtime's consumer thread) through the main session's `NodeWorker`
 * domain, which relays inspector messages to a worker's own isolate. Read each with `npm run bench:profile-top`.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

interface WorkerMessage { id?: number; result?: unknown; error?: { message: string } }

/** One worker's inspector, reached by relayed messages. */
class WorkerInspector {
  #nextId = 1;
  readonly #pending = new Map<number, (m: WorkerMessage) => void>();
  constructor(private readonly session: Session, readonly sessionId: string, readonly title: string) {}

  receive(message: string): void {
    const m = JSON.parse(message) as WorkerMessage;
    if (m.id !== undefined) this.#pending.get(m.id)?.(m);
    if (m.id !== undefined) this.#pending.delete(m.id);
  }

  async post<T>(method: string): Promise<T> {
    const id = this.#nextId++;
    const answered = new Promise<WorkerMessage>((resolve) => this.#pending.set(id, resolve));
    await this.session.post('NodeWorker.sendMessageToWorker', { sessionId: this.sessionId, message: JSON.stringify({ id, method }) });
    const m = await answered;
    if (m.error) throw new Error(`${this.title}: ${method}: ${m.error.message}`);
    return m.result as T;
  }
}

/** Starts profiling this thread and every worker thread; `stop(file)` writes `file` (main) and `file` + `.worker<n>.cpuprofile`. */
export async function startThreadProfiles(): Promise<{ stop(file: string): Promise<string[]> }> {
  const session = new Session();
  session.connect();
  const workers = new Map<string, WorkerInspector>();
  session.on('NodeWorker.attachedToWorker', (m) => {
    const { sessionId, workerInfo } = m.params as { sessionId: string; workerInfo: { title: string } };
    workers.set(sessionId, new WorkerInspector(session, sessionId, workerInfo.title));
  });
  session.on('NodeWorker.receivedMessageFromWorker', (m) => {
    const { sessionId, message } = m.params as { sessionId: string; message: string };
    workers.get(sessionId)?.receive(message);
  });
  // Attaching to the running workers is announced before enable's answer.
  await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  const main = { post: <T>(method: string) => session.post(method as 'Profiler.enable') as Promise<T> };
  const all = [main, ...workers.values()];
  for (const s of all) await s.post('Profiler.enable');
  for (const s of all) await s.post('Profiler.start');
  return {
    async stop(file) {
      const written: string[] = [];
      const files = [file, ...[...workers.values()].map((_, i) => file.replace(/\.cpuprofile$/, '') + `.worker${i + 1}.cpuprofile`)];
      for (const [i, s] of all.entries()) {
        const { profile } = await s.post<{ profile: unknown }>('Profiler.stop');
        await writeFile(files[i]!, JSON.stringify(profile));
        written.push(files[i]!);
      }
      await session.post('NodeWorker.disable');
      session.disconnect();
      return written;
    },
  };
}
