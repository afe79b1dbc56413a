import { admissionRefusal, type AdmissionFacts, type AdmissionRefusal } from '../domain/admission';
import { BatonError } from '../domain/errors';
import { MANUAL_HOLDER } from '../domain/workerLaunch';
import type { StoreReader } from '../store/port';

/**
 * What the admission rule (domain/admission.ts) needs about one task, read in the caller's
 * transaction so that the answer holds when it claims: the task's backoff and files, the
 * attempts holding a slot in the whole run (driven or claimed; a person's hand-off holds
 * none), and the other tasks in flight with the files they declare.
 */
export async function readAdmissionFacts(
  r: Pick<StoreReader, 'get' | 'all'>,
  input: { runId: string; taskId: string; now: number; maxConcurrency: number },
): Promise<AdmissionFacts> {
  const { runId, taskId } = input;
  const task = await r.get<{ files_json: string; not_before: number | null }>(
    `SELECT files_json, not_before FROM tasks WHERE run_id = ? AND id = ?`,
    [runId, taskId],
  );
  if (!task) throw new BatonError('task.unknown', `Task ${taskId} is not in run ${runId}.`);
  const files = JSON.parse(task.files_json) as string[];
  const shared = await readAdmissionShared(r, { runId, withFiles: files.length > 0, except: taskId });
  return {
    now: input.now,
    task: { id: taskId, files, notBefore: task.not_before },
    maxConcurrency: input.maxConcurrency,
    ...shared,
  };
}

/**
 * The facts of the admission rule that are the run's, not one task's: the attempts holding a slot
 * (their task ids) and — when the tasks asked about declare files — the tasks in flight with theirs.
 */
export async function readAdmissionShared(
  r: Pick<StoreReader, 'all'>,
  input: { runId: string; withFiles: boolean; except?: string },
): Promise<Pick<AdmissionFacts, 'occupying' | 'inFlight'>> {
  const { runId } = input;
  const occupying = await r.all<{ task_id: string }>(
    `SELECT d.task_id FROM delegations d JOIN runtimes rt ON rt.run_id = d.run_id AND rt.id = d.runtime_id
     WHERE d.run_id = ? AND d.status = 'RUNNING' AND rt.ended_at IS NULL AND (rt.holder IS NULL OR rt.holder <> ?)
     ORDER BY d.started_at, d.task_id`,
    [runId, MANUAL_HOLDER],
  );
  const inFlight = !input.withFiles
    ? []
    : await r.all<{ id: string; files_json: string }>(
        `SELECT id, files_json FROM tasks WHERE run_id = ? AND status IN ('running', 'verifying') AND files_json <> '[]' AND id <> ?
         ORDER BY ordinal`,
        [runId, input.except ?? ''],
      );
  return {
    occupying: occupying.map((o) => o.task_id),
    inFlight: inFlight.map((t) => ({ id: t.id, files: JSON.parse(t.files_json) as string[] })),
  };
}

/** The admission rule on the store's state: undefined when the task may start now. */
export async function readAdmission(
  r: Pick<StoreReader, 'get' | 'all'>,
  input: { runId: string; taskId: string; now: number; maxConcurrency: number },
): Promise<AdmissionRefusal | undefined> {
  return admissionRefusal(await readAdmissionFacts(r, input));
}
