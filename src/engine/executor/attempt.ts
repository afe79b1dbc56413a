import type { AgentActivity, AttemptAgent } from '../domain/agents/agentActivity';
import type { UsageLimit } from '../domain/agents/usageLimit';
import type { ProcessIdentity } from '../domain/process';

/**
 * Who ended an attempt before its worker exited by itself: that one records the outcome, not the exit. `decided
 * elsewhere`: the store already holds the attempt's end — ingested by hand, cancelled, ended for a person's follow-up
 * message (AttemptSupervisor.endDecidedElsewhere).
 */
export type AttemptEnding = 'stopped' | 'timeout' | 'stale' | 'budget' | 'parked' | 'decided elsewhere';

/** The timers an attempt's parts run while its worker lives; each part sets and cancels its own. */
export type AttemptTimer = 'timeout' | 'poll' | 'stream' | 'relay';

/** An agent preset's event stream, followed live (executor/agentStreamFollower.ts). */
export interface AttemptStream {
  readonly agent: AttemptAgent;
  /** The worker exited: the rest of the stream is read and the final usage recorded. */
  finish(): Promise<AgentActivity>;
  /** The last usage-limit signal its CLI gave (domain/agents/usageLimit.ts), if any. */
  usageLimit(): UsageLimit | undefined;
}

/** What identifies an attempt for the whole of its life: fixed at its claim (or adoption). */
export interface AttemptIdentity {
  delegationId: string;
  taskId: string;
  runtimeId: string;
  artifactPath: string;
  logPath: string;
  /** A person's hand-off (the manual worker): no process, no slot, a long lease. */
  manual: boolean;
  /** Lease length. */
  leaseMs: number;
  /** On a shared store: the key that signs the deadlines its lease watchdog takes (effects/processes/leaseWatchdog). */
  watchdogKey?: string;
}

/**
 * One attempt a coordinator drives: a worker process (or a person, for the manual worker). Its
 * identity is fixed; what changes is its lease (renewed by the WorkerLeaseKeeper), its process
 * once recorded, how it ends, and the timers of the parts that follow it — all cancelled
 * together when the supervisor lets it go.
 */
export class Attempt implements AttemptIdentity {
  readonly delegationId: string;
  readonly taskId: string;
  readonly runtimeId: string;
  readonly artifactPath: string;
  readonly logPath: string;
  readonly manual: boolean;
  readonly leaseMs: number;
  readonly watchdogKey?: string;
  /** Until when (monotonic) the last renewal holds the lease: a wall-clock jump does not end it early. */
  leaseUntilMono: number;
  identity?: ProcessIdentity;
  /** Set once someone (stop, timeout, lost lease, budget) ends it: its exit is then not a result. */
  ending?: AttemptEnding;
  /** Its worker exited and the supervisor is taking its result (ingest, verify, integrate): not someone else's call. */
  settling = false;
  /** When (monotonic) this coordinator saw its worker exit. */
  exitedAtMono?: number;
  /** A plain command (`"result": "exit-code"`): Baton writes its result from its exit code and its changes. */
  plainCommand?: { command: string; cwd: string; agent: string };
  /** An agent preset's attempt: its event stream, followed live (docs/workers.md, "Live activity"). */
  stream?: AttemptStream;
  private readonly timers = new Map<AttemptTimer, () => void>();

  constructor(identity: AttemptIdentity, leaseUntilMono: number) {
    this.delegationId = identity.delegationId;
    this.taskId = identity.taskId;
    this.runtimeId = identity.runtimeId;
    this.artifactPath = identity.artifactPath;
    this.logPath = identity.logPath;
    this.manual = identity.manual;
    this.leaseMs = identity.leaseMs;
    if (identity.watchdogKey) this.watchdogKey = identity.watchdogKey;
    this.leaseUntilMono = leaseUntilMono;
  }

  /**
   * Its worker ended while its lease held (as this coordinator saw it, on the monotonic clock): its work is done, and
   * a lease that ran out since — the store out of reach while its result waited to be recorded — does not undo it.
   */
  endedWithinLease(): boolean {
    return this.exitedAtMono !== undefined && this.exitedAtMono < this.leaseUntilMono;
  }

  /** A part's timer (its cancel function), replacing the one it set before. */
  setTimer(kind: AttemptTimer, cancel: () => void): void {
    this.timers.set(kind, cancel);
  }

  cancelTimer(kind: AttemptTimer): void {
    this.timers.get(kind)?.();
    this.timers.delete(kind);
  }

  cancelTimers(): void {
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }
}
