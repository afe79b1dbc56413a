import { createHash } from 'node:crypto';
import { BUILTIN_WORKERS, workerSchema, type BatonConfig, type WorkerDefinition } from './config';

/**
 * The worker definitions a run runs with (docs/architecture.md, "Trust model for .baton/ and
 * the config"). `.baton/config.json` is in the workspace, where every worker writes, so the
 * definitions are frozen into the run's settings when it starts; every spawn uses them, and
 * they change only when a person approves a `config_changed` gate.
 */
export interface FrozenWorkers {
  /** `sha256:<hex>` of the canonical JSON of `{ defaultWorker, workers }`. */
  digest: string;
  defaultWorker: string;
  /** The config's definitions by id. A built-in (claude-code, manual) the config does not replace is not listed. */
  workers: Record<string, WorkerDefinition>;
  /**
   * The digest of the whole config as the run last saw it (when it froze these, or at the last `config:changed`
   * event): an edit of the file is told once, against it.
   */
  configSeen: string;
}

/** What a run's remaining tasks run with: the workers they name, and whether some take the default one. */
export interface WorkerUse {
  ids: string[];
  usesDefault: boolean;
}

/**
 * One difference between a run's frozen definitions and the config's. It never carries an
 * environment value (an API key lives there): env keys only.
 */
export interface WorkerChange {
  /** The worker's id; `defaultWorker` for a change of the default worker. */
  workerId: string;
  kind: 'added' | 'changed' | 'removed' | 'default';
  /** The command line before (a worker id for `default`). */
  from?: string;
  /** The command line after (a worker id for `default`). */
  to?: string;
  envAdded: string[];
  envRemoved: string[];
  /** Keys whose value changed (the values are not shown). */
  envChanged: string[];
  /** Other settings of the definition that changed, as `name: old → new`. */
  fields: string[];
}

/** JSON with object keys sorted at every level: equal values give equal text, whatever the key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .map((key) => [key, sortKeys(object[key])]),
  );
}

export function sha256Digest(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** The digest of a whole config (its parsed settings: whitespace and comments do not count). */
export function configDigest(config: BatonConfig): string {
  return sha256Digest(canonicalJson(config));
}

export function workersDigest(defaultWorker: string, workers: Readonly<Record<string, WorkerDefinition>>): string {
  return sha256Digest(canonicalJson({ defaultWorker, workers: normalizedWorkers(workers) }));
}

/** The worker definitions of a config, frozen (a new run's, a person's adoption at a config_changed gate). */
export function freezeWorkers(config: BatonConfig): FrozenWorkers {
  const workers = normalizedWorkers(config.workers);
  return {
    digest: workersDigest(config.defaultWorker, workers),
    defaultWorker: config.defaultWorker,
    workers,
    configSeen: configDigest(config),
  };
}

/**
 * A definition as this Baton reads it: a stored one is parsed again so that a field a later
 * Baton added with a default does not count as a change. One that no longer parses is kept as
 * it was (it then differs from anything the config holds, and a person decides).
 */
function normalizedWorkers(workers: Readonly<Record<string, unknown>>): Record<string, WorkerDefinition> {
  const out: Record<string, WorkerDefinition> = {};
  for (const id of Object.keys(workers).sort()) {
    const parsed = workerSchema.safeParse(workers[id]);
    out[id] = parsed.success ? parsed.data : (workers[id] as WorkerDefinition);
  }
  return out;
}

/** The definition a worker id has in a frozen set: its own, else Baton's built-in; undefined when neither. */
export function frozenDefinition(frozen: FrozenWorkers, workerId: string): WorkerDefinition | undefined {
  if (Object.hasOwn(frozen.workers, workerId))
    return normalizedWorkers({ [workerId]: frozen.workers[workerId] })[workerId];
  return Object.hasOwn(BUILTIN_WORKERS, workerId) ? BUILTIN_WORKERS[workerId] : undefined;
}

/** The workers the given (unfinished) tasks use: each task's own, the override for all, or the default. */
export function workersInUse(tasks: ReadonlyArray<{ worker?: string | null }>, override?: string): WorkerUse {
  if (override) return { ids: tasks.length > 0 ? [override] : [], usesDefault: false };
  const ids = new Set<string>();
  let usesDefault = false;
  for (const task of tasks) {
    if (task.worker) ids.add(task.worker);
    else usesDefault = true;
  }
  return { ids: [...ids].sort(), usesDefault };
}

/**
 * How the config's definitions differ from a run's frozen ones — for the workers `use` names
 * (and the default worker when tasks rely on it), or for every worker when `use` is absent.
 */
