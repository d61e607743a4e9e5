/** A small client of the engine's HTTP API for the CLI: bearer token, JSON in and out, typed errors. */

export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The response's `Retry-After` in seconds, when it had one. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

export interface ApiClientOptions {
  baseUrl: string;
  token?: string;
}

export class ApiClient {
  constructor(private readonly options: ApiClientOptions) {}

  /** What the job watcher (lib/client/watch-job.ts) needs to reach the same API with the same token. */
  access(): { apiUrl: string; getToken(): string } {
    return { apiUrl: this.options.baseUrl, getToken: () => this.options.token ?? '' };
  }

  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const url = new URL(path, this.options.baseUrl.endsWith('/') ? this.options.baseUrl : `${this.options.baseUrl}/`);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new ApiRequestError(0, 'UNREACHABLE', `cannot reach ${url.origin}: ${(err as Error).message}`);
    }
    const text = await response.text();
    const parsed = text ? safeJson(text) : undefined;
    if (!response.ok) {
      const error = (parsed as { error?: { code?: string; message?: string }; message?: string } | undefined) ?? {};
      const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
      throw new ApiRequestError(
        response.status, error.error?.code ?? `HTTP_${response.status}`, error.error?.message ?? error.message ?? response.statusText,
        Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
      );
    }
    return parsed as T;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 200) };
  }
}
