// Types for scripts/codeServer.mjs, so the TypeScript test helpers can import it.
import type { ChildProcess } from 'node:child_process';

export const CODE_SERVER_VERSION: string;
export const ROOT: string;
export const CACHE: string;
export const CODE_SERVER_BIN: string;

export function ensureCodeServer(log?: (line: string) => void): string;

export interface StartCodeServerOptions {
  folder?: string;
  extensionsDir: string;
  userDataDir: string;
  port?: number;
  /** Keep workspace trust on (the default passes --disable-workspace-trust). */
  trust?: boolean;
  extraArgs?: string[];
  /** Extra environment for code-server and so for its extension host. */
  env?: Record<string, string | undefined>;
  onLine?: (line: string) => void;
}

export interface RunningCodeServer {
  /** http://127.0.0.1:<port>, without a trailing slash. */
  url: string;
  child: ChildProcess;
  /** Every line code-server logged so far (stdout and stderr). */
  lines: string[];
  stop(): Promise<void>;
}

export function startCodeServer(options: StartCodeServerOptions): Promise<RunningCodeServer>;
export function stopProcessGroup(child: ChildProcess): Promise<void>;
