import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_CONFIG, parseConfig, type BatonConfig } from '../domain/config';
import { BatonError } from '../domain/errors';
import { hasErrors, type Issue } from '../domain/issue';
import { parsePlan } from '../domain/plan/parsePlan';
import type { ParsedPlan } from '../domain/types';
import { configPathOf } from '../effects/workspaceLayout';
import { workspacePath } from './ingestArtifact';

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
  const path = configPathOf(workspace);
  if (!existsSync(path)) return { config: DEFAULT_CONFIG, issues: [] };
  return parseConfig(readFileSync(path, 'utf8'));
}
