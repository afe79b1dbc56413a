import type { FrozenWorkers } from '../../domain/frozenWorkers';
import { readRunSettings } from '../../queries/runs';
import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

/**
 * Sets the worker definitions a run runs with (docs/architecture.md, "Trust model"): at the
 * first resume of a run started before Baton froze them (`legacy`, from the config as it is
 * then), or adopted from the config at an approved config_changed gate. Announced as
 * `config:frozen`.
 */
export async function freezeRunWorkers(
  tx: StoreTx,
  input: { runId: string; workers: FrozenWorkers; why: 'legacy' | 'adopted'; gateId?: string },
  now: number,
): Promise<void> {
  const settings = await readRunSettings(tx, input.runId);
  await tx.run(`UPDATE runs SET config_json = ? WHERE id = ?`, [
    JSON.stringify({ ...settings, workers: input.workers }),
    input.runId,
  ]);
  await appendEvent(tx, input.runId, 'config:frozen', now, {
    digest: input.workers.digest,
    ...(settings.workers ? { previousDigest: settings.workers.digest } : {}),
    defaultWorker: input.workers.defaultWorker,
    workers: Object.keys(input.workers.workers).sort(),
    why: input.why,
    ...(input.gateId ? { gateId: input.gateId } : {}),
  });
}

/** The config digest a run last saw (told in a `config:changed` event): the same file is not told twice. */
export async function recordConfigSeen(tx: StoreTx, runId: string, configDigest: string): Promise<void> {
  const settings = await readRunSettings(tx, runId);
  if (!settings.workers || settings.workers.configSeen === configDigest) return;
  await tx.run(`UPDATE runs SET config_json = ? WHERE id = ?`, [
    JSON.stringify({ ...settings, workers: { ...settings.workers, configSeen: configDigest } }),
    runId,
  ]);
}