export function diffWorkers(frozen: FrozenWorkers, current: FrozenWorkers, use?: WorkerUse): WorkerChange[] {
  const changes: WorkerChange[] = [];
  const defaultMatters = use ? use.usesDefault : true;
  if (defaultMatters && frozen.defaultWorker !== current.defaultWorker) {
    changes.push({
      workerId: 'defaultWorker',
      kind: 'default',
      from: frozen.defaultWorker,
      to: current.defaultWorker,
      envAdded: [],
      envRemoved: [],
      envChanged: [],
      fields: [],
    });
  }
  const ids = use
    ? [...use.ids, ...(use.usesDefault ? [frozen.defaultWorker, current.defaultWorker] : [])]
    : [...Object.keys(frozen.workers), ...Object.keys(current.workers)];
  for (const id of [...new Set(ids)].sort()) {
    const before = frozenDefinition(frozen, id);
    const after = frozenDefinition(current, id);
    if (!before && !after) continue;
    if (!before) {
      changes.push({
        workerId: id,
        kind: 'added',
        to: commandLine(after!),
        envAdded: envKeys(after!),
        envRemoved: [],
        envChanged: [],
        fields: [],
      });
    } else if (!after) {
      changes.push({
        workerId: id,
        kind: 'removed',
        from: commandLine(before),
        envAdded: [],
        envRemoved: [],
        envChanged: [],
        fields: [],
      });
    } else if (canonicalJson(before) !== canonicalJson(after)) {
      changes.push(describeDifference(id, before, after));
    }
  }
  return changes;
}

/** A removed definition asks nothing: the run keeps the one it froze. Every other change needs a person's approval. */
export function needsApproval(change: WorkerChange): boolean {
  return change.kind !== 'removed';
}

/** One line for people: what changed, command lines quoted, env keys without their values. */
export function describeWorkerChange(change: WorkerChange): string {
  const env = [
    change.envAdded.length ? `env keys added: ${change.envAdded.join(', ')}` : '',
    change.envRemoved.length ? `env keys removed: ${change.envRemoved.join(', ')}` : '',
    change.envChanged.length ? `env values changed: ${change.envChanged.join(', ')}` : '',
  ].filter(Boolean);
  const extra = [...change.fields, ...env];
  const tail = extra.length ? `; ${extra.join('; ')}` : '';
  switch (change.kind) {
    case 'default':
      return `default worker: "${change.from}" → "${change.to}"`;
    case 'added':
      return `new worker "${change.workerId}": \`${change.to}\`${tail}`;
    case 'removed':
      return `worker "${change.workerId}" is no longer in the config (the run keeps \`${change.from}\`)`;
    case 'changed':
      return `worker "${change.workerId}": ${change.from === change.to ? `\`${change.from}\`` : `\`${change.from}\` → \`${change.to}\``}${tail}`;
  }
}

/** The command a definition starts, as a person would type it (each argument quoted when it needs it), shortened. */
export function commandLine(worker: WorkerDefinition): string {
  let line: string;
  switch (worker.type) {
    case 'manual':
      line = 'a person (manual)';
      break;
    case 'process':
      line = [worker.command, ...worker.args].map(quoteArgument).join(' ');
      break;
    default:
      line = [
        `${quoteArgument(worker.executable)} (${worker.type} preset${worker.model ? `, model ${worker.model}` : ''})`,
        ...worker.args.map(quoteArgument),
      ].join(' ');
  }
  // eslint-disable-next-line no-control-regex -- a worker wrote this file: no control characters reach a terminal
  const clean = line.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
  return clean.length > 200 ? `${clean.slice(0, 199)}…` : clean;
}

function quoteArgument(argument: string): string {
  if (/^[A-Za-z0-9_@%+=:,./{}-]+$/.test(argument)) return argument;
  return `'${argument.replace(/'/g, `'\\''`)}'`;
}

function envKeys(worker: WorkerDefinition): string[] {
  return worker.type === 'manual' ? [] : Object.keys(worker.env).sort();
}

const SHOWN_ELSEWHERE = new Set(['type', 'command', 'args', 'executable', 'model', 'env']);

function describeDifference(id: string, before: WorkerDefinition, after: WorkerDefinition): WorkerChange {
  const envBefore: Record<string, string> = before.type === 'manual' ? {} : before.env;
  const envAfter: Record<string, string> = after.type === 'manual' ? {} : after.env;
  const fields: string[] = [];
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  for (const key of [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()) {
    if (SHOWN_ELSEWHERE.has(key) || canonicalJson(b[key]) === canonicalJson(a[key])) continue;
    fields.push(`${key}: ${shown(b[key])} → ${shown(a[key])}`);
  }
  return {
    workerId: id,
    kind: 'changed',
    from: commandLine(before),
    to: commandLine(after),
    envAdded: Object.keys(envAfter)
      .filter((k) => !Object.hasOwn(envBefore, k))
      .sort(),
    envRemoved: Object.keys(envBefore)
      .filter((k) => !Object.hasOwn(envAfter, k))
      .sort(),
    envChanged: Object.keys(envAfter)
      .filter((k) => Object.hasOwn(envBefore, k) && envBefore[k] !== envAfter[k])
      .sort(),
    fields,
  };
}

function shown(value: unknown): string {
  if (value === undefined) return '(unset)';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
