/**
 * The AI gateway: one `generate` call per job attempt. It walks the tier's routes in order and falls back to
 * the next route on a failure that is `fallbackEligible` (rate limit, provider timeout, provider unavailable)
 * before the engine spends another attempt. Every provider call, whatever its outcome, is reported through
 * `onCall` so the engine can write the usage ledger (ADR-003 §5.7). Prompts and keys are never logged.
 *
 * Every call streams its answer: when the caller passes `openSink`, each route's call gets a sink of its own and
 * its text goes there as it arrives. A call that failed after its sink showed something to a watcher is not
 * fallen back from: the failure ends the attempt instead (retryable as its class says), so the engine's next
 * attempt starts a new stream segment that replaces what was shown, rather than a second route's answer being
 * appended to the first one's half (the stream protocol has no "discard within an attempt", see
 * lib/stream/protocol.ts). A failure before anything was shown — a 429 or a first-token timeout before the
 * answer's first previewable field, say — falls back as before.
 */
import { asJobFailure, CredentialInvalidError, ProviderRateLimitedError, type JobFailure } from '../jobs/failures.ts';
import type { AdmissionJob, CapacityGate, RouteRefusal } from '../capacity/gate.ts';
import { admitRoute } from '../capacity/gateway-admission.ts';
import { waitErrorOf } from '../capacity/capacity-wait.ts';
import type { ModelRouter } from './model-router.ts';
import {
  ABORTED_CALL_CODE,
  type AnswerSink,
  type ChatRequest,
  type CredentialSet,
  type GenerateResult,
  type ModelRoute,
  type ProviderCallRecord,
  type ProviderReply,
  type TokenUsage,
} from './types.ts';

/** Per-call options of {@link generate}. */
export interface GenerateOptions {
  /** The definition's model tier. */
  tier: string;
  credentials: CredentialSet;
  /** The engine's attempt signal (job timeout or cancellation). */
  signal: AbortSignal;
  /**
   * Called after every provider call (success, failure or abort) and awaited; if it rejects, that rejection
   * replaces the call's outcome (the ledger write is part of the attempt).
   */
  onCall?: (record: ProviderCallRecord) => void | Promise<void>;
  /** Deadline from each call's request to its first token (the job type's `execution.firstTokenTimeoutMs`). */
  firstTokenTimeoutMs?: number;
  /** Opens the sink of one route's call (see the module comment); absent: the text is only returned at the end. */
  openSink?: (route: ModelRoute) => AnswerSink;
  /** The job the call is for: with a capacity gate, each route's call is admitted against shared limits and caps. */
  admission?: AdmissionJob;
}

/** What the gateway needs. */
export interface GatewayDeps {
  router: ModelRouter;
  /** Shared provider limits and spending caps (lib/capacity/); absent: every call is made as asked. */
  capacity?: CapacityGate | null;
}

const NO_USAGE: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/**
 * Generates one completion for `request` on the first route of `opts.tier` that succeeds.
 *
 * - Routes without a key in `opts.credentials` are skipped; if none is left it throws CredentialInvalidError.
 * - A `fallbackEligible` failure moves to the next route, unless the failed call's sink had shown something;
 *   when every route failed, the last failure is thrown (a rate limit keeps its `retryAfterMs`).
 * - Any other failure (e.g. CredentialInvalidError) is thrown at once; so is an abort: when `opts.signal`
 *   aborts, the signal's `reason` is rethrown unchanged.
 * - With a capacity gate and `opts.admission`, a route the shared limits or a spending cap refuse is skipped
 *   without a call, and a 429 on a route that took shared capacity cools its model down for every consumer and
 *   counts as a refusal. When no call failed otherwise and every route was refused, a CapacityWaitError says how
 *   long to wait (lib/capacity/capacity-wait.ts): the engine parks the job without spending an attempt.
 * @throws JobFailure | UnknownModelTierError | the signal's reason
 */
export async function generate(request: ChatRequest, opts: GenerateOptions, deps: GatewayDeps): Promise<GenerateResult> {
  const routes = deps.router.routesFor(opts.tier, opts.credentials);
  if (routes.length === 0) {
    throw new CredentialInvalidError(`No route of tier "${opts.tier}" accepts a ${opts.credentials.mode} credential`);
  }
  let lastFailure: JobFailure | undefined;
  const refusals: RouteRefusal[] = [];
  for (const route of routes) {
    opts.signal.throwIfAborted();
    const admitted = await admitRoute(deps.capacity, opts.admission, route, request, opts);
    if (admitted.kind === 'refused') {
      refusals.push(admitted.refusal);
      continue;
    }
    const outcome = await callRoute(admitted.request, route, admitted.opts, deps);
    if ('result' in outcome) return outcome.result;
    if (outcome.failure instanceof ProviderRateLimitedError && admitted.hold?.sharedCapacity) {
      refusals.push(await admitted.hold.coolDown(outcome.failure.retryAfterMs));
      // Refused mid-answer after a watcher saw part of it: no second route appends to that half. The job waits
      // (no attempt spent) and its next lock starts a new stream segment.
      if (outcome.shown) throw waitErrorOf(refusals);
      continue;
    }
    lastFailure = outcome.failure;
    if (!lastFailure.fallbackEligible || outcome.shown) throw lastFailure;
  }
  throw lastFailure ?? waitErrorOf(refusals);
}

type RouteOutcome = { result: GenerateResult } | { failure: JobFailure; shown: boolean };

/** One provider call, reported through `onCall`. Rethrows aborts; returns failures for the caller to judge. */
async function callRoute(request: ChatRequest, route: ModelRoute, opts: GenerateOptions, deps: GatewayDeps): Promise<RouteOutcome> {
  const provider = deps.router.providerFor(route);
  const apiKey = opts.credentials.keyFor(route.provider) ?? '';
  const sink = opts.openSink?.(route);
  const started = performance.now();
  let reply: ProviderReply;
  try {
    reply = await provider.complete(
      { ...request, model: route.model },
      { apiKey, signal: opts.signal, firstTokenTimeoutMs: opts.firstTokenTimeoutMs, ...(sink ? { onDelta: (text) => sink.write(text) } : {}) },
    );
  } catch (err) {
    const latencyMs = Math.round(performance.now() - started);
    if (opts.signal.aborted) {
      await opts.onCall?.({ route, usage: NO_USAGE, latencyMs, errorCode: ABORTED_CALL_CODE, aborted: true });
      throw opts.signal.reason;
    }
    const failure = asJobFailure(err);
    await opts.onCall?.({ route, usage: NO_USAGE, latencyMs, errorCode: failure.code });
    return { failure, shown: sink?.shown ?? false };
  }
  const latencyMs = Math.round(performance.now() - started);
  await opts.onCall?.({ route, usage: reply.usage, latencyMs });
  return { result: { content: reply.content, usage: reply.usage, route, latencyMs } };
}
