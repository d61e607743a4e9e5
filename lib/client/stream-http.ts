/**
 * The HTTP half of a job watcher (Node 24 and browsers: `fetch` only): a page of a job's stream log
 * (`GET /api/ai/jobs/{jobId}/stream?after=&wait=`, or the admin route) and the stage's realtime configuration
 * (`GET /api/ai/realtime`). Failures are {@link WatchJobError}s with the API's code and whether asking again can
 * help.
 */
import type { StreamPage } from '../stream/protocol.ts';
import type { RealtimeConfig } from '../realtime/channel.ts';

/** How the watcher reaches the HTTP API. */
export interface ApiAccess {
  /** The API's base URL, e.g. `http://127.0.0.1:3000` or the stage's `https://<id>.execute-api.<region>.amazonaws.com`. */
  apiUrl: string;
  /** The caller's JWT (asked before every request, so a refreshed token is used). */
  getToken(): string | Promise<string>;
  /** Read through the admin routes (`/admin-api/…`): any user's job, for the admin group. */
  admin?: boolean;
  fetch?: typeof fetch;
}

/** A request the API refused or that did not get through. */
export class WatchJobError extends Error {
  override readonly name = 'WatchJobError';
  /** True when asking again may succeed (no answer, 429, 5xx). */
  readonly retryable: boolean;

  constructor(
    /** The HTTP status (0: no answer). */
    readonly status: number,
    /** The API's error code (`JOB_NOT_FOUND`, …), `HTTP_<status>`, or `UNREACHABLE`. */
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.retryable = status === 0 || status === 429 || status >= 500;
  }
}

/** `GET …/stream?after=&wait=`: the entries after `after`, held up to `wait` seconds when there are none yet. */
export async function fetchStreamPage(access: ApiAccess, jobId: string, after: number, wait: number, signal?: AbortSignal): Promise<StreamPage> {
  const base = access.admin ? 'admin-api' : 'api';
  return getJson<StreamPage>(access, `${base}/ai/jobs/${encodeURIComponent(jobId)}/stream?after=${after}&wait=${wait}`, signal);
}

/** `GET /api/ai/realtime`: where to subscribe, and the caller's owner segment. */
export async function fetchRealtimeConfig(access: ApiAccess, signal?: AbortSignal): Promise<RealtimeConfig> {
  return getJson<RealtimeConfig>(access, 'api/ai/realtime', signal);
}

async function getJson<T>(access: ApiAccess, path: string, signal?: AbortSignal): Promise<T> {
  const url = new URL(path, access.apiUrl.endsWith('/') ? access.apiUrl : `${access.apiUrl}/`);
  let res: Response;
  try {
    const token = await access.getToken();
    res = await (access.fetch ?? globalThis.fetch)(url, { headers: { accept: 'application/json', authorization: `Bearer ${token}` }, ...(signal ? { signal } : {}) });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new WatchJobError(0, 'UNREACHABLE', `cannot reach ${url.origin}`, { cause: err });
  }
  const body = await res.json().catch(() => undefined) as { error?: { code?: string; message?: string }; message?: string } | undefined;
  if (!res.ok) throw new WatchJobError(res.status, body?.error?.code ?? `HTTP_${res.status}`, body?.error?.message ?? body?.message ?? res.statusText);
  return body as T;
}
