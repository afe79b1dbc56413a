import type { EngineEvent } from '../engine/index';

/**
 * The engine's event payloads the extension reads, one function per event type. Engine events
 * are `{ type: string; data: Record<string, unknown> }` today; these are the only places that
 * look inside `data`, so that typed events (an EventMap) replace them without a hunt. Each
 * returns undefined for another type or a payload that lacks what it needs.
 */

export interface HeartbeatPayload {
  runtimeId: string;
  delegationId?: string;
  heartbeatCount: number;
  leaseExpiresAt: number;
  progress?: string;
}

/** `runtime:heartbeat` (announced from the runtimes' state; not in the event log). */
export function heartbeatOf(e: EngineEvent): HeartbeatPayload | undefined {
  if (e.type !== 'runtime:heartbeat') return undefined;
  const d = e.data as Partial<HeartbeatPayload>;
  if (typeof d.runtimeId !== 'string' || typeof d.heartbeatCount !== 'number' || typeof d.leaseExpiresAt !== 'number')
    return undefined;
  return {
    runtimeId: d.runtimeId,
    heartbeatCount: d.heartbeatCount,
    leaseExpiresAt: d.leaseExpiresAt,
    ...(typeof d.delegationId === 'string' ? { delegationId: d.delegationId } : {}),
    ...(typeof d.progress === 'string' ? { progress: d.progress } : {}),
  };
}

export interface GateOpenedPayload {
  gateId: string;
  kind?: string;
  reason?: string;
}

/** `gate:opened`. */
export function gateOpenedOf(e: EngineEvent): GateOpenedPayload | undefined {
  if (e.type !== 'gate:opened') return undefined;
  const d = e.data as Partial<Record<keyof GateOpenedPayload, unknown>>;
  if (typeof d.gateId !== 'string') return undefined;
  return {
    gateId: d.gateId,
    ...(typeof d.kind === 'string' ? { kind: d.kind } : {}),
    ...(typeof d.reason === 'string' ? { reason: d.reason } : {}),
  };
}
