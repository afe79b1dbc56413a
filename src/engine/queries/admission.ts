import { admissionRefusal, type AdmissionFacts, type AdmissionRefusal } from '../domain/admission';
import { MANUAL_HOLDER } from '../domain/workerLaunch';
import type { StoreReader } from '../store/port';

/** Whether a task may start now: the task, the run's limit, and whose slots count (a coordinator's own). */
export interface AdmissionQuestion {
  runId: string;
  taskId: string;
  now: number;
  maxConcurrency: number;
  holder?: string;
  /** The task's files and backoff as read in the caller's transaction (queries/tasks.ts, readTaskClaimFacts). */
  task: { files: readonly string[]; notBefore: number | null };
}

/**
 * What the admission rule (domain/admission.ts) needs about one task, read in the caller's
 * transaction so that the answer holds when it claims: the task's backoff and files, the
 * attempts holding a slot in the whole run (driven or claimed; a person's hand-off holds
 * none), and the other tasks in flight with the files they declare.
 */
export async function readAdmissionFacts(
  r: Pick<StoreReader, 'all'>,
  input: AdmissionQuestion,
): Promise<AdmissionFacts> {
  const { runId, taskId, task } = input;
  const { files } = task;
  const shared = await readAdmissionShared(r, {
    runId,
    withFiles: files.length > 0,
    except: taskId,
    ...(input.holder !== undefined ? { holder: input.holder } : {}),
  });
  return {
    now: input.now,
    task: { id: taskId, files, notBefore: task.notBefore },
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
  input: { runId: string; withFiles: boolean; except?: string; holder?: string },
): Promise<Pick<AdmissionFacts, 'occupying' | 'inFlight'>> {
  const { runId } = input;
  // A coordinator's slots are its own: the attempts another coordinator of the run drives take that one's.
  const others = input.holder !== undefined ? ` AND NOT ${HELD_BY_ANOTHER_COORDINATOR}` : '';
  const occupying = await r.all<{ task_id: string }>(
    `SELECT d.task_id FROM delegations d JOIN runtimes rt ON rt.run_id = d.run_id AND rt.id = d.runtime_id
     WHERE d.run_id = ? AND d.status = 'RUNNING' AND rt.ended_at IS NULL AND (rt.holder IS NULL OR rt.holder <> ?)${others}
     ORDER BY d.started_at, d.task_id`,
    [runId, MANUAL_HOLDER, ...(input.holder !== undefined ? [input.holder, input.holder] : [])],
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

/**
 * A runtime `rt` held by a coordinator of its run other than the one bound twice after it: the run's lease holder, or a
 * coordinator that joined the run (operations/coordinatorLease/runDrivers.ts). Its attempts are that one's to drive.
 */
export const HELD_BY_ANOTHER_COORDINATOR = `(EXISTS (SELECT 1 FROM run_drivers rd WHERE rd.run_id = rt.run_id
    AND rd.holder = rt.holder AND rd.left_at IS NULL AND rd.holder <> ?)
  OR EXISTS (SELECT 1 FROM coordinator_leases cl WHERE cl.run_id = rt.run_id
    AND cl.holder = rt.holder AND cl.released_at IS NULL AND cl.holder <> ?))`;

/** The admission rule on the store's state: undefined when the task may start now. */
export async function readAdmission(
  r: Pick<StoreReader, 'all'>,
  input: AdmissionQuestion,
): Promise<AdmissionRefusal | undefined> {
  return admissionRefusal(await readAdmissionFacts(r, input));
}
