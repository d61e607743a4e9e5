/**
 * The capacity hook of the AI gateway (lib/ai/gateway.ts), kept apart from it: before a route's call,
 * {@link admitRoute} asks the gate for a hold and returns the request to send (`max_tokens` set to what was
 * reserved) and the call options whose `onCall` attaches the hold's settlement to the call's record (running it
 * itself when nobody claimed it). Without a gate or a job (the gateway used on its own), everything passes.
 */
import type { ChatRequest, ModelRoute, ProviderCallRecord } from '../ai/types.ts';
import type { AdmissionJob, CapacityGate, HeldCall, RouteRefusal } from './gate.ts';

interface CallOptions {
  onCall?: (record: ProviderCallRecord) => void | Promise<void>;
}

export type RouteAdmission<O extends CallOptions> =
  | { kind: 'refused'; refusal: RouteRefusal }
  | { kind: 'admitted'; request: ChatRequest; opts: O; hold: HeldCall | undefined };

export async function admitRoute<O extends CallOptions>(
  gate: CapacityGate | null | undefined, job: AdmissionJob | undefined, route: ModelRoute, request: ChatRequest, opts: O,
): Promise<RouteAdmission<O>> {
  if (!gate || !job) return { kind: 'admitted', request, opts, hold: undefined };
  const admission = await gate.admit(route, request, job);
  if (admission.kind === 'refused') return admission;
  const { hold } = admission;
  const onCall = async (record: ProviderCallRecord) => {
    const settlement = hold.settlementFor(record);
    await opts.onCall?.({ ...record, settlement });
    await settlement.runUnclaimed();
  };
  return { kind: 'admitted', request: admission.request, opts: { ...opts, onCall }, hold };
}
