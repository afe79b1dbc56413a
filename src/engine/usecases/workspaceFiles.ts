import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_CONFIG, MAX_CONFIG_BYTES, parseConfig, type BatonConfig } from '../domain/config';
import { BatonError } from '../domain/errors';
import { hasErrors, issue, type Issue } from '../domain/issue';
import { parsePlan } from '../domain/plan/parsePlan';
import type { ParsedPlan } from '../domain/types';
import { workspacePath } from '../domain/workspacePath';
import { configPathOf } from '../effects/workspaceLayout';

export interface LoadedPlan {
  /** Workspace-relative (POSIX separators) when inside the workspace, else absolute. */
  path: string;
  text: string;
  parsed: ParsedPlan;
}

/** Reads and parses a plan file (relative paths are resolved against the workspace). */
export function readPlan(workspace: string, planPath: string): LoadedPlan {
  const absolute = resolve(workspace, planPath);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (err) {
    throw new BatonError(
      'plan.unreadable',
      `Cannot read the plan ${planPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  return { path: workspacePath(workspace, absolute), text, parsed: parsePlan(text) };
}

/** A plan with errors cannot start a run: refused with its issues. */
export function requireValidPlan(plan: LoadedPlan): LoadedPlan {
  if (!hasErrors(plan.parsed.issues)) return plan;
  const errors = plan.parsed.issues.filter((i) => i.severity === 'error');
  throw new BatonError(
    'plan.invalid',
    `${plan.path} has ${errors.length} error${errors.length === 1 ? '' : 's'}; run 'baton validate ${plan.path}'.`,
    plan.parsed.issues.map((i) => ({ ...i, file: plan.path })),
  );
}

/** The workspace's `.baton/config.json`, parsed with its issues; the defaults when there is none. */
export function loadConfig(workspace: string): { config: BatonConfig; issues: Issue[] } {
  const read = readConfigText(configPathOf(workspace));
  if (read.problem) {
    return {
      config: DEFAULT_CONFIG,
      issues: [
        issue('config.unreadable', '', `The config ${read.problem}.`, 'Make .baton/config.json a plain JSON file.'),
      ],
    };
  }
  if (read.text === undefined) return { config: DEFAULT_CONFIG, issues: [] };
  return parseConfig(read.text);
}

/**
 * The config file's text; none when there is no file; a problem when it cannot be read as a
 * config. A worker can write `.baton/`: a FIFO put there must not hang every command (opened
 * without blocking, then refused), nor a link to an endless device fill memory (size limit).
 */
export function readConfigText(path: string): { text?: string; problem?: string } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    return { problem: `cannot be read (${code ?? (err as Error).message})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { problem: 'is not a plain file' };
    // parseConfig refuses what is over the limit with its size; nothing much larger is read at all.
    if (stat.size > MAX_CONFIG_BYTES * 4) return { problem: `is ${stat.size} bytes; the limit is ${MAX_CONFIG_BYTES}` };
    return { text: readFileSync(fd, 'utf8') };
  } finally {
    closeSync(fd);
  }
}
