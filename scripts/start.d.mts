// Types for scripts/start.mjs, so the end-to-end test of the first start can import it.
import type { RunningCodeServer } from './codeServer.mjs';

export interface StartedDemo {
  server: RunningCodeServer;
  /** The fresh copy of examples/demo the editor opened. */
  workspace: string;
  /** The workbench URL on that folder. */
  url: string;
}

export function startDemo(options?: {
  port?: number;
  home?: string;
  env?: Record<string, string | undefined>;
}): Promise<StartedDemo>;
