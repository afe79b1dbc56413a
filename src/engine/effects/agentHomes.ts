import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { GeminiUserHome } from '../domain/agents/presets';
import { BatonError } from '../domain/errors';

/**
 * The Gemini CLI home a worker with this environment would use — GEMINI_CLI_HOME, else HOME (an empty value counts as
 * unset, as a worker's `env` clears a variable that way) — with its settings and the other entries of its `.gemini/`.
 * A settings file that is not JSON (with comments, as Gemini CLI reads it) is refused with its path: Baton starts the
 * CLI with a copy of it that adds the attempt's server, and must not start it without the user's settings.
 */
export function readGeminiUserHome(env: Readonly<Record<string, string | undefined>>): GeminiUserHome {
  const folder = env.GEMINI_CLI_HOME || env.HOME || homedir();
  const dir = join(folder, '.gemini');
  const entries = existsSync(dir) ? readdirSync(dir) : [];
  const path = join(dir, 'settings.json');
  if (!entries.includes('settings.json')) return { folder, settings: {}, entries };
  let settings: unknown;
  try {
    settings = JSON.parse(withoutComments(readFileSync(path, 'utf8')));
  } catch (err) {
    throw new BatonError(
      'worker.settings-unreadable',
      `Gemini CLI's settings ${path} could not be read (${(err as Error).message}); Baton gives each attempt a copy with its MCP server added. Fix the file (gemini reads it too).`,
    );
  }
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings))
    throw new BatonError(
      'worker.settings-unreadable',
      `Gemini CLI's settings ${path} is not a JSON object; Baton gives each attempt a copy with its MCP server added. Fix the file (gemini reads it too).`,
    );
  return { folder, settings: settings as Record<string, unknown>, entries };
}

/** JSON with `//` and `/* *\/` comments, as Gemini CLI reads its settings: the comments go, strings stay whole. */
function withoutComments(text: string): string {
  return text.replace(
    /("(?:\\.|[^"\\])*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g,
    (match, string: string | undefined) => string ?? '',
  );
}
