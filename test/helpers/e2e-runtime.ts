/**
 * Boots the local runtime in-process on free ports against this worker's database, fauxqs and the mock
 * provider, and talks to it only over HTTP, as a client would.
 */
import { inject } from 'vitest';
import { signLocalToken } from '../../lib/api/local-jwt.ts';
import { startLocalRuntime, type LocalRuntime, type LocalRuntimeOptions } from '../../lib/dev/local-runtime/runtime.ts';
import { FAST_TIMING } from './engine-harness.ts';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface E2e {
  runtime: LocalRuntime;
  token(sub: string, opts?: { admin?: boolean; expiresIn?: number | string; issuer?: string; audience?: string }): Promise<string>;
  api<T = any>(method: string, path: string, opts?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<ApiResponse<T>>;
  /** Polls GET /api/ai/jobs/{id} until the job is terminal. */
  waitForTerminal(jobId: string, token: string, timeoutMs?: number): Promise<any>;
  stop(): Promise<void>;
}

export async function startE2e(overrides: Partial<LocalRuntimeOptions> = {}): Promise<E2e> {
  const runtime = await startLocalRuntime({
    databaseUrl: process.env.DATABASE_URL ?? '', port: 0, awsEndpoint: inject('awsEndpoint'), useMoto: false,
    timing: FAST_TIMING, dispatchIntervalMs: 200, reaperIntervalMs: 1_000, log: () => undefined, ...overrides,
  });
  const token: E2e['token'] = (sub, opts = {}) =>
    signLocalToken(runtime.jwtKey, {
      sub, admin: opts.admin ?? false, issuer: opts.issuer ?? runtime.audience.issuer, audience: opts.audience ?? runtime.audience.audience,
      ...(opts.expiresIn !== undefined ? { expiresIn: opts.expiresIn } : {}),
    });
  const api: E2e['api'] = async (method, path, opts = {}) => {
    const res = await fetch(`${runtime.url}${path}`, {
      method,
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.body !== undefined || opts.rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      },
      ...(opts.rawBody !== undefined ? { body: opts.rawBody } : opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
  return {
    runtime, token, api,
    waitForTerminal: async (jobId, bearer, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { body } = await api('GET', `/api/ai/jobs/${jobId}`, { token: bearer });
        if (['succeeded', 'failed', 'cancelled'].includes(body.lifecycleStatus)) return body;
        if (Date.now() > deadline) throw new Error(`job ${jobId} still ${body.lifecycleStatus}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: () => runtime.stop(),
  };
}
