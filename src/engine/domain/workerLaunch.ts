import { BUILTIN_WORKERS, type BatonConfig, type WorkerDefinition } from './config';
import { BatonError } from './errors';

/** What to start for one attempt: argv (never a shell), stdin, environment. */
/** Who holds a manual worker's attempt: a person, through its `manual_handoff` gate (no process; nobody waits). */
export const MANUAL_HOLDER = 'a person (manual)';

export interface WorkerLaunch {
  workerId: string;
  argv: string[];
  /** Written to the worker's stdin, then stdin is closed. */
  stdin?: string;
  env: Record<string, string>;
}

export interface LaunchValues {
  prompt: string;
  promptFile: string;
  artifactPath: string;
  taskId: string;
  workspace: string;
}

export function resolveWorker(config: BatonConfig, workerId: string): WorkerDefinition {
  const worker = config.workers[workerId] ?? BUILTIN_WORKERS[workerId];
  if (!worker) {
    const known = [...new Set([...Object.keys(config.workers), ...Object.keys(BUILTIN_WORKERS)])];
    throw new BatonError(
      'worker.unknown',
      `There is no worker "${workerId}"; known workers: ${known.join(', ')}. Define it under "workers" in .baton/config.json.`,
    );
  }
  return worker;
}

function substitute(arg: string, values: LaunchValues): string {
  return arg.replace(
    /\{(prompt|promptFile|artifactPath|taskId|workspace)\}/g,
    (_m, key: keyof LaunchValues) => values[key],
  );
}

const usesPrompt = (args: readonly string[]): boolean =>
  args.some((a) => a.includes('{prompt}') || a.includes('{promptFile}'));

/**
 * Turns a worker definition into a launch. Placeholders are replaced inside each argv
 * element, so a value with spaces or shell characters stays one argument.
 */
export function workerLaunch(workerId: string, worker: WorkerDefinition, values: LaunchValues): WorkerLaunch {
  switch (worker.type) {
    case 'process': {
      const onStdin = worker.promptOnStdin ?? !usesPrompt(worker.args);
      return {
        workerId,
        argv: [worker.command, ...worker.args.map((a) => substitute(a, values))],
        ...(onStdin ? { stdin: values.prompt } : {}),
        env: worker.env,
      };
    }
    case 'claude-code':
      // Print mode: the prompt arrives on stdin, the answer (with its result block) leaves on stdout.
      return {
        workerId,
        argv: [
          worker.executable,
          '-p',
          '--output-format',
          'text',
          ...(worker.model ? ['--model', worker.model] : []),
          ...worker.args.map((a) => substitute(a, values)),
        ],
        stdin: values.prompt,
        env: worker.env,
      };
    case 'manual':
      throw new Error('a manual worker is not launched');
  }
}
