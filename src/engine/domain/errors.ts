import type { Issue } from './issue';

/**
 * What kind of failure an error is. Adapters map kinds to their own surface; the CLI
 * maps them to the exit codes of DESIGN §6 (see docs/cli.md).
 */
export type ErrorKind =
  | 'io' // unexpected I/O: 1
  | 'invalid-input' // invalid input or config: 2
  | 'conflict' // ownership or lease conflict: 3
  | 'mismatch' // evidence / plan / approval mismatch: 4
  | 'worker-failure' // worker or verification failure: 5
  | 'integration-conflict' // 6
  | 'not-qualified' // runtime not qualified (untrusted, git missing): 7
  | 'awaiting-decision'; // paused awaiting a human decision: 8

/** The one error type the engine throws on purpose. Branch on `kind` and `code`, never on the message. */
export class BatonError extends Error {
  override readonly name = 'BatonError';

  constructor(
    readonly kind: ErrorKind,
    /** Stable dotted code, e.g. `store.schema-too-new`, `claim.already-claimed`. */
    readonly code: string,
    message: string,
    readonly issues: readonly Issue[] = [],
  ) {
    super(message);
  }

  static is(value: unknown, code?: string): value is BatonError {
    return value instanceof BatonError && (code === undefined || value.code === code);
  }
}
