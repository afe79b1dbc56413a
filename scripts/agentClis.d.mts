// Types for scripts/agentClis.mjs, so the TypeScript test helpers can import it.
export type AgentCliName = 'claude' | 'codex' | 'gemini' | 'opencode';

export interface AgentCliSpec {
  package: string;
  version: string;
  bin: string;
  allowScripts: Record<string, boolean>;
}

export const ROOT: string;
export const AGENTS_CACHE: string;
export const AGENT_CLIS: Record<AgentCliName, AgentCliSpec>;
export const AGENT_CLI_NAMES: AgentCliName[];
export const CLAUDE_BIN: string;
export const CODEX_BIN: string;
export const GEMINI_BIN: string;
export const OPENCODE_BIN: string;
export const QUIET_ENV: Record<AgentCliName, Record<string, string>>;

export function installDir(cli: AgentCliName): string;
export function agentCliPath(cli: AgentCliName): string;
export function ensureAgentCli(cli: AgentCliName, log?: (line: string) => void): string;
export function ensureAllAgentClis(log?: (line: string) => void): Record<AgentCliName, string>;
export function isolatedEnv(
  cli: AgentCliName,
  home: string,
  base?: Record<string, string | undefined>,
): Record<string, string | undefined>;
