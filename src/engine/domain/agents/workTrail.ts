import { issue, type Issue, type Range } from '../issue';
import { agentStreamParser, describeToolCall, isBatonTool, type AgentKind } from './agentActivity';
import type { AgentEvent } from './agentEvents';

/**
 * What an agent's stream says about the work behind its result (docs/agents.md, "Claims against the stream"): the
 * last edit, the last test-like command, and the edits or test-like commands that failed and were not done again
 * with success. Folded from the parsed stream; judged when the agent hands in a PASS.
 *
 * Only edits and test-like commands count: a failed read, search or `ls` is how an agent explores, not a claim.
 */
export interface WorkTrail {
  /** Tool calls seen (Baton's own tools not counted): the order of the steps below. */
  steps: number;
  lastEdit?: TrailStep;
  lastTest?: TrailStep;
  /** Failed edits and test-like commands nothing later did again with success, oldest first. */
  unretried: readonly FailedStep[];
  /** Calls started and not finished yet, by call id (or by tool when the CLI gives none). */
  open: Readonly<Record<string, TrailStep & { kind: StepKind; key: string }>>;
}

export interface TrailStep {
  step: number;
  /** For a person: "Bash: npm test", "Edit src/a.ts". */
  label: string;
}

export interface FailedStep extends TrailStep {
  detail?: string;
  /** What doing it again with success means: the same edit target, or any test-like command. */
  key: string;
}

type StepKind = 'edit' | 'test' | 'other';

export const EMPTY_TRAIL: WorkTrail = { steps: 0, unretried: [], open: {} };

/** The CLIs' file-writing tools (Claude Code, Codex, Gemini CLI, opencode). */
const EDIT_TOOLS = new Set([
  'Write',
  'Edit',
  'MultiEdit',
  'NotebookEdit',
  'apply_patch',
  'write_file',
  'replace',
  'write',
  'edit',
  'patch',
  'multiedit',
]);
const SHELL_TOOLS = new Set(['Bash', 'bash', 'shell', 'run_shell_command', 'exec_command']);

/**
 * A command that checks the work: a test runner, a type check or a lint, by the usual entry points. A heuristic, and
 * said so in the warning: a project's own script under another name is not seen.
 */
const TEST_COMMAND =
  /(?:^|[\s;&|(])(?:(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|t|check|typecheck|lint)\b|npx\s+(?:jest|mocha|vitest|tsc|eslint|playwright\s+test)\b|(?:jest|mocha|vitest|pytest|tox|nox|rspec|phpunit|ctest|tsc|eslint)\b|python3?\s+-m\s+(?:pytest|unittest)\b|(?:go|cargo|deno|bun|dotnet|mvn|gradle|\.\/gradlew|swift)\s+(?:test|check|verify)\b|make\s+(?:test|check)\b)/;

export function isTestCommand(command: string): boolean {
  return TEST_COMMAND.test(command);
}

/** Which kind of step a call is; `artifact` tells edits of the result itself (or of Baton's files) apart. */
function kindOf(tool: string, target: string | undefined, isArtifact: (target: string) => boolean): StepKind {
  if (EDIT_TOOLS.has(tool)) return target && isArtifact(target) ? 'other' : 'edit';
  if (SHELL_TOOLS.has(tool) && target && isTestCommand(target)) return 'test';
  return 'other';
}

/**
 * Folds one stream event into the trail. `isArtifact`: whether an edit's target is the result artifact or a file under
 * `.baton/` (writing its result is the agent's last step, not an edit after its tests).
 */
export function foldWorkTrail(trail: WorkTrail, event: AgentEvent, isArtifact: (target: string) => boolean): WorkTrail {
  if (event.kind !== 'tool' || isBatonTool(event.tool)) return trail;
  const openKey = event.callId ?? `tool:${event.tool}`;
  if (event.phase === 'started') {
    const step = trail.steps + 1;
    const kind = kindOf(event.tool, event.target, isArtifact);
    const at = { step, label: describeToolCall(event.tool, event.target) };
    // Retried: an edit of the same target, or any test-like command (a narrower or a fuller run of the tests).
    const key = kind === 'test' ? 'test' : `${event.tool}\u0000${event.target ?? ''}`;
    return {
      ...trail,
      steps: step,
      ...(kind === 'edit' ? { lastEdit: at } : {}),
      ...(kind === 'test' ? { lastTest: at } : {}),
      open: { ...trail.open, [openKey]: { ...at, kind, key } },
    };
  }
  const started = trail.open[openKey];
  if (!started) return trail;
  const { [openKey]: _done, ...open } = trail.open;
  if (started.kind === 'other') return { ...trail, open };
  // Any outcome of this call settles an earlier failure of the same key: a success retried it, a failure replaces it.
  const others = trail.unretried.filter((f) => f.key !== started.key);
  const failed =
    event.ok === false
      ? [
          {
            step: started.step,
            label: started.label,
            key: started.key,
            ...(event.detail ? { detail: event.detail } : {}),
          },
        ]
      : [];
  return { ...trail, open, unretried: [...others, ...failed] };
}

/** Reads a stream (an attempt's log, whole or its end) into its trail. */
export function readWorkTrail(
  kind: AgentKind,
  lines: Iterable<string>,
  options: { cwd?: string; isArtifact: (target: string) => boolean },
): WorkTrail {
  const parser = agentStreamParser(kind, options.cwd ? { cwd: options.cwd } : {});
  let trail = EMPTY_TRAIL;
  for (const line of lines)
    for (const event of parser.feed(line)) trail = foldWorkTrail(trail, event, options.isArtifact);
  for (const event of parser.end()) trail = foldWorkTrail(trail, event, options.isArtifact);
  return trail;
}

/**
 * The warnings a PASS gets from its stream: an edit after the last test-like command (the tests did not see the final
 * code), and a failed edit or test-like command nothing did again with success. Warnings, not errors: the result is
 * taken; a person (and the agent, through baton_check_result) is told.
 */
export function claimIssues(trail: WorkTrail, statusRange?: Range): Issue[] {
  const issues: Issue[] = [];
  const { lastEdit, lastTest } = trail;
  if (lastEdit && lastTest && lastEdit.step > lastTest.step)
    issues.push(
      issue(
        'result.edit-after-tests',
        'status',
        `PASS, but the last edit (${lastEdit.label}) came after the last test-like command (${lastTest.label}): the tests did not see the final code.`,
        'Run the tests again after the last edit, then hand in the result.',
        statusRange,
        'warning',
      ),
    );
  for (const failed of trail.unretried)
    issues.push(
      issue(
        'result.failure-not-retried',
        'status',
        `PASS, but ${failed.label} failed${failed.detail ? ` (${oneLine(failed.detail)})` : ''} and nothing did it again with success.`,
        'Fix what failed and run it again, or say in the summary why the failure does not matter.',
        statusRange,
        'warning',
      ),
    );
  return issues;
}

function oneLine(text: string, max = 120): string {
  const line =
    text
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
